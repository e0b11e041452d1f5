// Anthropic's server-side compaction (context_management edit `compact_20260112`, or a
// `compaction` request): the API answers with a `compaction` block whose content, encrypted
// content and signature must be sent back verbatim, and from then on it ignores every block
// before it. lethe carries such a block as it came and never edits it; what it counts, compacts
// and sends is what the server keeps: the history from the last compaction block on.
//
// A compaction block with null content is a compaction that failed; the server treats it as a
// no-op (nothing before it is dropped), so it is not where the server's context starts.
import type { CompactionBlock, ContentBlock, Message } from "./types.ts";

export type { CompactionBlock };

export const isCompaction = (b: unknown): b is CompactionBlock => typeof b === "object" && b !== null && (b as { type?: unknown }).type === "compaction";

/** A compaction block the server starts its context from (one that did not fail). */
const effective = (b: unknown): b is CompactionBlock => isCompaction(b) && typeof b.content === "string" && b.content !== "";

/** Where the server's context starts: [message, block] of the last effective compaction block, or null. */
export function serverStart(history: readonly Message[]): { message: number; block: number } | null {
  for (let i = history.length - 1; i >= 0; i--) {
    const c = history[i]?.content;
    if (!Array.isArray(c)) continue;
    for (let k = c.length - 1; k >= 0; k--) if (effective(c[k])) return { message: i, block: k };
  }
  return null;
}

/**
 * The history as the server keeps it: from the last compaction block on (the message holding it
 * starts with it). The same array when there is none, or when it already starts there.
 */
export function fromServerStart(history: readonly Message[]): readonly Message[] {
  let at: { message: number; block: number } | null;
  try {
    at = serverStart(history);
  } catch {
    return history; // an unreadable list: repair's input check says what is wrong with it
  }
  if (!at || (at.message === 0 && at.block === 0)) return history;
  const m = history[at.message]!;
  const head = at.block === 0 ? m : { ...m, content: (m.content as ContentBlock[]).slice(at.block) };
  return [head, ...history.slice(at.message + 1)];
}

/** The compaction block a history starts with (the server's summary of everything before), if any. */
export function leadingCompaction(history: readonly Message[]): CompactionBlock | undefined {
  const c = history[0]?.content;
  const b = Array.isArray(c) ? c[0] : undefined;
  return history[0]?.role === "assistant" && effective(b) ? b : undefined;
}
