// Retention (SPEC.md, "Measuring"): on each context rebuilt by a summary compaction, the share of
// the items that existed before it that are still there verbatim.
//
// Items come from the ORIGINAL recorded history up to that request (not from the policy's own
// context, which earlier compactions may already have thinned):
//   - user-typed messages: user text blocks that are not tool results (src/compaction/retain.ts
//     userMessagesOf), newest first within a 20,000-token budget (selectUserMessages, exact o200k);
//   - the latest request: the newest of them;
//   - paths of files modified and of files read (ledgerOf: tool calls and the usual shell idioms).
// An item is retained when it occurs as a substring of the rebuilt context's text: every block of
// every message (text, thinking, tool_use name and input JSON, tool_result content).
import type { Message } from "../../src/messages/types.ts";
import { ledgerOf } from "../../src/compaction/ledger.ts";
import { selectUserMessages, userMessagesOf } from "../../src/compaction/retain.ts";
import type { TokenCounter } from "../../src/tokens/count.ts";

export const RETENTION_USER_BUDGET = 20_000;

export interface RetentionItems {
  latest: string | undefined;
  userMessages: string[];
  modified: string[];
  read: string[];
}

export function retentionItems(original: readonly Message[], counter: TokenCounter, budget = RETENTION_USER_BUDGET): RetentionItems {
  const sel = selectUserMessages(userMessagesOf(original), budget, counter);
  const ledger = ledgerOf(original);
  return {
    latest: sel.latest,
    userMessages: sel.latest === undefined ? sel.kept : [...sel.kept, sel.latest],
    modified: [...ledger.modified],
    read: [...ledger.read],
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
        case "tool_use":
          parts.push(b.name, JSON.stringify(b.input ?? {}));
          break;
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

export type RetentionKey = "latest_request_pct" | "user_messages_pct" | "modified_files_pct" | "read_files_pct";
export const RETENTION_KEYS: readonly RetentionKey[] = ["latest_request_pct", "user_messages_pct", "modified_files_pct", "read_files_pct"];

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
  };
}

/** One compaction, for the report: kept/total per kind and a few of the items that were lost. */
export interface CompactionRecord {
  session: string;
  request: number;
  latest: boolean | null;
  user_messages: string;
  modified_files: string;
  read_files: string;
  lost_modified: string[];
  lost_read: string[];
}

export function compactionRecord(session: string, request: number, items: RetentionItems, text: string): CompactionRecord {
  const kept = (xs: readonly string[]) => xs.filter((x) => text.includes(x));
  const lost = (xs: readonly string[]) => xs.filter((x) => !text.includes(x));
  return {
    session,
    request,
    latest: items.latest === undefined ? null : text.includes(items.latest),
    user_messages: `${kept(items.userMessages).length}/${items.userMessages.length}`,
    modified_files: `${kept(items.modified).length}/${items.modified.length}`,
    read_files: `${kept(items.read).length}/${items.read.length}`,
    lost_modified: lost(items.modified).slice(0, 5),
    lost_read: lost(items.read).slice(0, 5),
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
  sum: { latest_request_pct: 0, user_messages_pct: 0, modified_files_pct: 0, read_files_pct: 0 },
  n: { latest_request_pct: 0, user_messages_pct: 0, modified_files_pct: 0, read_files_pct: 0 },
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
