// The file ledger: every file read and every file modified so far (by calls that ran and
// succeeded: a refused, cancelled or failed write modified nothing). It survives each
// compaction verbatim (a summary may forget a path; the ledger does not), and a rebuilt
// history carries it as a tagged block, so the next compaction folds it back in.
import { LEDGER_CLOSE, LEDGER_OPEN } from "./tags.ts";
import type { Message, ToolResultBlock, ToolUseBlock } from "../../messages/types.ts";
import { shellFiles, type ShellFiles } from "./shell-files.ts";
import { type FileLedger, emptyLedger, parseLedger } from "./ledger-record.ts";

export { shellFiles, type ShellFiles };
// The ledger's text (render, read back, fit to its cap) is in ./ledger-record.ts.
export { type FileLedger, boundedLedger, emptyLedger, ledgerSizes, modifiedLine, parseLedger, pathLineTokens, readLine, renderLedger, renderLedgerWithin } from "./ledger-record.ts";

const READ_TOOLS = new Set(["read", "read_file", "open", "view", "notebookread", "cat"]);
const WRITE_TOOLS = new Set(["write", "write_file", "edit", "edit_file", "multiedit", "create", "insert", "notebookedit", "apply_patch"]);
const PATH_KEYS = ["file_path", "path", "filename", "notebook_path", "file"];

function inputPath(input: Record<string, unknown>): string | undefined {
  for (const k of PATH_KEYS) if (typeof input[k] === "string" && input[k]) return input[k] as string;
  return undefined;
}

// Blocks are never mutated, and every compaction walks the same calls again: parse each once.
const filesByCall = new WeakMap<ToolUseBlock, ShellFiles>();

/** What one tool call read and modified. */
export function callFiles(use: ToolUseBlock): ShellFiles {
  let f = filesByCall.get(use);
  if (!f) {
    f = parseCallFiles(use);
    filesByCall.set(use, f);
  }
  return f;
}

function parseCallFiles(use: ToolUseBlock): ShellFiles {
  const input = (use.input ?? {}) as Record<string, unknown>;
  const name = use.name.toLowerCase();
  const path = inputPath(input);
  if (name === "str_replace_editor" || name === "str_replace_based_edit_tool") {
    if (!path) return { read: [], modified: [] };
    return input.command === "view" ? { read: [path], modified: [] } : { read: [], modified: [path] };
  }
  // SWE-agent's function-calling tools: open/create set the file that path-less edit/insert calls act on.
  if (READ_TOOLS.has(name)) return { read: path ? [path] : [], modified: [], ...(name === "open" && path ? { opened: path } : {}) };
  if (WRITE_TOOLS.has(name)) {
    if (path) return { read: [], modified: [path], ...(name === "create" ? { opened: path } : {}) };
    return { read: [], modified: [], ...(name === "edit" || name === "insert" ? { editsOpened: true } : {}) };
  }
  const command = input.command ?? input.cmd;
  if (typeof command === "string") return shellFiles(command);
  return { read: [], modified: [] };
}

export { LEDGER_CLOSE, LEDGER_OPEN };

const failedByResult = new WeakMap<ToolResultBlock, boolean>();

/** The last "exit code: N" line lethe's bash (and shells like it) end a result with. */
const EXIT_CODE = /(?:^|\n)exit code: ([^\n]+)\s*$/;

/**
 * Whether a call did not happen: no result (never run), an error result (refused by a permission
 * rule or the user, cancelled, failed), or a command that exited non-zero. Its files are neither
 * read nor modified: the ledger is what the model may rely on after a compaction.
 */
export function callFailed(result: ToolResultBlock | undefined): boolean {
  if (!result) return true;
  if (result.is_error === true) return true;
  // Blocks are never mutated, and each snip that removes a call reads its result again.
  let failed = failedByResult.get(result);
  if (failed === undefined) {
    const c = result.content;
    const text = typeof c === "string" ? c : Array.isArray(c) ? c.map((b) => (b.type === "text" ? b.text : "")).join("\n") : "";
    const code = EXIT_CODE.exec(text.slice(-200))?.[1]?.trim();
    failed = code !== undefined && code !== "0";
    failedByResult.set(result, failed);
  }
  return failed;
}

/** A ledger being read a message at a time: its paths, and the patches and file opened so far. */
export interface LedgerReading {
  ledger: FileLedger;
  patches: Map<string, string[]>;
  opened: string | undefined;
}

export const ledgerReading = (base: FileLedger = emptyLedger()): LedgerReading => ({ ledger: { read: new Set(base.read), modified: new Set(base.modified) }, patches: new Map(), opened: undefined });

/** The ledger of a history: the one carried by an earlier rebuild, plus every call since that happened. */
export function ledgerOf(history: readonly Message[], base: FileLedger = emptyLedger()): FileLedger {
  const r = ledgerReading(base);
  for (let i = 0; i < history.length; i++) readLedger(r, history[i]!, history[i + 1]);
  return r.ledger;
}

/**
 * ledgerOf's step: one message read into `r` (`next`, the message after it, holds its calls'
 * results). Plain loops, nothing allocated per message: a snip reads every message it removes.
 */
export function readLedger(r: LedgerReading, m: Message, next: Message | undefined): void {
  const l = r.ledger;
  if (m.role === "user") {
    if (typeof m.content === "string") {
      if (m.content.includes(LEDGER_OPEN)) parseLedger(m.content, l);
    } else for (const b of m.content) if (b.type === "text" && b.text.includes(LEDGER_OPEN)) parseLedger(b.text, l);
    return;
  }
  if (typeof m.content === "string") return;
  for (const use of m.content) {
    if (use.type !== "tool_use") continue;
    const f = callFiles(use);
    // Most calls touch no file: whether they ran is not read (their results, in a long snip, are many).
    if (f.read.length + f.modified.length === 0 && !f.patches && !f.applies?.length && !f.opened && !f.editsOpened) continue;
    // A call counts once its result says it ran: results answer in the next message.
    if (callFailed(resultOf(next, use.id))) continue;
    for (const p of f.read) l.read.add(p);
    for (const p of f.modified) l.modified.add(p);
    // Patches written now and applied later; SWE-agent's edits of the file opened last.
    if (f.patches) for (const [file, touched] of Object.entries(f.patches)) r.patches.set(file, touched);
    for (const file of f.applies ?? []) for (const p of r.patches.get(file) ?? r.patches.get(file.replace(/^\.\//, "")) ?? []) l.modified.add(p);
    if (f.opened) r.opened = f.opened;
    if (f.editsOpened && r.opened) l.modified.add(r.opened);
  }
}

/** The result answering call `id` in `next` when it is a user message (the last one, if it answers twice). */
function resultOf(next: Message | undefined, id: string): ToolResultBlock | undefined {
  if (next?.role !== "user" || typeof next.content === "string") return undefined;
  for (let j = next.content.length - 1; j >= 0; j--) {
    const b = next.content[j]!;
    if (b.type === "tool_result" && b.tool_use_id === id) return b;
  }
  return undefined;
}
