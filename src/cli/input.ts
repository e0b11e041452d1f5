// What the REPL reads: bracketed paste (a pasted block is one message), multi-line input
// (`\` + Enter, Alt+Enter, Shift+Enter where the terminal reports it), the prompt history kept
// per workspace across sessions, and Tab completion of slash commands. node:readline does the
// line editing; this module sits in front of its key handler.
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Interface } from "node:readline";

export const SLASH_COMMANDS = ["/compact", "/uncompact", "/model", "/context", "/cost", "/clear", "/resume", "/memory", "/init", "/help", "/exit", "/quit"] as const;

/** readline's completer: slash commands by prefix. */
export function completeCommand(line: string): [string[], string] {
  if (!line.startsWith("/") || /\s/.test(line)) return [[], line];
  const hits = SLASH_COMMANDS.filter((c) => c.startsWith(line.toLowerCase()));
  return [hits.length ? [...hits] : [], line];
}

/** A newline inside an entry, as shown (and kept) in readline's one-line history. */
export const NEWLINE_MARK = " ↵ ";

export const toHistoryLine = (text: string) => text.replace(/\r?\n/g, NEWLINE_MARK);
export const fromHistoryLine = (line: string) => line.split(NEWLINE_MARK).join("\n");

/** ~/.lethe/history/<sha256 of the workspace path, 16 hex>.jsonl: one JSON string per prompt. */
export function historyPath(home: string, workspace: string): string {
  return join(home, ".lethe", "history", `${createHash("sha256").update(workspace).digest("hex").slice(0, 16)}.jsonl`);
}

/** The newest `max` prompts, newest first (readline's order); corrupt lines are skipped. */
export function loadHistory(path: string, max = 1000): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  const out: string[] = [];
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0 && out.length < max; i--) {
    if (!lines[i]) continue;
    try {
      const v = JSON.parse(lines[i]!) as unknown;
      if (typeof v === "string" && v.trim() && out[out.length - 1] !== v) out.push(v);
    } catch {
      // a torn or foreign line: skip it
    }
  }
  return out;
}

/** Appends one prompt (a whole JSON line in one write, so concurrent sessions do not interleave). */
export function appendHistory(path: string, entry: string): void {
  try {
    mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
    appendFileSync(path, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  } catch {
    // history is a convenience: never fail a prompt over it
  }
}

export interface InputFront {
  /** The pasted blocks behind placeholders in the current line, by placeholder text. */
  expand(line: string): string;
  /** Stops intercepting (readline's own key handler is restored). */
  detach(): void;
}

/** A key as node:readline's keypress events describe it. */
export type Key = { name?: string; sequence?: string; meta?: boolean; ctrl?: boolean; shift?: boolean };

type KeyHandler = (str: string | undefined, key: Key | undefined) => void;

/**
 * Sits in front of readline's keypress handler on a terminal:
 * - a bracketed paste of several lines becomes a placeholder "[Pasted text #n +k lines]" in the
 *   line (expanded when the line is sent), so its newlines do not send it line by line;
 * - Alt+Enter and Shift+Enter (kitty/CSI-u `ESC[13;2u`) end the line with `\`, which the REPL
 *   reads as "continue on the next line";
 * - `shortcut` sees every other key first (Shift+Tab, Ctrl+O): true when it handled the key.
 */
export function attachInput(rl: Interface, stdin: NodeJS.ReadStream, out: NodeJS.WriteStream, shortcut?: (key: Key) => boolean): InputFront {
  const pastes = new Map<string, string>();
  let count = 0;
  let pasting: string[] | undefined;
  const readlineHandlers = stdin.listeners("keypress") as KeyHandler[];
  const forward: KeyHandler = (str, key) => {
    for (const h of readlineHandlers) h.call(stdin, str, key);
  };
  const onKey: KeyHandler = (str, key) => {
    if (key?.name === "paste-start") {
      pasting = [];
      return;
    }
    if (key?.name === "paste-end") {
      const text = (pasting ?? []).join("").replace(/\r\n?/g, "\n");
      pasting = undefined;
      if (!text.includes("\n")) {
        rl.write(text);
        return;
      }
      const lines = text.replace(/\n$/, "").split("\n").length;
      const label = `[Pasted text #${++count} +${lines} lines]`;
      pastes.set(label, text.replace(/\n$/, ""));
      rl.write(label);
      return;
    }
    if (pasting) {
      pasting.push(str ?? key?.sequence ?? "");
      return;
    }
    const seq = key?.sequence ?? "";
    if ((key?.name === "return" && key.meta) || seq === "\x1b[13;2u" || seq === "\x1b\r") {
      rl.write("\\");
      forward("\r", { name: "return", sequence: "\r" });
      return;
    }
    if (key && shortcut?.(key)) return;
    forward(str, key);
  };
  stdin.removeAllListeners("keypress");
  stdin.on("keypress", onKey);
  out.write("\x1b[?2004h");
  let attached = true;
  return {
    expand(line) {
      let s = line;
      for (const [label, text] of pastes) if (s.includes(label)) s = s.split(label).join(text);
      return s;
    },
    detach() {
      if (!attached) return;
      attached = false;
      out.write("\x1b[?2004l");
      stdin.off("keypress", onKey);
      for (const h of readlineHandlers) stdin.on("keypress", h);
    },
  };
}
