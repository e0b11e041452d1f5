// The work record: what the agent already did in a part of the history a snip removes, so that
// after the snip it does not try again what it tried before ("it repeats work after compaction").
// Commands with their outcome, and the agent's own latest conclusions, in a small deterministic
// block that each later snip folds forward (the ledger carries the files; this carries the work).
import { blocksOf, resultPlainText } from "../../messages/blocks.ts";
import type { Message, ToolResultBlock, ToolUseBlock } from "../../messages/types.ts";
import { exitStatus } from "../summary/digest.ts";
import { clippedLine } from "../../messages/one-line.ts";
import type { CommandOutcome, WorkRecord } from "./work-record.ts";

// The record's text (render, read back, fit to a budget) is in ./work-record.ts.
export { type CommandOutcome, type WorkRecord, carriedWorkOf, commandLineTokens, parseWork, renderWork, renderWorkWithin } from "./work-record.ts";

/** Longest command line kept (its first line, verbatim up to here). */
export const COMMAND_CHARS = 200;
/** Longest error line kept with a failed command. */
export const ERROR_CHARS = 120;

// Editor tools take a `command` too ("view", "str_replace"), but it is not a shell command.
const NOT_SHELL = new Set(["str_replace_editor", "str_replace_based_edit_tool", "todowrite", "todo_write", "task"]);

/** The shell command a tool call ran (bash, shell, execute, SWE-agent's commands), or undefined. */
export function shellCommandOf(use: ToolUseBlock): string | undefined {
  if (NOT_SHELL.has(use.name.toLowerCase())) return undefined;
  const input = (use.input ?? {}) as Record<string, unknown>;
  const c = input.command ?? input.cmd;
  if (typeof c === "string" && c.trim()) return c;
  if (Array.isArray(c) && c.every((x) => typeof x === "string") && c.length > 0) return c.join(" ");
  return undefined;
}

/** A command's line as a record keeps it: the first non-empty line, trimmed, clipped. */
export function commandLine(command: string): string {
  // Line by line up to the first non-blank one: a heredoc's command is kilobytes long.
  for (let from = 0; ; ) {
    const nl = command.indexOf("\n", from);
    const line = (nl < 0 ? command.slice(from) : command.slice(from, nl)).trim();
    if (line || nl < 0) return line.slice(0, COMMAND_CHARS);
    from = nl + 1;
  }
}

/**
 * The line of a failed command's output that says what went wrong: a Python-style exception
 * line (`ValueError: …`, the last of a traceback), else the first line naming an error.
 */
export function errorLine(output: string): string | undefined {
  const text = output.replace(/<\/?(returncode|output)>/g, "");
  // Line by line without splitting the whole output (a failed test run's is long): the last
  // exception line is looked for from the end, the first line naming an error from the start.
  let line: string | undefined;
  for (let end = text.length; ; ) {
    const nl = end > 0 ? text.lastIndexOf("\n", end - 1) : -1;
    const l = text.slice(nl + 1, end);
    if (/^\s*[\w.]*(?:Error|Exception|Exit)\b[^\n]*:/.test(l)) {
      line = l;
      break;
    }
    if (nl < 0) break;
    end = nl;
  }
  for (let from = 0; line === undefined; ) {
    const nl = text.indexOf("\n", from);
    const l = nl < 0 ? text.slice(from) : text.slice(from, nl);
    if (/error|fail|fatal|not found|denied|no such|invalid|cannot/i.test(l) && !/^Traceback \(most recent/.test(l.trim())) line = l;
    if (nl < 0) break;
    from = nl + 1;
  }
  const t = line?.trim();
  return t ? t.slice(0, ERROR_CHARS) : undefined;
}

// Blocks are never mutated, and the outcome of a call is read when its result arrives (to count
// its record line ahead, see ./prime.ts) and again by each snip that removes it: parse it once.
const outcomeByResult = new WeakMap<ToolResultBlock, { command: string; outcome: CommandOutcome | null }>();

/** How the shell command `command` ended, from its result (null: no command line to keep). */
export function outcomeOf(command: string, result: ToolResultBlock): CommandOutcome | null {
  const known = outcomeByResult.get(result);
  if (known !== undefined && known.command === command) return known.outcome;
  const text = resultPlainText(result.content);
  const { exit, error } = exitStatus(text, result.is_error);
  const o: CommandOutcome = { command: commandLine(command), exit };
  if (error) {
    const e = errorLine(text);
    if (e) o.error = e;
  }
  // Shared from here on (by every record that carries it): never changed.
  const outcome = o.command ? Object.freeze(o) : null;
  outcomeByResult.set(result, { command, outcome });
  return outcome;
}

/** Every shell command of a history with its outcome, oldest first (unanswered calls are left out). */
export function commandOutcomes(history: readonly Message[]): CommandOutcome[] {
  const pending = new Map<string, string>();
  const out: CommandOutcome[] = [];
  for (const m of history) readCommands(pending, out, m);
  return out;
}

/** commandOutcomes' step: one message's calls into `pending`, the outcomes of those its results answer into `out`. */
export function readCommands(pending: Map<string, string>, out: CommandOutcome[], m: Message): void {
  if (typeof m.content === "string") return;
  for (const b of m.content) {
    if (b.type === "tool_use") {
      const c = shellCommandOf(b);
      if (c !== undefined) pending.set(b.id, c);
    } else if (b.type === "tool_result") {
      const c = pending.get(b.tool_use_id);
      if (c === undefined) continue;
      pending.delete(b.tool_use_id);
      const o = outcomeOf(c, b);
      if (o) out.push(o);
    }
  }
}

/** The work record's settings. */
export interface WorkLimits {
  /** Commands kept (the newest). */
  commands: number;
  /** Conclusions kept (the assistant's newest texts) and the characters of each. */
  notes: number;
  noteChars: number;
}

export const WORK_LIMITS: WorkLimits = { commands: 30, notes: 2, noteChars: 300 };

/** The assistant's newest texts, oldest first, each on one line and clipped. */
function notesOf(history: readonly Message[], limits: WorkLimits): string[] {
  const out: string[] = [];
  for (let i = history.length - 1; i >= 0 && out.length < limits.notes; i--) {
    const note = noteOf(history[i]!, limits);
    if (note !== undefined) out.unshift(note);
  }
  return out;
}

/** An assistant message's text as a note (on one line, clipped), or undefined: another role, or no text. */
export function noteOf(m: Message, limits: WorkLimits = WORK_LIMITS): string | undefined {
  if (m.role !== "assistant") return undefined;
  const text = clippedLine(
    blocksOf(m)
      .map((b) => (b.type === "text" ? b.text : ""))
      .join(" "),
    limits.noteChars,
  );
  return text || undefined;
}

/** The record of a removed part, folded onto the one an earlier snip carried (newest kept). */
export function workRecordOf(removed: readonly Message[], before: WorkRecord | undefined, limits: WorkLimits = WORK_LIMITS): WorkRecord {
  return workRecordFrom(before, commandOutcomes(removed), removed, limits);
}

/** workRecordOf from what was read of the removed part: its commands' outcomes (the newest `limits.commands` suffice), and its messages whose notes count (its assistant messages suffice). */
export function workRecordFrom(before: WorkRecord | undefined, outcomes: readonly CommandOutcome[], noted: readonly Message[], limits: WorkLimits = WORK_LIMITS): WorkRecord {
  const commands = [...(before?.commands ?? []), ...outcomes.slice(-limits.commands)].slice(-limits.commands);
  const notes = [...(before?.notes ?? []), ...notesOf(noted, limits)].slice(-limits.notes);
  return { commands, notes };
}

