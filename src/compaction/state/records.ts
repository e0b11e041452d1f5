// The before/after accounting of compaction events, in one place: the engine writes it to the
// transcript's boundary lines, the agent loop reports it, the CLI prints it.
import type { CompactionEvent, CompactionKind } from "../types.ts";

/** A compaction's kind and its tokens before and after. */
export interface CompactionRecord {
  kind: CompactionKind;
  tokens_before: number;
  tokens_after: number;
  /** For kind "subagent": the kind of the compaction inside the subagent. */
  subagent_kind?: CompactionKind;
}

/**
 * Records for a batch of events from one prepare/compact: summary events carry their own
 * numbers; the cheap layers (which report only what they freed) are given before/after by
 * walking back from the tokens measured after the batch. A layer that freed nothing gets a record
 * only with `unfreed` (the transcript logs every boundary; reports leave such a layer out).
 */
export function compactionRecords(events: readonly CompactionEvent[], tokensAfter: number, opts: { unfreed?: boolean } = {}): Map<CompactionEvent, CompactionRecord> {
  const out = new Map<CompactionEvent, CompactionRecord>();
  let running = tokensAfter;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    // A preview changed nothing and an undo is no compaction: neither is a record.
    if ("tokensBefore" in e && e.kind !== "no_progress" && e.kind !== "compact_preview" && e.kind !== "uncompact") {
      out.set(e, { kind: e.kind, tokens_before: e.tokensBefore, tokens_after: e.tokensAfter });
      running = e.tokensBefore;
    } else if ((e.kind === "budget" || e.kind === "snip" || e.kind === "micro") && (e.freedTokens > 0 || opts.unfreed)) {
      out.set(e, { kind: e.kind, tokens_before: running + e.freedTokens, tokens_after: running });
      running += e.freedTokens;
    }
  }
  return out;
}

