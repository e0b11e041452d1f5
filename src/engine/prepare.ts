// engine.prepare: every request starts where the server's context does (its last compaction
// block), passes through repair, then the cheap layers (budget,
// snip, micro), and validate last; measured once, and its boundaries logged.
import type { Message } from "../messages/types.ts";
import { repair, validate } from "../messages/invariants.ts";
import { fromServerStart } from "../messages/compaction.ts";
import { prepare } from "../compaction/pipeline.ts";
import { indexNewMessages } from "../compaction/state/prime.ts";
import { compactionRecords } from "../compaction/state/records.ts";
import { type EnginePrepareResult, InvariantError, type PrepareCall } from "./contract.ts";
import { logLayer } from "./boundary-log.ts";
import { noteRewrite, noteRewrites } from "./lines.ts";
import { type EngineState, layerContext } from "./state.ts";

/** The history, or InvariantError when a step left it invalid (a bug: never sent). */
export function checked(history: Message[]): Message[] {
  const violations = validate(history);
  if (violations.length > 0) throw new InvariantError(violations);
  return history;
}

export function prepareRequest(s: EngineState, input: readonly Message[], call: PrepareCall = {}): EnginePrepareResult {
  // What the server keeps: from its last compaction block on; the blocks before it it ignores,
  // so they are neither counted, compacted nor sent (the transcript has them).
  const history = fromServerStart(s.follower.resolve(input));
  const repaired = repair(history);
  // The file ledger and the work record are read a turn at a time, not all at once when a compaction walks them.
  indexNewMessages(repaired.history, s.indexed, s.counter);
  const result = prepare(repaired.history, layerContext(s, call));
  // repair's output is valid; only a layer that changed something needs a second look.
  if (result.history !== repaired.history) checked(result.history);
  // The pipeline measured the result with the engine's meter (layerContext): measured once.
  const measuredTokens = result.tokens;
  const records = result.events.length > 0 ? compactionRecords(result.events, measuredTokens, { unfreed: true }) : undefined;
  // Budget and micro rewrite messages in place, snip the head's last: a boundary that later removes one names its line.
  // A snip's boundary is worked out from its own input and output (budget may have rewritten a kept message before it).
  let snipIn: Message[] | undefined, snipOut: Message[] | undefined;
  if (result.events.length > 0) {
    let before = repaired.history;
    for (const r of result.reports) {
      if (r.event?.kind === "snip") {
        noteRewrite(s.origins, before[r.event.from - 1]!, r.history[r.event.from - 1]!);
        snipIn = before;
        snipOut = r.history;
      } else if (r.event) noteRewrites(s.origins, before, r.history);
      before = r.history;
    }
  }
  for (const e of result.events) {
    const snip = e.kind === "snip";
    logLayer(s, e, records!.get(e)!, snip ? snipIn : undefined, snip ? snipOut : undefined, snip ? result.history : undefined);
    s.emit(e);
  }
  s.follower.remember(input, result.history);
  return { ...result, measuredTokens, fixes: repaired.fixes, overThreshold: measuredTokens > result.threshold };
}
