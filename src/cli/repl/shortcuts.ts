// Keys the REPL owns, ahead of readline's line editing: Shift+Tab cycles the permission mode (as
// in Claude Code), Ctrl+O prints the last collapsed tool output in full. What they print goes
// above the prompt line (or the spinner), which is drawn again under it: what was typed stays.
import { clearScreenDown, cursorTo, moveCursor } from "node:readline";
import { stripVTControlCharacters } from "node:util";
import type { Key } from "../input.ts";
import type { PermissionMode } from "../permissions.ts";
import type { Style } from "../render.ts";
import type { Repl } from "./state.ts";

/** What each mode means, in the notice Shift+Tab prints. */
const MODE_NOTES: Record<PermissionMode, string> = {
  default: "asks before commands and edits",
  acceptEdits: "edits run without asking; commands still ask",
  plan: "read and plan only: nothing is run or changed",
  bypassPermissions: "runs everything without asking (deny rules still hold)",
};

/**
 * Shift+Tab's next mode: default → acceptEdits → plan → default. bypassPermissions joins the
 * cycle only for a session started in it (--yes, --permission-mode), as in Claude Code.
 */
export function nextMode(mode: PermissionMode, withBypass: boolean): PermissionMode {
  const cycle: PermissionMode[] = ["default", "acceptEdits", "plan", ...(withBypass ? (["bypassPermissions"] as const) : [])];
  return cycle[(cycle.indexOf(mode) + 1) % cycle.length]!;
}

/** The one line Shift+Tab prints: the mode now, and what it means. */
export function modeNotice(mode: PermissionMode, s: Style): string {
  return `${s.bold(`⏵ permissions: ${mode}`)} ${s.dim(`· ${MODE_NOTES[mode]} (shift+tab to cycle)`)}`;
}

/**
 * Writes whole lines above what the terminal shows now. `promptShown`: readline's line (the
 * prompt, or a question) is on screen: it is cleared and drawn again below, with what was typed.
 * Otherwise a turn runs: the spinner's line is overwritten (it draws itself again below).
 */
export function printAbove(repl: Repl, text: string, promptShown: boolean): void {
  const { out, rl, spinner } = repl;
  if (promptShown) {
    // From the cursor's row back to the prompt's first row (a long line wraps).
    moveCursor(out, 0, -rl.getCursorPos().rows);
    cursorTo(out, 0);
    clearScreenDown(out);
    out.write(`${text}\n`);
    // readline would move up from where the cursor was: it now starts on a fresh row.
    (rl as unknown as { prevRows: number }).prevRows = 0;
    rl.prompt(true);
  } else if (spinner.active) out.write(`\r\x1b[2K${text}\n`);
  else {
    repl.endLine();
    out.write(`${text}\n`);
  }
}

/** Handles a key the REPL owns (Shift+Tab, Ctrl+O); false leaves it to readline. */
export function handleShortcut(repl: Repl, key: Key, promptShown: boolean): boolean {
  const { s, session, view } = repl;
  if (key.name === "tab" && key.shift) {
    const mode = nextMode(session.cfg.policy.mode, repl.startMode === "bypassPermissions");
    session.setPermissionMode(mode);
    printAbove(repl, modeNotice(mode, s), promptShown);
    return true;
  }
  if (key.ctrl && key.name === "o") {
    const last = view.lastCollapsed();
    // A command's output may hold escape sequences: shown as text, they cannot move the cursor.
    const body = last && stripVTControlCharacters(last.text).replace(/[\x00-\x08\x0b-\x1f\x7f]/g, "").replace(/^/gm, "    ");
    const text = last ? `${s.dim(`── ${last.title}: all ${last.lines} lines ──`)}\n${body}` : s.dim("(no collapsed tool output to expand yet)");
    printAbove(repl, text, promptShown);
    return true;
  }
  return false;
}
