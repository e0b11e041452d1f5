// Retention (SPEC.md, "Measuring"): on each context after a compaction that removed messages (a
// summary's rebuild, a snip, a reactive shrink), the share of the items that existed before it
// that are still there verbatim.
//
// Items come from the ORIGINAL recorded history up to that request (not from the policy's own
// context, which earlier compactions may already have thinned):
//   - user-typed messages: each user message's own text (its text blocks, not tool results),
//     newest first within a 20,000-token budget (exact o200k). Found and selected here, by the
//     benchmark's own code (typedUserMessages, newestWithin), NOT by the engine's
//     userMessagesOf/selectUserMessages (the compaction state's retain.ts): lethe carries what those
//     select, so scoring with them would score a selection bug as 100% retained;
//   - the latest request: the newest of them;
//   - paths of files modified and of files read: filesTouched (items.ts), the benchmark's own
//     definition (file tool calls and the obvious shell reads and writes), NOT the engine's file
//     ledger, which lethe carries into every rebuild: scoring with it would score a ledger bug
//     (a file it never lists) as retained;
//   - the last 30 shell commands: shellCommands (items.ts), again the benchmark's own, not the
//     engine's work record. A command is retained when its line (first non-blank line, first
//     200 characters) is in the context and, when it failed, the line saying what went wrong
//     (first 120 characters) too. A success's outcome is not checked (there is no line to look
//     for); a command whose tool result is still there has both.
// An item is retained when it occurs as a substring of the rebuilt context's text: every block of
// every message (text, thinking, tool_use name and input JSON, and a shell call's command line
// unescaped, tool_result content).
import type { Message } from "../../src/messages/types.ts";
import { commandText, filesTouched, type ShellCommand, shellCommands } from "./items.ts";

/** Shell commands before a compaction that retention looks for. */
export const RETENTION_COMMANDS = 30;

export const RETENTION_USER_BUDGET = 20_000;

export interface RetentionItems {
  latest: string | undefined;
  userMessages: string[];
  modified: string[];
  read: string[];
  commands: ShellCommand[];
}

/** Counts the tokens of a string (the replay passes its exact o200k counter). */
export interface TextTokens {
  text(text: string): number;
}

/**
 * The messages the user typed in a recorded history, oldest first: for every user message, its
 * non-blank text blocks joined by newlines (a string content as it is); tool results and user
 * messages without text (tool results only) are not typed messages. The recorded history is the
 * corpus as recorded, which holds nothing any policy wrote, so every text there is the user's.
 */
export function typedUserMessages(history: readonly Message[]): string[] {
  const out: string[] = [];
  for (const m of history) {
    if (m.role !== "user") continue;
    const texts: string[] = [];
    if (typeof m.content === "string") texts.push(m.content);
    else for (const b of m.content) if (b.type === "text") texts.push(b.text);
    const typed = texts.filter((t) => t.trim() !== "");
    if (typed.length > 0) out.push(typed.join("\n"));
  }
  return out;
}

/**
 * The newest messages whose tokens together fit `budget`, oldest first. The newest is always
 * among them (whole, even when it alone is over the budget: then it is the only one); going back
 * from it, each older message is taken while the running total stays within the budget, and the
 * first that does not fit ends the walk (an older, smaller one after it is not taken).
 */
export function newestWithin(messages: readonly string[], budget: number, counter: TextTokens): string[] {
  const n = messages.length;
  if (n === 0) return [];
  let used = counter.text(messages[n - 1]!);
  let from = n - 1;
  while (from > 0) {
    const t = counter.text(messages[from - 1]!);
    if (used + t > budget) break;
    used += t;
    from--;
  }
  return messages.slice(from);
}

export function retentionItems(original: readonly Message[], counter: TextTokens, budget = RETENTION_USER_BUDGET): RetentionItems {
  const userMessages = newestWithin(typedUserMessages(original), budget, counter);
  const files = filesTouched(original);
  return {
    latest: userMessages[userMessages.length - 1],
    userMessages,
    modified: files.modified,
    read: files.read,
    commands: shellCommands(original).slice(-RETENTION_COMMANDS),
  };
}

/** Everything the model reads in a history, as one string. */
export function contextText(history: readonly Message[]): string {
  const parts: string[] = [];
  for (const m of history) {
    if (typeof m.content === "string") {
      parts.push(m.content);
      continue;
    }
    for (const b of m.content) {
      switch (b.type) {
        case "text":
          parts.push(b.text);
          break;
        case "thinking":
          parts.push(b.thinking);
          break;
        case "tool_use": {
          parts.push(b.name, JSON.stringify(b.input ?? {}));
          // The command as the model sees it, unescaped (JSON spells a quote \").
          const c = commandText(b);
          if (c !== undefined) parts.push(c);
          break;
        }
        case "tool_result":
          if (typeof b.content === "string") parts.push(b.content);
          else if (b.content) for (const c of b.content) if (c.type === "text") parts.push(c.text);
          break;
        default:
          break;
      }
    }
  }
  return parts.join("\n");
}

export type RetentionKey = "latest_request_pct" | "user_messages_pct" | "modified_files_pct" | "read_files_pct" | "commands_pct";
export const RETENTION_KEYS: readonly RetentionKey[] = ["latest_request_pct", "user_messages_pct", "modified_files_pct", "read_files_pct", "commands_pct"];

const commandKept = (c: ShellCommand, text: string): boolean => text.includes(c.command) && (c.error === undefined || text.includes(c.error));

/** Percentages for one compaction; null for a category with no item before it. */
export type RetentionSample = Record<RetentionKey, number | null>;

const pct = (items: readonly string[], text: string): number | null =>
  items.length === 0 ? null : (100 * items.filter((x) => text.includes(x)).length) / items.length;

export function measureRetention(items: RetentionItems, rebuilt: readonly Message[]): RetentionSample {
  return measureRetentionText(items, contextText(rebuilt));
}

export function measureRetentionText(items: RetentionItems, text: string): RetentionSample {
  return {
    latest_request_pct: pct(items.latest === undefined ? [] : [items.latest], text),
    user_messages_pct: pct(items.userMessages, text),
    modified_files_pct: pct(items.modified, text),
    read_files_pct: pct(items.read, text),
    commands_pct: items.commands.length === 0 ? null : (100 * items.commands.filter((c) => commandKept(c, text)).length) / items.commands.length,
  };
}

/** One compaction, for the report: kept/total per kind and a few of the items that were lost. */
export interface CompactionRecord {
  session: string;
  request: number;
  kind: string;
  latest: boolean | null;
  user_messages: string;
  modified_files: string;
  read_files: string;
  commands: string;
  lost_modified: string[];
  lost_read: string[];
  lost_commands: string[];
}

export function compactionRecord(session: string, request: number, kind: string, items: RetentionItems, text: string): CompactionRecord {
  const kept = (xs: readonly string[]) => xs.filter((x) => text.includes(x));
  const lost = (xs: readonly string[]) => xs.filter((x) => !text.includes(x));
  return {
    session,
    request,
    kind,
    latest: items.latest === undefined ? null : text.includes(items.latest),
    user_messages: `${kept(items.userMessages).length}/${items.userMessages.length}`,
    modified_files: `${kept(items.modified).length}/${items.modified.length}`,
    read_files: `${kept(items.read).length}/${items.read.length}`,
    commands: `${items.commands.filter((c) => commandKept(c, text)).length}/${items.commands.length}`,
    lost_modified: lost(items.modified).slice(0, 5),
    lost_read: lost(items.read).slice(0, 5),
    lost_commands: items.commands.filter((c) => !commandKept(c, text)).slice(0, 3).map((c) => (c.error ? `${c.command} → ${c.error}` : c.command)),
  };
}

/** Mean over compactions, per category (compactions without items in a category do not count for it). */
export interface RetentionAcc {
  compactions: number;
  sum: Record<RetentionKey, number>;
  n: Record<RetentionKey, number>;
}

export const newRetentionAcc = (): RetentionAcc => ({
  compactions: 0,
  sum: { latest_request_pct: 0, user_messages_pct: 0, modified_files_pct: 0, read_files_pct: 0, commands_pct: 0 },
  n: { latest_request_pct: 0, user_messages_pct: 0, modified_files_pct: 0, read_files_pct: 0, commands_pct: 0 },
});

export function addRetention(acc: RetentionAcc, s: RetentionSample): void {
  acc.compactions++;
  for (const k of RETENTION_KEYS) {
    const v = s[k];
    if (v === null) continue;
    acc.sum[k] += v;
    acc.n[k]++;
  }
}

export function retentionResult(acc: RetentionAcc): Record<RetentionKey, number | null> | null {
  if (acc.compactions === 0) return null;
  const out = {} as Record<RetentionKey, number | null>;
  for (const k of RETENTION_KEYS) out[k] = acc.n[k] === 0 ? null : Number((acc.sum[k] / acc.n[k]).toFixed(2));
  return out;
}
