// The library's front door: one object an agent loop calls before each model request
// (beforeRequest, or the synchronous prepare for the cheap layers only), after each response
// (observe), when the provider refuses a prompt as too long (recover), and for /compact
// (compact). This file wires the parts; each method's work is in a file of its own:
//   state.ts         what the engine holds, wired once from the options
//   prepare.ts       repair → budget, snip, micro → validate, measured once
//   summary.ts       a summary compaction, repaired, validated and logged
//   recover.ts       the reactive path, and learning a smaller window
//   observe.ts       usage after a reply; a server that truncates silently
//   boundary-log.ts  the transcript's boundary lines
//   lines.ts         the transcript line a message rewritten in place stands for
//   follower.ts      a host that passes its whole history each call pays for what is new
//   contract.ts      the types and errors; options.ts checks the options at the door
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LetheInputError } from "../messages/input.ts";
import { resultFileName } from "../session/tool-results.ts";
import { type CompactionPreview, type Engine, type EngineOptions, type EnginePrepareResult, InvariantError, OverWindowError, type PrepareCall, type RequestReady } from "./contract.ts";
import { checkOptions, configOf } from "./options.ts";
import { aheadOfNext, observeReply } from "./observe.ts";
import { prepareRequest } from "./prepare.ts";
import { learnWindow, recoverFrom } from "./recover.ts";
import { createState, withEvents } from "./state.ts";
import type { Message } from "../messages/types.ts";
import type { ModelError } from "../model/types.ts";
import { ensureFits, fitsWindow, summarizeHistory } from "./summary.ts";
import { UncompactError, checkFocus, previewCompaction, previewDraft, setWindow, uncompact } from "./steer.ts";
import { flush, saveMeter, settle, syncIn, syncOut } from "./stored.ts";
import { notOpen } from "./store-link.ts";
import type { EngineState } from "./state.ts";

/** Events after which the history is no longer the last one plus what is new: the state to keep. */
const REWRITES = new Set(["budget", "snip", "micro", "summarize", "reactive", "manual", "subagent", "uncompact"]);

/**
 * A call on a conversation store: the store's state and the host's new messages first, then
 * what the call queued, and a history a layer rewrote (a summary, a snip, cleared results)
 * saved as the conversation's state, so the next engine starts from it instead of redoing it.
 */
async function synced(s: EngineState, input: readonly Message[], fn: () => Promise<RequestReady>): Promise<RequestReady> {
  const link = s.link;
  if (!link) return fn();
  const view = await syncIn(s, link, input);
  let r: RequestReady;
  try {
    r = await fn();
  } catch (e) {
    await flush(link).catch(() => undefined);
    throw e;
  }
  return syncOut(s, link, view, r, r.events.some((e) => REWRITES.has(e.kind)));
}

export { InvariantError, OverWindowError, UncompactError, type CompactionPreview, type Engine, type EngineOptions, type EnginePrepareResult, type PrepareCall, type RequestReady };

/** Creates the engine for one conversation. Bad options are a one-line LetheInputError. */
export function createEngine(opts: EngineOptions): Engine {
  checkOptions(opts);
  const s = createState(opts, configOf(opts));
  s.learnLimit = (n) => learnWindow(s, n, "limit_error", `a summary request was refused: the server's context is ${n.toLocaleString("en-US")} tokens, not ${s.window.contextWindow.toLocaleString("en-US")}`);
  const { follower, compactor, config } = s;
  const readStored = (toolUseId: string): string | undefined => {
    if (typeof toolUseId !== "string") throw new LetheInputError("readStored", `needs a tool_use id string, got ${toolUseId === null ? "null" : typeof toolUseId}`);
    if (s.store.load) return s.store.load(toolUseId);
    const path = opts.sessionDir ? join(opts.sessionDir, "tool-results", resultFileName(toolUseId)) : undefined;
    try {
      return path ? readFileSync(path, "utf8") : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    config,
    get threshold() {
      return s.threshold;
    },
    get contextWindow() {
      return s.window.contextWindow;
    },
    counter: s.counter,
    meter: s.meter,
    compactor,
    // The methods work on lethe's Message; the contract types them over the host's own message type (MessageLike).
    prepare: ((history: readonly Message[], call?: PrepareCall) => {
      if (s.link && !s.link.conversation) notOpen();
      return prepareRequest(s, history, call);
    }) as unknown as Engine["prepare"],
    readStored,
    async loadStored(toolUseId) {
      const here = readStored(toolUseId);
      if (here !== undefined || !s.link) return here;
      const c = s.link.conversation ?? (await s.link.store.conversation(s.link.id));
      return c.loadResult(toolUseId);
    },

    beforeRequest: ((history: readonly Message[], call: PrepareCall = {}) =>
      synced(s, history, () => withEvents(s, async (events) => {
        const p = prepareRequest(s, history, call);
        compactor.observeTurn(p.history, p.measuredTokens, s.threshold, call);
        const ready: RequestReady = { history: p.history, events, tokens: p.measuredTokens, threshold: s.threshold };
        // After a switch to a smaller window (setWindow) the request must fit it, whatever auto says.
        const switchedFrom = s.steer.switchedFrom;
        s.steer.switchedFrom = undefined;
        if (!p.overThreshold) return ready;
        if (config.summary.auto !== "on" && switchedFrom === undefined) {
          s.emit({ kind: "compact_suggested", tokens: p.measuredTokens, threshold: s.threshold });
          return ensureFits(s, ready, false);
        }
        if (switchedFrom === undefined && fitsWindow(s, ready.tokens) && call.deferSummary?.()) {
          s.emit({ kind: "summary_deferred", tokens: p.measuredTokens, threshold: s.threshold });
          s.transcript?.appendEvent?.("summary_deferred", { tokens: p.measuredTokens, threshold: s.threshold });
          return ready;
        }
        call.onSummaryStart?.();
        const r = await summarizeHistory(s, p.history, "summarize", switchedFrom ? { ...call, summaryWindow: switchedFrom } : call);
        if (r.history !== p.history) follower.replaceOutput(r.history);
        return ensureFits(s, { ...r, events });
      }))) as unknown as Engine["beforeRequest"],

    compact: ((history: readonly Message[], call: PrepareCall & { kind?: "manual" | "subagent"; focus?: string; preview?: CompactionPreview } = {}) =>
      synced(s, history, async () => {
        checkFocus(call.focus, "compact");
        const p = prepareRequest(s, history, call);
        const given = previewDraft(s, call.preview, p.history);
        const { preview: _preview, ...shape } = call;
        const r = await summarizeHistory(s, p.history, call.kind ?? "manual", shape, given ? call.preview!.focus : call.focus, given);
        if (r.history !== p.history) follower.replaceOutput(r.history);
        return r;
      })) as unknown as Engine["compact"],

    recover: ((history: readonly Message[], error: ModelError, call: PrepareCall = {}) =>
      synced(s, history, async () => {
        // A host following its own full history sent what lethe made of it: the recovered
        // history stands for that from now on.
        const ours = follower.isLastOutput(history);
        const r = await recoverFrom(s, history, error, call);
        if (ours) follower.replaceOutput(r.history);
        return r;
      })) as unknown as Engine["recover"],

    preview: ((history: readonly Message[], call: PrepareCall & { focus?: string } = {}) => {
      if (s.link && !s.link.conversation) notOpen();
      // Not inside withEvents: its summary call (paid for) goes out with the next request's events.
      return previewCompaction(s, history, call);
    }) as unknown as Engine["preview"],

    setWindow: (contextWindow, maxOutputTokens) => setWindow(s, contextWindow, maxOutputTokens),

    uncompact: ((history: readonly Message[], call?: PrepareCall) => synced(s, history, () => uncompact(s, history, call))) as unknown as Engine["uncompact"],

    observe: (sent, reply, usage, call = {}) => {
      observeReply(s, sent as readonly Message[], reply as Message, usage, call);
      aheadOfNext(s, sent as readonly Message[], reply as Message, call);
      if (s.link) saveMeter(s, s.link);
    },

    flush: async () => {
      // A background summary still in flight is paid for: its request line is written before this resolves.
      await compactor.settled();
      if (s.link) await settle(s.link);
    },
  };
}
