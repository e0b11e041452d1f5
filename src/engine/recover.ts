// engine.recover, the reactive path: the provider refused the prompt as too long (or too many
// bytes). Learn the server's real window, take attachments out for a byte limit, shrink fresh
// results, and summarise only when that was not enough.
import type { Message } from "../messages/types.ts";
import { repair } from "../messages/invariants.ts";
import { fromServerStart } from "../messages/compaction.ts";
import { autoCompactThreshold } from "../compaction/config/config.ts";
import type { SummarizeEvent, WindowLearnedEvent } from "../compaction/types.ts";
import { byteTarget, shrinkBytes, shrinkFresh, shrinkOnlyEvent } from "../compaction/layers/reactive.ts";
import type { Engine, PrepareCall, RequestReady } from "./contract.ts";
import { logLayer, logSummary } from "./boundary-log.ts";
import { noteRewrites } from "./lines.ts";
import { checked } from "./prepare.ts";
import { summarizeHistory } from "./summary.ts";
import { type EngineState, layerContext, withEvents } from "./state.ts";

/** No real server holds less than this; a figure that says so is a misreading, not a window. */
const MIN_LEARNED_WINDOW = 1_024;

/** Work to a smaller window from now on (never a larger one: only the user's setting can raise it). */
export function learnWindow(s: EngineState, contextWindow: number, cause: WindowLearnedEvent["cause"], reason: string): void {
  const next = Math.floor(contextWindow);
  if (!(next > 0) || next >= s.window.contextWindow) return;
  if (cause === "truncated" && next < MIN_LEARNED_WINDOW) return;
  const previous = s.window.contextWindow;
  s.window.contextWindow = next;
  // The reply's reserve must fit the smaller window too (as when the CLI is told a small one).
  s.window.maxOutputTokens = Math.min(s.window.maxOutputTokens, Math.floor(next / 4));
  s.threshold = autoCompactThreshold(s.window, s.config);
  const event: WindowLearnedEvent = { kind: "window_learned", contextWindow: next, previous, threshold: s.threshold, cause, reason };
  s.emit(event);
  // Learned between requests (observe): it goes out with the next request's events.
  if (cause === "truncated") s.unreported.push(event);
}

export function recoverFrom(s: EngineState, history: readonly Message[], error: Parameters<Engine["recover"]>[1], call: PrepareCall): Promise<RequestReady> {
  return withEvents(s, async (events) => {
    if (error.limitTokens && error.limitTokens < s.window.contextWindow) {
      learnWindow(s, error.limitTokens, "limit_error", `the server's context is ${error.limitTokens.toLocaleString("en-US")} tokens, not ${s.window.contextWindow.toLocaleString("en-US")}`);
    }
    const fixed = call.fixedTokens ?? 0;
    // Shrinking alone was enough: the history goes out without a summary.
    const done = (out: Message[], event: SummarizeEvent): RequestReady => {
      logSummary(s, event, out, history);
      s.emit(event);
      return { history: out, events, tokens: event.tokensAfter, threshold: s.threshold };
    };
    // What the server keeps: from its last compaction block on (the rest it ignores anyway).
    let source = repair(fromServerStart(history)).history;
    if (error.overBytes) {
      // A limit on bytes (413): attachments weigh megabytes and few tokens; take them out first.
      const target = byteTarget(source, error.limitBytes);
      const bytes = shrinkBytes(source, target);
      if (bytes.removed.length > 0) {
        noteRewrites(s.origins, source, bytes.history);
        source = checked(bytes.history);
        // Enough when it reached the target; otherwise the token path below shrinks further.
        if (bytes.bytesAfter <= target) {
          return done(source, shrinkOnlyEvent({ tokensBefore: fixed + s.counter.messages(history), tokensAfter: fixed + s.counter.messages(source), messagesBefore: history.length, messagesAfter: source.length, bytes }));
        }
      }
    }
    const over = error.actualTokens && error.limitTokens ? error.actualTokens - error.limitTokens : 0;
    const shrunk = shrinkFresh(source, layerContext(s, call), over);
    if (shrunk.event) {
      noteRewrites(s.origins, source, shrunk.history);
      const after = fixed + s.counter.messages(shrunk.history);
      logLayer(s, shrunk.event, { kind: "budget", tokens_before: after + shrunk.freedTokens, tokens_after: after });
      s.emit(shrunk.event);
      // Freed clearly more than the overage: retry without a summary.
      if (over > 0 && shrunk.freedTokens > over * 1.2 + s.window.maxOutputTokens * 0.1) {
        const out = checked(shrunk.history);
        return done(out, shrinkOnlyEvent({ tokensBefore: after + shrunk.freedTokens, tokensAfter: after, messagesBefore: history.length, messagesAfter: out.length }));
      }
    }
    const r = await summarizeHistory(s, shrunk.history, "reactive", call);
    return { ...r, events };
  });
}
