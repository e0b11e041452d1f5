// Undo of the last summary compaction from what a transcript kept (the engine does it from memory:
// engine.uncompact): the live context just before that compaction's boundary, plus every message
// appended after it. Recording the result as a boundary with that history makes it the resume point.
import type { Message } from "../messages/types.ts";
import type { BoundaryEntry, TranscriptEntry } from "./transcript-format.ts";
import { resumeContext } from "./transcript-read.ts";

/** The compactions an undo can take back: those that rebuilt the history from a summary. */
const SUMMARY_KINDS = new Set(["summarize", "reactive", "manual", "subagent"]);

/** What undoing the transcript's last compaction gives. */
export interface TranscriptUndo {
  /** The history from before the compaction, then every message since. */
  history: Message[];
  /** The kind of compaction undone. */
  kind: string;
  /** The index of its boundary in the entries. */
  boundary: number;
}

/**
 * The history from before the last summary compaction in `entries`, with what came after it; or
 * undefined when the last resume point is not one (no compaction, or it was already undone).
 */
export function uncompactTranscript(entries: readonly TranscriptEntry[]): TranscriptUndo | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.type !== "boundary") continue;
    const b = e as BoundaryEntry;
    // The last resume point decides: a snip or an undo since means there is no compaction on top to take back.
    if (!Array.isArray(b.history) && !(Array.isArray(b.head) && typeof b.tail_from === "string")) continue;
    if (!Array.isArray(b.history) || !SUMMARY_KINDS.has(String(b.kind))) return undefined;
    const before = resumeContext(entries.slice(0, i));
    const since = resumeContext([{ ...b, history: [] }, ...entries.slice(i + 1)]);
    return { history: [...before, ...since], kind: String(b.kind), boundary: i };
  }
  return undefined;
}
