// The library's front door: one object an agent loop calls before each model request
// (beforeRequest, or the synchronous prepare for the cheap layers only), after each
// response (observe), when the provider refuses a prompt as too long (recover), and for
// /compact (compact). Side effects (disk, clock, model) are wired here, at the edge.
import { readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { Message } from "./messages/types.ts";
import { LetheInputError, checkHistory, checkMessage } from "./messages/input.ts";
import { checkUsage, configOf } from "./engine-options.ts";
import { repair, validate } from "./messages/invariants.ts";
import { type CompactionConfig, autoCompactThreshold } from "./compaction/config.ts";
import { prepare } from "./compaction/pipeline.ts";
import type { CompactionEvent, LayerContext, ModelWindow, SummarizeEvent, WindowLearnedEvent } from "./compaction/types.ts";
import { createCompactor } from "./compaction/compactor.ts";
import { indexNewCalls } from "./compaction/ledger.ts";
import { byteTarget, shrinkBytes, shrinkFresh, shrinkOnlyEvent } from "./compaction/reactive.ts";
import { type CompactionRecord, compactionRecords } from "./compaction/records.ts";
import { boundaryDetails } from "./compaction/boundary.ts";
import { createFileStore, createMemoryStore, resultFileName } from "./session/tool-results.ts";
import { createTokenCounter } from "./tokens/count.ts";
import { createContextMeter, usageInput } from "./tokens/meter.ts";
import { createTruncationDetector } from "./tokens/truncation.ts";
import { createFollower } from "./engine-follow.ts";

const MIN_LEARNED_WINDOW = 1_024;

import { type Engine, type EngineOptions, type EnginePrepareResult, InvariantError, OverWindowError, type PrepareCall, type RequestReady } from "./engine-contract.ts";
import { checkOptions } from "./engine-options.ts";

/** Events of layers that rewrite what was sent before (not only append to it). */
const REWRITES = new Set<string>(["budget", "snip", "micro", "summarize", "reactive"]);
export { InvariantError, OverWindowError, type Engine, type EngineOptions, type EnginePrepareResult, type PrepareCall, type RequestReady };

/** Creates the engine for one conversation. Bad options are a one-line LetheInputError. */
export function createEngine(opts: EngineOptions): Engine {
  checkOptions(opts);
  const config = configOf(opts);
  const window: ModelWindow = { contextWindow: opts.contextWindow, maxOutputTokens: opts.maxOutputTokens };
  const store = opts.store ?? (opts.sessionDir ? createFileStore(join(opts.sessionDir, "tool-results")) : createMemoryStore());
  const counter = createTokenCounter(undefined, { media: opts.media ?? (/^(?:gpt|o\d|chatgpt)/i.test(opts.model ?? "") ? "openai" : "anthropic") });
  const meter = createContextMeter({ counter, model: opts.model });
  const now = opts.now ?? Date.now;
  let threshold = autoCompactThreshold(window, config);
  const archivePath = opts.sessionDir ? join(opts.sessionDir, "transcript.jsonl") : undefined;
  const workspace = opts.workspace ?? process.cwd();
  const readFile =
    opts.readFile ??
    ((p: string) => {
      try {
        return readFileSync(isAbsolute(p) ? p : resolve(workspace, p), "utf8");
      } catch {
        return undefined;
      }
    });
  const emitted: CompactionEvent[] = [];
  // Whether a layer rewrote the history since the last observe (the truncation detector compares
  // growth, which a rewrite makes meaningless).
  let rewrote = false;
  const emit = (e: CompactionEvent) => {
    emitted.push(e);
    if (REWRITES.has(e.kind)) rewrote = true;
    opts.onEvent?.(e);
  };
  const compactor = createCompactor({
    window,
    config,
    counter,
    summarizer: opts.summarizer,
    mode: opts.summarizerMode,
    hooks: opts.hooks,
    archivePath,
    readFile,
    emit,
  });
  let lastResponseAt: number | undefined;
  const indexed = new WeakSet<Message>();
  // What budget moved to the store, so a rebuilt copy of the same history is not written again.
  const persisted: NonNullable<LayerContext["persisted"]> = new Map();

  const layerContext = (call: PrepareCall): LayerContext => ({
    window,
    config,
    tokens: counter,
    store,
    now: now(),
    lastResponseAt,
    archivePath,
    fixedTokens: call.fixedTokens ?? 0,
    archived: opts.transcriptHoldsHistory ?? false,
    persisted,
  });

  // Watches the reported input for a server that silently cuts the prompt to its own context.
  const truncation = createTruncationDetector();

  /** Estimate of a request minus thinking (servers may drop earlier turns' thinking from the input). */
  function visibleTokens(history: readonly Message[], fixedTokens: number): number {
    let n = fixedTokens;
    for (const m of history) {
      if (typeof m.content === "string" || m.role !== "assistant") n += counter.message(m);
      else for (const b of m.content) if (b.type !== "thinking" && b.type !== "redacted_thinking") n += counter.block(b);
    }
    return n;
  }

  function checked(history: Message[]): Message[] {
    const violations = validate(history);
    if (violations.length > 0) throw new InvariantError(violations);
    return history;
  }

  function record(e: CompactionEvent, history?: Message[], summary?: string, counted?: CompactionRecord, before?: readonly Message[], after?: readonly Message[]) {
    if (!opts.transcript) return;
    // What it removed and carried, when messages left (summaries, reactive, snip).
    const uuidOf = opts.transcript.uuidOf?.bind(opts.transcript);
    const what = before && (after ?? history) ? boundaryDetails(before, (after ?? history)!, uuidOf) : {};
    if ("tokensBefore" in e) {
      opts.transcript.appendBoundary({ kind: e.kind, tokens_before: e.tokensBefore, tokens_after: e.tokensAfter, history, summary, details: { ...e }, ...what });
    } else if (e.kind === "budget" || e.kind === "snip" || e.kind === "micro") {
      // A snip is a resume point: its head, and where in the transcript its kept tail starts (so
      // a resume reads the file from there, not from the start).
      const tailFrom = e.kind === "snip" && before && after ? uuidOf?.(before[e.to]!) : undefined;
      const resume = tailFrom !== undefined && e.kind === "snip" ? { head: after!.slice(0, e.from), tail_from: tailFrom } : {};
      // The cheap layers report what they freed; the numbers come from the tokens measured after them.
      opts.transcript.appendBoundary({ kind: e.kind, tokens_before: counted?.tokens_before ?? -1, tokens_after: counted?.tokens_after ?? -1, details: { ...e }, ...what, ...resume });
    }
  }

  // A host that passes its own full history every time pays for what is new, not for the session.
  const follower = createFollower();

  function prepareSync(input: readonly Message[], call: PrepareCall = {}): EnginePrepareResult {
    const history = follower.resolve(input);
    // Every request passes through repair first and validate last.
    const repaired = repair(history);
    // The file ledger is parsed a turn at a time, not all at once when a compaction walks it.
    indexNewCalls(repaired.history, indexed);
    const result = prepare(repaired.history, layerContext(call));
    // repair's output is valid; only a layer that changed something needs a second look.
    if (result.history !== repaired.history) checked(result.history);
    const measuredTokens = meter.measure(result.history, call.fixedTokens ?? 0);
    const records = result.events.length > 0 ? compactionRecords(result.events, measuredTokens) : undefined;
    for (const e of result.events) {
      record(e, undefined, undefined, records?.get(e), e.kind === "snip" ? repaired.history : undefined, e.kind === "snip" ? result.history : undefined);
      emit(e);
    }
    follower.remember(input, result.history);
    return { ...result, measuredTokens, fixes: repaired.fixes, overThreshold: measuredTokens > result.threshold };
  }

  async function summarise(history: Message[], kind: SummarizeEvent["kind"], call: PrepareCall, focus?: string): Promise<RequestReady> {
    const start = emitted.length;
    const r = await compactor.compact(history, kind, call, focus);
    if (r.skipped) return { history: r.history, events: emitted.slice(start), tokens: r.event.tokensBefore, threshold };
    const out = checked(repair(r.history).history);
    record(r.event, out, r.summary, undefined, history);
    const tokens = (call.fixedTokens ?? 0) + counter.messages(out);
    return { history: out, events: emitted.slice(start), tokens, threshold };
  }

  function ensureFits(ready: RequestReady, compacted = true): RequestReady {
    const limit = window.contextWindow - Math.min(window.maxOutputTokens, config.threshold.maxOutputReserve);
    if (ready.tokens > limit) throw new OverWindowError(ready.tokens, limit, compacted);
    return ready;
  }

  // Events from observe() (between requests) go out with the next request's events.
  const unreported: CompactionEvent[] = [];
  const since = (start: number) => [...unreported.splice(0), ...emitted.slice(start)];

  /** Work to a smaller window from now on (never a larger one: only the user's setting can raise it). */
  function learnWindow(contextWindow: number, cause: WindowLearnedEvent["cause"], reason: string) {
    const next = Math.floor(contextWindow);
    if (!(next > 0) || next >= window.contextWindow) return;
    // No real server holds less than this; a figure that says so is a misreading, not a window.
    if (cause === "truncated" && next < MIN_LEARNED_WINDOW) return;
    const previous = window.contextWindow;
    window.contextWindow = next;
    // The reply's reserve must fit the smaller window too (as when the CLI is told a small one).
    window.maxOutputTokens = Math.min(window.maxOutputTokens, Math.floor(next / 4));
    threshold = autoCompactThreshold(window, config);
    const event: WindowLearnedEvent = { kind: "window_learned", contextWindow: next, previous, threshold, cause, reason };
    emit(event);
    if (cause === "truncated") unreported.push(event);
  }

  async function recoverFrom(history: readonly Message[], error: Parameters<Engine["recover"]>[1], call: PrepareCall): Promise<RequestReady> {
    const start = emitted.length;
    if (error.limitTokens && error.limitTokens < window.contextWindow) {
      learnWindow(error.limitTokens, "limit_error", `the server's context is ${error.limitTokens.toLocaleString("en-US")} tokens, not ${window.contextWindow.toLocaleString("en-US")}`);
    }
    const ctx = layerContext(call);
    const fixed = call.fixedTokens ?? 0;
    // Shrinking alone was enough: the history goes out without a summary.
    const done = (out: Message[], event: SummarizeEvent): RequestReady => {
      record(event, out, undefined, undefined, history);
      emit(event);
      return { history: out, events: since(start), tokens: event.tokensAfter, threshold };
    };
    let source = repair(history).history;
    if (error.overBytes) {
      // A limit on bytes (413): attachments weigh megabytes and few tokens; take them out first.
      const target = byteTarget(source, error.limitBytes);
      const bytes = shrinkBytes(source, target);
      if (bytes.removed.length > 0) {
        source = checked(bytes.history);
        // Enough when it reached the target; otherwise the token path below shrinks further.
        if (bytes.bytesAfter <= target) {
          return done(source, shrinkOnlyEvent({ tokensBefore: fixed + counter.messages(history), tokensAfter: fixed + counter.messages(source), messagesBefore: history.length, messagesAfter: source.length, bytes }));
        }
      }
    }
    const over = error.actualTokens && error.limitTokens ? error.actualTokens - error.limitTokens : 0;
    const shrunk = shrinkFresh(source, ctx, over);
    if (shrunk.event) {
      const after = fixed + counter.messages(shrunk.history);
      record(shrunk.event, undefined, undefined, { kind: "budget", tokens_before: after + shrunk.freedTokens, tokens_after: after });
      emit(shrunk.event);
      // Freed clearly more than the overage: retry without a summary.
      if (over > 0 && shrunk.freedTokens > over * 1.2 + window.maxOutputTokens * 0.1) {
        const out = checked(shrunk.history);
        return done(out, shrinkOnlyEvent({ tokensBefore: after + shrunk.freedTokens, tokensAfter: after, messagesBefore: history.length, messagesAfter: out.length }));
      }
    }
    const r = await summarise(shrunk.history, "reactive", call);
    return { ...r, events: since(start) };
  }

  return {
    config,
    get threshold() {
      return threshold;
    },
    get contextWindow() {
      return window.contextWindow;
    },
    counter,
    meter,
    compactor,
    prepare: prepareSync,
    readStored(toolUseId) {
      if (typeof toolUseId !== "string") throw new LetheInputError("readStored", `needs a tool_use id string, got ${toolUseId === null ? "null" : typeof toolUseId}`);
      if (store.load) return store.load(toolUseId);
      const path = opts.sessionDir ? join(opts.sessionDir, "tool-results", resultFileName(toolUseId)) : undefined;
      try {
        return path ? readFileSync(path, "utf8") : undefined;
      } catch {
        return undefined;
      }
    },

    async beforeRequest(history, call = {}) {
      const start = emitted.length;
      const p = prepareSync(history, call);
      compactor.observeTurn(p.history, p.measuredTokens, threshold, call);
      if (!p.overThreshold) return { history: p.history, events: since(start), tokens: p.measuredTokens, threshold };
      if (config.summary.auto !== "on") {
        emit({ kind: "compact_suggested", tokens: p.measuredTokens, threshold });
        return ensureFits({ history: p.history, events: since(start), tokens: p.measuredTokens, threshold }, false);
      }
      const r = await summarise(p.history, "summarize", call);
      if (r.history !== p.history) follower.replaceOutput(r.history);
      return ensureFits({ ...r, events: since(start) });
    },

    async compact(history, call = {}) {
      const p = prepareSync(history, call);
      const r = await summarise(p.history, call.kind ?? "manual", call, call.focus);
      if (r.history !== p.history) follower.replaceOutput(r.history);
      return r;
    },

    async recover(history, error, call = {}) {
      // A host following its own full history sent what lethe made of it: the recovered
      // history stands for that from now on.
      const ours = follower.isLastOutput(history);
      const r = await recoverFrom(history, error, call);
      if (ours) follower.replaceOutput(r.history);
      return r;
    },

    observe(sent, reply, usage, call = {}) {
      checkHistory(sent, "observe: sent");
      checkMessage(reply, "observe: reply");
      usage = checkUsage(usage);
      lastResponseAt = now();
      if (rewrote) {
        rewrote = false;
        truncation.reanchor(usageInput(usage), visibleTokens(sent, call.fixedTokens ?? 0));
        meter.observe(sent, reply, usage, call.fixedTokens ?? 0);
        return;
      }
      const seen = truncation.observe(usageInput(usage), visibleTokens(sent, call.fixedTokens ?? 0), usage.output_tokens ?? 0);
      if (seen.kind === "truncated") {
        // The server cut the prompt to its own context and counted only what it kept (Ollama's
        // OpenAI endpoint does this silently): the window it evidently has becomes ours.
        learnWindow(seen.window, "truncated", seen.reason);
        return;
      }
      // A figure that may be a cap anchors nothing (the estimate, higher, stands meanwhile).
      if (seen.kind === "suspect") return;
      meter.observe(sent, reply, usage, call.fixedTokens ?? 0);
    },
  };
}
