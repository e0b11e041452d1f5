// The engine's contract: what createEngine takes, what its methods return, and the errors it
// throws. The behaviour is in engine.ts; the options are checked at the door in engine-options.ts.
import { LetheError } from "../errors.ts";
import type { Message } from "../messages/types.ts";
import type { Fix, Violation } from "../messages/invariants.ts";
import type { CompactionConfig, DeepPartial } from "../compaction/config/config.ts";
import type { PrepareResult } from "../compaction/pipeline.ts";
import type { CompactionEvent, ModelWindow, SummaryKind, ToolResultStore } from "../compaction/types.ts";
import type { CompactHooks, Compactor, RequestShape, Summarizer } from "../compaction/summary/compactor.ts";
import type { ModelError } from "../model/types.ts";
import type { TranscriptWriter } from "../session/transcript.ts";
import type { ConversationStore } from "../store/types.ts";
import type { TokenCounter } from "../tokens/count.ts";
import type { ContextMeter, Usage } from "../tokens/meter.ts";
import type { MediaFormula } from "../tokens/media.ts";

/** Options of createEngine: the window, where results and the transcript go, the summarizer, the configuration. */
export interface EngineOptions extends ModelWindow {
  /** Session folder: huge tool results go to <sessionDir>/tool-results/. Without it they stay in memory. */
  sessionDir?: string;
  /**
   * A conversation store (connectStore): the engine keeps the conversation there (each new
   * message once, boundaries, tool results, its compacted state), so a fresh engine for a known
   * `conversationId` picks up where the last one stopped, in this process or another. Or a
   * tool-result store of your own (overrides sessionDir).
   */
  store?: ConversationStore | ToolResultStore;
  /** The conversation's id in the store (needed with a conversation store): 1–1,000 characters. */
  conversationId?: string;
  config?: DeepPartial<CompactionConfig>;
  model?: string;
  /**
   * Whose image and PDF token formulas to estimate with: the provider the requests go to.
   * Default: "openai" for gpt-* / o-series model names, else "anthropic".
   */
  media?: MediaFormula;
  /** The price of one call: a summary call's `request` line in the transcript carries it (lethe's agent loop passes the same). */
  requestCost?: (model: string, usage: Usage) => number | undefined;
  /** The model that writes summaries. Without it, summaries are digests (no model call). */
  summarizer?: Summarizer;
  /**
   * "digest" never calls a model for summaries; "server" has the provider compact the conversation
   * itself (Anthropic's compaction: its block is kept first, verbatim) while lethe still carries
   * the user's messages, the file ledger, restored files and the todos.
   */
  summarizerMode?: "model" | "digest" | "server";
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
  /**
   * Called by beforeRequest right before it summarises (a model call that takes a while), so a
   * host can say so without measuring the history itself.
   */
  onSummaryStart?: () => void;
  /**
   * Asked when beforeRequest is about to auto-compact: true sends this request without the
   * summary (event summary_deferred), when it still fits the window, so the agent can save its
   * state first (lethe's loop, with summary.saveFirst); the next beforeRequest summarises.
   */
  deferSummary?: () => boolean;
}

/**
 * A message as a provider SDK writes one: lethe's Message, `@anthropic-ai/sdk`'s MessageParam and
 * the like (a role, and string content or blocks that each have a type). The engine takes the
 * SDK's own type and gives the same type back: what it writes (a summary, a placeholder, a
 * repaired pair) are text and tool_result blocks every such SDK accepts, and any block it does
 * not know it carries as it came.
 */
export interface MessageLike {
  /** "system" type-checks (SDK 1.12's MessageParam has it) but is refused at run time, in one line, as everywhere in lethe: pass the system prompt as `system`. */
  readonly role: "user" | "assistant" | "system";
  readonly content: string | readonly { readonly type: string }[];
}

/** The result of engine.prepare: the cheap layers' result, measured, with repair's fixes. */
export interface EnginePrepareResult<M extends MessageLike = Message> extends Omit<PrepareResult, "history"> {
  /** The history to send. */
  history: M[];
  /** Anchored measure of the prepared request (reported usage + estimate of what is new). */
  measuredTokens: number;
  /** What repair changed in the incoming history before the layers ran. */
  fixes: Fix[];
}

export interface RequestReady<M extends MessageLike = Message> {
  /** The history to send. */
  history: M[];
  events: CompactionEvent[];
  tokens: number;
  threshold: number;
}

/** What a compaction would do now (engine.preview): nothing is changed; engine.compact(history, { preview }) applies it. */
export interface CompactionPreview<M extends MessageLike = Message> {
  /** The history the compaction would leave (the prepared history itself when it would not help). */
  history: M[];
  /** The summary it would write (already paid for: applying the preview reuses it). */
  summary: string;
  focus?: string;
  tokensBefore: number;
  tokensAfter: number;
  messagesBefore: number;
  messagesAfter: number;
  /** What would leave the context (every result stays in the transcript, or its file, for recall). */
  removed: { messages: number; toolResults: { toolUseId: string; name?: string; tokens: number }[] };
  /** What would be carried: the user's messages, the file ledger, files re-read, the todos, messages kept as they are. */
  kept: { userMessages: number; readFiles: string[]; modifiedFiles: string[]; restoredFiles: string[]; todos: boolean; verbatimMessages: number };
  /** Why it would not help: the summary and what it keeps would not be smaller than the history. */
  skipped?: string;
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
  constructor(readonly tokens: number, readonly limit: number, readonly compacted = true, auto: "off" | "ask" = "off") {
    const n = (x: number) => x.toLocaleString("en-US");
    // The limit is the window less the reply's reserve: what a request may carry, not the threshold.
    const why = auto === "ask" ? "auto-compact asks first, and no compaction was approved" : "auto-compact is off";
    super(
      "over_window",
      compacted
        ? `lethe: the request is still ${n(tokens)} tokens after compaction, over the ${n(limit)} a request may carry in this window (the rest is the reply's); not sending it`
        : `lethe: the context is ${n(tokens)} tokens, over the ${n(limit)} a request may carry in this window (the rest is the reply's), and was not compacted (${why}); not sending it — /compact makes room`,
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
  /**
   * The cheap layers only (synchronous): repair, budget, snip, micro, measure. `history` may be
   * the last result plus what is new, or the host's own full history every time: when it is the
   * last input plus appended messages (same objects), the last result plus those is prepared.
   */
  prepare<M extends MessageLike = Message>(history: readonly M[], call?: PrepareCall): EnginePrepareResult<M>;
  /** Everything before a request: the cheap layers, then a summary when over the threshold. */
  beforeRequest<M extends MessageLike = Message>(history: readonly M[], call?: PrepareCall): Promise<RequestReady<M>>;
  /**
   * Manual compaction (/compact [focus], the compact tool), or a subagent's. With `preview` (this
   * engine's last, of the same history or that plus messages since) its summary is applied
   * without a new model call.
   */
  compact<M extends MessageLike = Message>(history: readonly M[], call?: PrepareCall & { focus?: string; kind?: Exclude<SummaryKind, "reactive">; preview?: CompactionPreview<M> }): Promise<RequestReady<M>>;
  /**
   * What a manual compaction would do now: what it would remove, keep and carry, the summary it
   * would write, tokens before and after. Changes nothing (the summary call is made and paid for
   * once: the same history and focus again gives the same preview without another).
   */
  preview<M extends MessageLike = Message>(history: readonly M[], call?: PrepareCall & { focus?: string }): Promise<CompactionPreview<M>>;
  /**
   * Switch to another window (another model): from the next request on the engine works to it. A
   * smaller one makes the next beforeRequest compact to fit, auto-compact on or not, the summary
   * written by the summarizer reading the whole session (its request sized to the larger window).
   */
  setWindow(contextWindow: number, maxOutputTokens: number): void;
  /**
   * Undo the last summary compaction: the history from before it plus every message since, when
   * it fits under the threshold; else UncompactError, in one line. Recorded in the transcript as a
   * resume point. On a conversation store, from what the store kept (any engine on the
   * conversation may undo), saved as its state. (From a transcript alone: uncompactTranscript.)
   */
  uncompact<M extends MessageLike = Message>(history: readonly M[], call?: PrepareCall): Promise<RequestReady<M>>;
  /** The provider refused the prompt as too long: shrink harder; the caller retries once. */
  recover<M extends MessageLike = Message>(history: readonly M[], error: ModelError, call?: PrepareCall): Promise<RequestReady<M>>;
  /**
   * Report the provider's usage for the request just sent and the reply received. With a
   * conversation store, what it teaches the meter (its correction, the reply's time) is written
   * to the store in the background, for the next engine on the conversation: see flush().
   */
  observe(sent: readonly (Message | MessageLike)[], reply: Message | MessageLike, usage: Usage, call?: PrepareCall): void;
  /**
   * With a conversation store: resolves once everything this engine queued is stored (what
   * observe learned, tool results, boundaries); rejects with a write that failed since the last
   * flush. A host whose process may stop after its response (serverless) awaits it, or hands it
   * to its platform's waitUntil. Without a store it resolves at once.
   */
  flush(): Promise<void>;
  /**
   * The full text a layer moved out of the context for this tool_use id, when the store can read
   * it back (without a sessionDir results are kept in memory: a host's own recall tool reads them here).
   */
  readStored(toolUseId: string): string | undefined;
  /**
   * The same, from anywhere the engine keeps results: with a conversation store, what any engine
   * on this conversation saved, in any process (a host's recall tool on a fleet).
   */
  loadStored(toolUseId: string): Promise<string | undefined>;
}
