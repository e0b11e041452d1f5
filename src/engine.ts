// The library's front door: one object an agent loop calls before each model request
// (beforeRequest, or the synchronous prepare for the cheap layers only), after each
// response (observe), when the provider refuses a prompt as too long (recover), and for
// /compact (compact). Side effects (disk, clock, model) are wired here, at the edge.
import { LetheError } from "./errors.ts";
import { readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { Message } from "./messages/types.ts";
import { LetheInputError, checkHistory, checkMessage } from "./messages/input.ts";
import { type Fix, type Violation, repair, validate } from "./messages/invariants.ts";
import { type CompactionConfig, type DeepPartial, autoCompactThreshold, resolveConfig } from "./compaction/config.ts";
import { type PrepareResult, prepare } from "./compaction/pipeline.ts";
import type { CompactionEvent, LayerContext, ModelWindow, SummarizeEvent, SummaryKind, ToolResultStore, WindowLearnedEvent } from "./compaction/types.ts";
import { type CompactHooks, type Compactor, type RequestShape, type Summarizer, createCompactor } from "./compaction/compactor.ts";
import { indexNewCalls } from "./compaction/ledger.ts";
import { shrinkBytes, shrinkFresh } from "./compaction/reactive.ts";
import { type CompactionRecord, compactionRecords } from "./compaction/records.ts";
import { boundaryDetails } from "./compaction/boundary.ts";
import type { ModelError } from "./model/types.ts";
import type { TranscriptWriter } from "./session/transcript.ts";
import { createFileStore, createMemoryStore, resultFileName } from "./session/tool-results.ts";
import { type TokenCounter, createTokenCounter } from "./tokens/count.ts";
import { type ContextMeter, type Usage, createContextMeter, usageInput } from "./tokens/meter.ts";
import type { MediaFormula } from "./tokens/media.ts";
import { createTruncationDetector } from "./tokens/truncation.ts";

const MIN_LEARNED_WINDOW = 1_024;

/** Options of createEngine: the window, where results and the transcript go, the summarizer, the configuration. */
export interface EngineOptions extends ModelWindow {
  /** Session folder: huge tool results go to <sessionDir>/tool-results/. Without it they stay in memory. */
  sessionDir?: string;
  /** A store of your own (overrides sessionDir). */
  store?: ToolResultStore;
  config?: DeepPartial<CompactionConfig>;
  model?: string;
  /**
   * Whose image and PDF token formulas to estimate with: the provider the requests go to.
   * Default: "openai" for gpt-* / o-series model names, else "anthropic".
   */
  media?: MediaFormula;
  /** The model that writes summaries. Without it, summaries are digests (no model call). */
  summarizer?: Summarizer;
  /** "digest" never calls a model for summaries. */
  summarizerMode?: "model" | "digest";
  hooks?: CompactHooks;
  /** Compactions are recorded here (boundary lines; a summary's rebuilt history, for resume). */
  transcript?: TranscriptWriter;
  /**
   * The host appends every message to the transcript before sending it (runAgent does), so
   * results micro clears are already on disk there and are not written again.
   */
  transcriptHoldsHistory?: boolean;
  /** Where relative file paths are resolved when restoring recently read files. */
  workspace?: string;
  /** Reads a file for restoring after a summary; defaults to the disk under `workspace`. */
  readFile?: (path: string) => string | undefined;
  /** Clock (ms); injectable for tests. */
  now?: () => number;
  /** Called with every event as it happens (the CLI renders them; the engine never prints). */
  onEvent?: (event: CompactionEvent) => void;
}

export interface PrepareCall extends RequestShape {
  /** Tokens of the system prompt and tool definitions sent with every request. */
  fixedTokens?: number;
}

/** The result of engine.prepare: the cheap layers' result, measured, with repair's fixes. */
export interface EnginePrepareResult extends PrepareResult {
  /** Anchored measure of the prepared request (reported usage + estimate of what is new). */
  measuredTokens: number;
  /** What repair changed in the incoming history before the layers ran. */
  fixes: Fix[];
}

export interface RequestReady {
  /** The history to send. */
  history: Message[];
  events: CompactionEvent[];
  tokens: number;
  threshold: number;
}

/** Thrown when a prepared history still breaks an invariant (a bug, never sent). */
export class InvariantError extends LetheError {
  constructor(readonly violations: Violation[]) {
    super("invariant", `lethe: prepared history breaks ${violations.length} invariant(s); first: message ${violations[0]?.index}: ${violations[0]?.message}`);
  }
}

/** Thrown instead of sending a request the engine already knows is over the window. */
export class OverWindowError extends LetheError {
  /** `compacted`: a summary ran and the request is still too long; otherwise nothing was compacted (auto-compact off, or ask and the answer was no). */
  constructor(readonly tokens: number, readonly limit: number, readonly compacted = true) {
    const n = (x: number) => x.toLocaleString("en-US");
    super(
      "over_window",
      compacted
        ? `lethe: the request is still ${n(tokens)} tokens after compaction, over the ${n(limit)} the window allows; not sending it`
        : `lethe: the context is ${n(tokens)} tokens, over the ${n(limit)} the window allows, and was not compacted (auto-compact is not on); not sending it — /compact makes room`,
    );
  }
}

/** One conversation's compaction engine: call beforeRequest before each model request, observe after it, recover on a context-length error. */
export interface Engine {
  readonly config: CompactionConfig;
  /** The auto-compact threshold (lowers when the engine learns a smaller window). */
  readonly threshold: number;
  /** The window the engine works to: the configured one, or a smaller one the server revealed. */
  readonly contextWindow: number;
  readonly counter: TokenCounter;
  readonly meter: ContextMeter;
  readonly compactor: Compactor;
  /** The cheap layers only (synchronous): repair, budget, snip, micro, measure. */
  prepare(history: readonly Message[], call?: PrepareCall): EnginePrepareResult;
  /** Everything before a request: the cheap layers, then a summary when over the threshold. */
  beforeRequest(history: readonly Message[], call?: PrepareCall): Promise<RequestReady>;
  /** Manual compaction (/compact [focus], the compact tool), or a subagent's. */
  compact(history: readonly Message[], call?: PrepareCall & { focus?: string; kind?: Exclude<SummaryKind, "reactive"> }): Promise<RequestReady>;
  /** The provider refused the prompt as too long: shrink harder; the caller retries once. */
  recover(history: readonly Message[], error: ModelError, call?: PrepareCall): Promise<RequestReady>;
  /** Report the provider's usage for the request just sent and the reply received. */
  observe(sent: readonly Message[], reply: Message, usage: Usage, call?: PrepareCall): void;
  /**
   * The full text a layer moved out of the context for this tool_use id, when the store can read
   * it back (without a sessionDir results are kept in memory: a host's own recall tool reads them here).
   */
  readStored(toolUseId: string): string | undefined;
}

/** Bad options are a one-line error at the door, never a NaN threshold or a layer that loops. */
function checkOptions(opts: EngineOptions): void {
  if (opts === null || typeof opts !== "object") throw new LetheInputError("createEngine", `needs an options object ({ contextWindow, maxOutputTokens, … }), got ${opts === null ? "null" : typeof opts}`);
  const { contextWindow: w, maxOutputTokens: out } = opts;
  if (typeof w !== "number" || !Number.isSafeInteger(w) || w <= 0) throw new LetheInputError("createEngine", "", `lethe: contextWindow must be a positive whole number of tokens, got ${w === undefined ? "nothing" : JSON.stringify(w)}`);
  if (typeof out !== "number" || !Number.isSafeInteger(out) || out < 0) throw new LetheInputError("createEngine", "", `lethe: maxOutputTokens must be a whole number of tokens ≥ 0, got ${out === undefined ? "nothing" : JSON.stringify(out)}`);
  if (out >= w) throw new LetheInputError("createEngine", "", `lethe: maxOutputTokens (${out}) must be below contextWindow (${w})`);
  if (opts.config !== undefined && (opts.config === null || typeof opts.config !== "object" || Array.isArray(opts.config))) throw new LetheInputError("createEngine", "", "lethe: config must be an object of compaction settings");
  const th = opts.config?.threshold?.tokens;
  if (typeof th === "number" && th >= w) throw new LetheInputError("createEngine", "", `lethe config: threshold.tokens (${th}) must be below contextWindow (${w})`);
}

/** Creates the engine for one conversation. Bad options are a one-line LetheInputError. */
export function createEngine(opts: EngineOptions): Engine {
  checkOptions(opts);
  let config: CompactionConfig;
  try {
    config = resolveConfig(opts.config);
  } catch (e) {
    throw new LetheInputError("config", "", (e as Error).message);
  }
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
  const emit = (e: CompactionEvent) => {
    emitted.push(e);
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
      // The cheap layers report what they freed; the numbers come from the tokens measured after them.
      opts.transcript.appendBoundary({ kind: e.kind, tokens_before: counted?.tokens_before ?? -1, tokens_after: counted?.tokens_after ?? -1, details: { ...e }, ...what });
    }
  }

  function prepareSync(history: readonly Message[], call: PrepareCall = {}): EnginePrepareResult {
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
      return ensureFits({ ...r, events: since(start) });
    },

    async compact(history, call = {}) {
      const p = prepareSync(history, call);
      return summarise(p.history, call.kind ?? "manual", call, call.focus);
    },

    async recover(history, error, call = {}) {
      const start = emitted.length;
      if (error.limitTokens && error.limitTokens < window.contextWindow) {
        learnWindow(error.limitTokens, "limit_error", `the server's context is ${error.limitTokens.toLocaleString("en-US")} tokens, not ${window.contextWindow.toLocaleString("en-US")}`);
      }
      const ctx = layerContext(call);
      let source = repair(history).history;
      if (error.overBytes) {
        // A limit on bytes (413): attachments weigh megabytes and few tokens; take them out first.
        const target = error.limitBytes ? error.limitBytes * 0.85 : undefined;
        const bytes = shrinkBytes(source, target ?? Buffer.byteLength(JSON.stringify(source)) / 2);
        if (bytes.removed.length > 0) {
          source = bytes.history;
          const out = checked(source);
          const tokens = (call.fixedTokens ?? 0) + counter.messages(out);
          const before = (call.fixedTokens ?? 0) + counter.messages(history);
          const event: SummarizeEvent = {
            kind: "reactive",
            summarizer: "none",
            presummary: false,
            tokensBefore: before,
            tokensAfter: tokens,
            messagesBefore: history.length,
            messagesAfter: out.length,
            freedTokens: Math.max(0, before - tokens),
            restoredFiles: [],
            userMessagesKept: 0,
            droppedForOverflow: 0,
            bytesBefore: bytes.bytesBefore,
            bytesAfter: bytes.bytesAfter,
            attachmentsRemoved: bytes.removed.length,
          };
          // Enough when it reached the target; otherwise the token path below shrinks further.
          if (bytes.bytesAfter <= (target ?? bytes.bytesBefore / 2)) {
            record(event, out, undefined, undefined, history);
            emit(event);
            return { history: out, events: since(start), tokens, threshold };
          }
        }
      }
      const over = error.actualTokens && error.limitTokens ? error.actualTokens - error.limitTokens : 0;
      const shrunk = shrinkFresh(source, ctx, over);
      if (shrunk.event) {
        const after = (call.fixedTokens ?? 0) + counter.messages(shrunk.history);
        record(shrunk.event, undefined, undefined, { kind: "budget", tokens_before: after + shrunk.freedTokens, tokens_after: after });
        emit(shrunk.event);
      }
      // If shrinking alone freed clearly more than the overage, retry without a summary.
      if (shrunk.event && over > 0 && shrunk.freedTokens > over * 1.2 + window.maxOutputTokens * 0.1) {
        const out = checked(shrunk.history);
        const tokens = (call.fixedTokens ?? 0) + counter.messages(out);
        const event: SummarizeEvent = {
          kind: "reactive",
          summarizer: "none",
          presummary: false,
          tokensBefore: tokens + shrunk.freedTokens,
          tokensAfter: tokens,
          messagesBefore: history.length,
          messagesAfter: out.length,
          freedTokens: shrunk.freedTokens,
          restoredFiles: [],
          userMessagesKept: 0,
          droppedForOverflow: 0,
        };
        record(event, out, undefined, undefined, history);
        emit(event);
        return { history: out, events: since(start), tokens, threshold };
      }
      const r = await summarise(shrunk.history, "reactive", call);
      return { ...r, events: since(start) };
    },

    observe(sent, reply, usage, call = {}) {
      checkHistory(sent, "observe: sent");
      checkMessage(reply, "observe: reply");
      if (usage === null || typeof usage !== "object") throw new LetheInputError("observe: usage", `must be the provider's usage object, got ${usage === null ? "null" : typeof usage}`);
      lastResponseAt = now();
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
