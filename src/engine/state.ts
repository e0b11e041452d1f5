// What one engine holds between calls, wired once from its options: the window and threshold,
// the store, the counter and meter, the compactor, the follower of a host's own history, and
// the events of the calls in progress. Side effects (disk, clock, model) come in through here.
import { readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { Message } from "../messages/types.ts";
import { type CompactionConfig, autoCompactThreshold } from "../compaction/config/config.ts";
import type { CompactionEvent, LayerContext, ModelWindow, SummaryKind, ToolResultStore } from "../compaction/types.ts";
import { type Compactor, type SummaryDraft, createCompactor } from "../compaction/summary/compactor.ts";
import { createFileStore, createMemoryStore } from "../session/tool-results.ts";
import { LEDGER_OPEN, WORK_OPEN } from "../compaction/state/tags.ts";
import { type MiddleReading, middleReading } from "../compaction/state/middle.ts";
import { type TokenCounter, createTokenCounter } from "../tokens/count.ts";
import { type ContextMeter, createContextMeter } from "../tokens/meter.ts";
import { createTruncationDetector } from "../tokens/truncation.ts";
import type { TranscriptWriter } from "../session/transcript.ts";
import type { CompactionPreview, EngineOptions, PrepareCall } from "./contract.ts";
import { type Follower, createFollower } from "./follower.ts";
import type { LineOrigins } from "./lines.ts";
import { logSummaryCall } from "./summary-calls.ts";
import { type StoreLink, createLink, isConversationStore, linkResults, linkTranscript } from "./store-link.ts";

/** Events of layers that rewrite what was sent before (not only append to it). */
const REWRITES = new Set<string>(["budget", "snip", "micro", "summarize", "reactive", "uncompact"]);

/** What the host steered (./steer.ts): a switch to a smaller window, a preview, the last compaction for undo. */
export interface SteerState {
  /** The window switched from (setWindow to a smaller one): the next request compacts to fit, the summary sized to this. */
  switchedFrom?: number;
  /** The last preview: the prepared history it saw, its focus and its summary (applied without a new call). */
  preview?: { source: Message[]; focus: string | undefined; draft: SummaryDraft; preview: CompactionPreview };
  /** The last summary compaction: the history before it and the one it became. */
  last?: { kind: SummaryKind; before: Message[]; after: Message[] };
}

export interface EngineState {
  readonly opts: EngineOptions;
  readonly config: CompactionConfig;
  /** Shrinks when the server turns out to hold less (learnWindow); the threshold follows. */
  readonly window: ModelWindow;
  threshold: number;
  readonly store: ToolResultStore;
  /** Where boundaries are written: the host's transcript, or the conversation store's queue. */
  readonly transcript: TranscriptWriter | undefined;
  /** The conversation store the engine keeps its state in, when given one. */
  readonly link: StoreLink | undefined;
  readonly counter: TokenCounter;
  readonly meter: ContextMeter;
  /** The meter's correction per model (shared with it: a conversation store's is adopted here). */
  readonly factors: Map<string, number>;
  /** Learns a server limit a summary request was refused with (set by createEngine: engine/recover.ts). */
  learnLimit?: (limitTokens: number) => void;
  readonly compactor: Compactor;
  /** A host that passes its own full history every time pays for what is new, not for the session. */
  readonly follower: Follower;
  /** Watches the reported input for a server that silently cuts the prompt to its own context. */
  readonly truncation: ReturnType<typeof createTruncationDetector>;
  readonly archivePath: string | undefined;
  /** What budget moved to the store, so a rebuilt copy of the same history is not written again. */
  readonly persisted: NonNullable<LayerContext["persisted"]>;
  /** What micro saved before clearing it, likewise. */
  readonly cleared: NonNullable<LayerContext["cleared"]>;
  /** Placeholders micro made after the reply that saw their results, by original block. */
  readonly placeholders: NonNullable<LayerContext["placeholders"]>;
  /** Messages whose tool calls the file ledger has indexed (a turn at a time). */
  readonly indexed: WeakSet<Message>;
  /** What the next snip removes, read as it forms. */
  readonly middle: MiddleReading;
  /** The message each in-place rewrite replaced (./lines.ts): boundaries name its transcript line. */
  readonly origins: LineOrigins;
  lastResponseAt: number | undefined;
  /** A layer rewrote the history since the last observe (growth no longer compares). */
  rewrote: boolean;
  /** Events from observe() (between requests): they go out with the next request's. */
  readonly unreported: CompactionEvent[];
  /** The event lists of the calls in progress: each gets what is emitted while it runs. */
  readonly collecting: Set<CompactionEvent[]>;
  readonly steer: SteerState;
  emit(e: CompactionEvent): void;
}

export function createState(opts: EngineOptions, resolved: CompactionConfig): EngineState {
  // On a store the engine is usually made for one request: a summary started in the background
  // would be paid for and then lost with it. The summary runs when it is needed instead.
  const config = isConversationStore(opts.store) ? { ...resolved, summary: { ...resolved.summary, presummaryShare: 0 } } : resolved;
  const window: ModelWindow = { contextWindow: opts.contextWindow, maxOutputTokens: opts.maxOutputTokens };
  const counter = createTokenCounter(undefined, { media: opts.media ?? (/^(?:gpt|o\d|chatgpt)/i.test(opts.model ?? "") ? "openai" : "anthropic"), lineCounted: [LEDGER_OPEN, WORK_OPEN] });
  const archivePath = opts.sessionDir ? join(opts.sessionDir, "transcript.jsonl") : undefined;
  const collecting = new Set<CompactionEvent[]>();
  const link = isConversationStore(opts.store) ? createLink(opts.store, opts.conversationId!) : undefined;
  const factors = new Map<string, number>();
  const state: EngineState = {
    opts,
    config,
    window,
    threshold: autoCompactThreshold(window, config),
    store: link ? linkResults(link) : ((opts.store as ToolResultStore | undefined) ?? (opts.sessionDir ? createFileStore(join(opts.sessionDir, "tool-results")) : createMemoryStore())),
    transcript: opts.transcript ?? (link ? linkTranscript(link) : undefined),
    link,
    counter,
    meter: createContextMeter({ counter, model: opts.model, factors }),
    factors,
    compactor: undefined as unknown as Compactor, // set below: it emits through the state
    follower: createFollower({ wholeHost: link !== undefined }),
    truncation: createTruncationDetector(),
    archivePath,
    persisted: new Map(),
    cleared: new Map(),
    placeholders: new WeakMap(),
    indexed: new WeakSet(),
    middle: middleReading(),
    origins: new WeakMap(),
    lastResponseAt: undefined,
    rewrote: false,
    unreported: [],
    collecting,
    steer: {},
    emit(e) {
      if (e.kind === "summary_call") {
        logSummaryCall({ transcript: state.transcript, requestCost: opts.requestCost, threshold: state.threshold, contextWindow: window.contextWindow }, e);
        // A background summary answered between requests goes out with the next request's events.
        if (collecting.size === 0) state.unreported.push(e);
      }
      for (const list of collecting) list.push(e);
      if (REWRITES.has(e.kind)) state.rewrote = true;
      opts.onEvent?.(e);
    },
  };
  (state as { compactor: Compactor }).compactor = createCompactor({
    window,
    config,
    counter,
    summarizer: opts.summarizer,
    mode: opts.summarizerMode,
    hooks: opts.hooks,
    archivePath,
    readFile: opts.readFile ?? diskReader(opts.workspace ?? process.cwd()),
    emit: (e) => state.emit(e),
    onLimit: (n) => state.learnLimit?.(n),
    // Free when the host's pricing gives the summarizer's model no price (a local model).
    ...(opts.requestCost && opts.summarizer ? { summariesCost: () => (safePrice(opts.requestCost!, opts.summarizer!.model) ?? 0) > 0 } : {}),
  });
  return state;
}

/** What a million input tokens cost on `model` by the host's pricing (undefined: no price, or pricing that throws). */
function safePrice(requestCost: NonNullable<EngineOptions["requestCost"]>, model: string): number | undefined {
  try {
    return requestCost(model, { input_tokens: 1_000_000, output_tokens: 0 });
  } catch {
    return undefined;
  }
}

function diskReader(workspace: string): (path: string) => string | undefined {
  return (p) => {
    try {
      return readFileSync(isAbsolute(p) ? p : resolve(workspace, p), "utf8");
    } catch {
      return undefined;
    }
  };
}

/** Runs `fn` and hands it the events emitted while it runs (and those observe() left for it). */
export async function withEvents<T>(s: EngineState, fn: (events: CompactionEvent[]) => Promise<T>): Promise<T> {
  const events: CompactionEvent[] = s.unreported.splice(0);
  s.collecting.add(events);
  try {
    return await fn(events);
  } finally {
    s.collecting.delete(events);
  }
}

// ctx.measure per engine and fixed-token count, made once: not a closure made on every request.
const measures = new WeakMap<EngineState, { fixed: number; measure: (history: readonly Message[]) => number }>();

function measureFor(s: EngineState, fixed: number): (history: readonly Message[]) => number {
  let m = measures.get(s);
  if (m === undefined || m.fixed !== fixed) measures.set(s, (m = { fixed, measure: (history) => s.meter.measure(history, fixed) }));
  return m.measure;
}

/** What the layers get for one request: the window, the threshold, the stores and the clock. */
export function layerContext(s: EngineState, call: PrepareCall): LayerContext {
  return {
    window: s.window,
    config: s.config,
    threshold: s.threshold,
    tokens: s.counter,
    store: s.store,
    now: (s.opts.now ?? Date.now)(),
    lastResponseAt: s.lastResponseAt,
    archivePath: s.archivePath,
    fixedTokens: call.fixedTokens ?? 0,
    measure: measureFor(s, call.fixedTokens ?? 0),
    archived: s.opts.transcriptHoldsHistory ?? false,
    persisted: s.persisted,
    cleared: s.cleared,
    placeholders: s.placeholders,
    middle: s.middle,
  };
}
