// The transcript's boundary lines: what each compaction removed and carried, and where a resume
// starts (a summary's rebuilt history; a snip's head and the uuid its kept tail starts at).
import type { Message } from "../messages/types.ts";
import type { TranscriptWriter } from "../session/transcript.ts";
import { boundaryDetails, snipDetails, snipLines } from "../compaction/state/boundary.ts";
import type { CompactionRecord } from "../compaction/state/records.ts";
import type { BudgetEvent, MicroEvent, SnipEvent, SummarizeEvent } from "../compaction/types.ts";
import { lineOf, lineUuidOf } from "./lines.ts";
import type { EngineState } from "./state.ts";

/** A summary (or a reactive shrink): its rebuilt history is a resume point. */
export function logSummary(s: EngineState, e: SummarizeEvent, history: Message[], before: readonly Message[], summary?: string): void {
  const t = s.transcript;
  if (!t) return;
  const what = boundaryDetails(before, history, lineUuidOf(t, s.origins));
  t.appendBoundary({ kind: e.kind, tokens_before: e.tokensBefore, tokens_after: e.tokensAfter, history, summary, details: { ...e }, ...what });
}

/**
 * A cheap layer, with the tokens measured around it (`counted`). A snip also records what it
 * removed (from its own input `before` and output `after`) and its resume point: its head as
 * sent (`sent`, after the layers that ran after it; default `after`), and the transcript uuid
 * where its kept tail starts.
 *
 * The line is a record of what the request holds, not part of it: the writer writes it after
 * prepare returns (TranscriptWriter.defer: while the request is on its way, and before any later
 * line), so working it out (the head's diff, the removed runs: a third of a snip's time) does not
 * delay the request. Every message it names was written before the request, as before.
 */
export function logLayer(s: EngineState, e: BudgetEvent | SnipEvent | MicroEvent, counted: CompactionRecord, before?: readonly Message[], after?: readonly Message[], sent: readonly Message[] | undefined = after): void {
  const t = s.transcript;
  if (!t) return;
  const { ledger: _ledger, ...details } = e as SnipEvent;
  const tokens = { tokens_before: counted.tokens_before, tokens_after: counted.tokens_after };
  if (typeof t.defer !== "function") return writeLayer(s, t, e, details, tokens, before, after, sent);
  // Messages are never mutated, but a history list may be the host's own, which it appends to
  // before the line is written: the lists are copied now (references only).
  const b = before?.slice();
  const a = after === before ? b : after?.slice();
  // Only a snip's line writes the head as sent.
  const h = e.kind !== "snip" ? undefined : sent === after ? a : sent?.slice();
  t.defer(() => writeLayer(s, t, e, details, tokens, b, a, h));
}

function writeLayer(s: EngineState, t: TranscriptWriter, e: BudgetEvent | SnipEvent | MicroEvent, details: object, tokens: { tokens_before: number; tokens_after: number }, before?: readonly Message[], after?: readonly Message[], sent?: readonly Message[]): void {
  const uuidOf = lineUuidOf(t, s.origins);
  const tailFrom = e.kind === "snip" && before && after ? uuidOf?.(before[e.to]!) : undefined;
  // A snip knows what it removed and rewrote: only those are looked at (the rest is the same
  // objects). With its head in the line, the lines it removed are written as runs (readers
  // rebuild the lists from them and what it carried from the head).
  const lines = tailFrom !== undefined && e.kind === "snip" ? lineOf(t, s.origins) : undefined;
  const what = !before || !after ? {} : e.kind === "snip" ? ((lines && snipLines(before, e.from, e.to, lines)) ?? snipDetails(before, after, e.from, e.to, uuidOf)) : boundaryDetails(before, after, uuidOf);
  const resume = tailFrom !== undefined && e.kind === "snip" ? { head: sent!.slice(0, e.from), tail_from: tailFrom } : {};
  // Snips are frequent: the whole ledger goes on summaries' boundaries and in the engine's state, not on each snip's (details leave it out).
  t.appendBoundary({ kind: e.kind, ...tokens, details, ...what, ...resume });
}
