// A summary compaction, as the engine runs it: the compactor summarises and rebuilds, then the
// rebuilt history is repaired, validated, measured and logged as a resume point.
import type { Message } from "../messages/types.ts";
import { repair } from "../messages/invariants.ts";
import type { SummarizeEvent } from "../compaction/types.ts";
import { OverWindowError, type PrepareCall, type RequestReady } from "./contract.ts";
import { logSummary } from "./boundary-log.ts";
import { checked } from "./prepare.ts";
import { type EngineState, withEvents } from "./state.ts";

export function summarizeHistory(s: EngineState, history: Message[], kind: SummarizeEvent["kind"], call: PrepareCall, focus?: string): Promise<RequestReady> {
  return withEvents(s, async (events) => {
    const r = await s.compactor.compact(history, kind, call, focus);
    if (r.skipped) return { history: r.history, events, tokens: r.event.tokensBefore, threshold: s.threshold };
    const out = checked(repair(r.history).history);
    logSummary(s, r.event, out, history, r.summary);
    const tokens = (call.fixedTokens ?? 0) + s.counter.messages(out);
    return { history: out, events, tokens, threshold: s.threshold };
  });
}

/** The request, or OverWindowError when even the compacted history leaves the reply no room. */
export function ensureFits(s: EngineState, ready: RequestReady, compacted = true): RequestReady {
  const limit = s.window.contextWindow - Math.min(s.window.maxOutputTokens, s.config.threshold.maxOutputReserve);
  if (ready.tokens > limit) throw new OverWindowError(ready.tokens, limit, compacted, s.config.summary.auto === "ask" ? "ask" : "off");
  return ready;
}
