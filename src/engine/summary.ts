// A summary compaction, as the engine runs it: the compactor summarises and rebuilds, then the
// rebuilt history is repaired, validated, measured and logged as a resume point.
import type { Message } from "../messages/types.ts";
import { repair } from "../messages/invariants.ts";
import type { SummarizeEvent } from "../compaction/types.ts";
import type { SummaryDraft } from "../compaction/summary/compactor.ts";
import { OverWindowError, type PrepareCall, type RequestReady } from "./contract.ts";
import { logSummary } from "./boundary-log.ts";
import { checked } from "./prepare.ts";
import { rememberCompaction } from "./steer.ts";
import { type EngineState, withEvents } from "./state.ts";

/** `given`: a summary written before (an approved preview) instead of a new call. */
export function summarizeHistory(s: EngineState, history: Message[], kind: SummarizeEvent["kind"], call: PrepareCall, focus?: string, given?: SummaryDraft): Promise<RequestReady> {
  return withEvents(s, async (events) => {
    const r = await s.compactor.compact(history, kind, call, focus, given);
    if (r.skipped) return { history: r.history, events, tokens: r.event.tokensBefore, threshold: s.threshold };
    const out = checked(repair(r.history).history);
    logSummary(s, r.event, out, history, r.summary);
    rememberCompaction(s, kind, history, out);
    const tokens = (call.fixedTokens ?? 0) + s.counter.messages(out);
    return { history: out, events, tokens, threshold: s.threshold };
  });
}

/** What a request may carry in this window: the rest is the reply's reserve. */
const requestLimit = (s: EngineState) => s.window.contextWindow - Math.min(s.window.maxOutputTokens, s.config.threshold.maxOutputReserve);

/** Whether a request of `tokens` leaves the reply its reserve. */
export const fitsWindow = (s: EngineState, tokens: number): boolean => tokens <= requestLimit(s);

/** The request, or OverWindowError when even the compacted history leaves the reply no room. */
export function ensureFits(s: EngineState, ready: RequestReady, compacted = true): RequestReady {
  const limit = requestLimit(s);
  if (ready.tokens > limit) throw new OverWindowError(ready.tokens, limit, compacted, s.config.summary.auto === "ask" ? "ask" : "off");
  return ready;
}
