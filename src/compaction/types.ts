// The contract every compaction layer follows:
//   (history, context) → { history, freedTokens, event }
// A layer is a pure function of its inputs. The only side effect it may cause is
// through `context.store` (persisting a tool result before replacing it), which the
// caller passes in, so tests run layers against an in-memory store.
import type { Message, ToolResultBlock, ToolUseBlock } from "../messages/types.ts";
import type { TokenCounter } from "../tokens/count.ts";
import type { CompactionConfig, ModelWindow } from "./config/config.ts";
import type { MiddleReading } from "./state/middle.ts";

/** Where replaced tool results go. `save` must be durable when it returns. */
export interface ToolResultStore {
  /** Writes `text` for this tool_use id; returns the path (or URI) it can be read back from. */
  save(toolUseId: string, text: string): string;
  /** What was saved for this id, where the store can read it back (the in-memory store can). */
  load?(toolUseId: string): string | undefined;
}

export type { ModelWindow } from "./config/config.ts";

/** Every kind of compaction, once: the layers, the summaries and who asked for them. */
export type CompactionKind = "budget" | "snip" | "micro" | "summarize" | "reactive" | "manual" | "subagent";
/** The compactions that summarise (and rebuild) the history. */
export type SummaryKind = Extract<CompactionKind, "summarize" | "reactive" | "manual" | "subagent">;

export interface LayerContext {
  window: ModelWindow;
  config: CompactionConfig;
  /** The auto-compact threshold for this window and config, computed once by the caller (thresholdOf computes it when absent). */
  threshold?: number;
  tokens: TokenCounter;
  store: ToolResultStore;
  /** Clock, passed in so layers stay pure. Milliseconds since the epoch. */
  now: number;
  /** When the last model response arrived (ms); enables the idle (cold-cache) micro path. */
  lastResponseAt?: number;
  /** Where the full transcript lives, named in boundary messages and placeholders. */
  archivePath?: string;
  /** Tokens the request carries outside the history (system prompt, tool definitions). */
  fixedTokens?: number;
  /**
   * How the request is measured, fixed tokens included (the engine passes its usage-anchored meter,
   * so each request is measured once); without it, the estimate of the history plus fixedTokens.
   */
  measure?: (history: readonly Message[]) => number;
  /**
   * Every message of the history is already in the session transcript (the agent writes
   * ahead), so micro need not save what it clears again: recall reads it from there.
   */
  archived?: boolean;
  /**
   * What budget already moved to the store, by tool_use id and a digest of the text: a host that rebuilds its history
   * (new objects, the same results) every call gets the same marker back, without the result
   * being written again. Owned by the engine; budget reads and fills it.
   */
  persisted?: Map<string, { chars: number; digest: string; block: ToolResultBlock; record: PersistedResult }>;
  /**
   * What micro saved to the store before clearing it, by tool_use id: the digest of the text and
   * the path it went to. A host that rebuilds its history every call gets the same placeholder
   * without the result being written again. Owned by the engine; micro reads and fills it.
   */
  cleared?: Map<string, { digest: string; path: string }>;
  /**
   * Placeholders micro made ahead (after the reply that saw each result: ./layers/micro-ahead.ts), by
   * the original block, with the call they describe: used when micro clears that block for the same
   * call and writes no file for it. Owned by the engine.
   */
  placeholders?: WeakMap<ToolResultBlock, { use: ToolUseBlock; block: ToolResultBlock }>;
  /**
   * What the next snip removes, read a few messages a request as it forms (./state/middle.ts), so
   * the request that snips does not read it all. Owned by the engine; snip reads and fills it.
   */
  middle?: MiddleReading;
}

/** One tool result budget moved to the store. */
export interface PersistedResult {
  toolUseId: string;
  toolName: string;
  path: string;
  chars: number;
  tokensBefore: number;
  tokensAfter: number;
}

/** The budget layer moved results to the store. */
export interface BudgetEvent {
  kind: "budget";
  persisted: PersistedResult[];
  freedTokens: number;
}

/** The snip layer dropped the middle of the history. */
/** The file ledger as data: every file read and modified up to a compaction, unbounded (the context carries a capped rendering). */
export interface LedgerList {
  read: string[];
  modified: string[];
}

/** The snip layer took messages out of the middle of the history (the head and the newest rounds stay). */
export interface SnipEvent {
  kind: "snip";
  /** Messages removed from the middle of the history. */
  removedMessages: number;
  /** Index range [from, to) of the removed messages in the history given to snip. */
  from: number;
  to: number;
  messagesBefore: number;
  messagesAfter: number;
  freedTokens: number;
  /** The ledger of what was snipped and carried before (the note carries it capped). */
  ledger?: LedgerList;
}

/** One tool result micro cleared. */
export interface ClearedResult {
  toolUseId: string;
  toolName: string;
  tokens: number;
}

/** The micro layer cleared old tool results. */
export interface MicroEvent {
  kind: "micro";
  /** "size": enough old results to clear; "idle": the prompt cache went cold. */
  trigger: "size" | "idle";
  cleared: ClearedResult[];
  freedTokens: number;
}

/** An event of one of the cheap layers. */
export type LayerEvent = BudgetEvent | SnipEvent | MicroEvent;

/** A summary compaction: auto at the threshold, manual (/compact, compact tool), reactive, or a subagent's. */
export interface SummarizeEvent {
  kind: SummaryKind;
  /** "none": a reactive recovery that shrinking fresh results alone made fit. */
  summarizer: "model" | "digest" | "none" | "server";
  /** The summary came from the background pre-summary (no wait at the threshold). */
  presummary: boolean;
  tokensBefore: number;
  tokensAfter: number;
  messagesBefore: number;
  messagesAfter: number;
  freedTokens: number;
  restoredFiles: string[];
  userMessagesKept: number;
  /** Messages left out of the summary request because it was itself too long. */
  droppedForOverflow: number;
  /** The ledger of the summarised history, whole (the rebuilt history carries it capped). */
  ledger?: LedgerList;
  focus?: string;
  /** A manual compaction that applied a preview's summary (engine.preview): no second model call. */
  fromPreview?: boolean;
  /** A reactive recovery from a byte limit (413): the history's JSON size, and attachments taken out. */
  bytesBefore?: number;
  bytesAfter?: number;
  attachmentsRemoved?: number;
}

/**
 * A summary model call was answered (used or not: a background summary that went stale was paid
 * for too). The engine writes its `request` line to the transcript; a loop adds it to its spend.
 */
export interface SummaryCallEvent {
  kind: "summary_call";
  model: string;
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number | null; cache_read_input_tokens?: number | null };
  /** Estimated input tokens of the summary request. */
  tokens: number;
}

/** Summaries in a row left the same context: the session makes no progress (it stops; NoProgressError). */
export interface NoProgressEvent {
  kind: "no_progress";
  /** Summaries in a row that ended the same. */
  repeats: number;
  tokensBefore: number;
  tokensAfter: number;
}

/** A summary request failed (after retries); `breakerOpen` says the digest takes over. */
export interface SummaryFailedEvent {
  kind: "summary_failed";
  error: string;
  consecutiveFailures: number;
  /** The circuit breaker opened: digest from now on. */
  breakerOpen: boolean;
}

/** A notice about compaction that changed no history (a pre-summary started, compaction suggested or near). */
export interface CompactionNoticeEvent {
  /** summary_deferred: the host asked for a turn before the summary (the agent saves its state; saveFirst). */
  kind: "presummary_started" | "compact_suggested" | "auto_compact_near" | "summary_deferred";
  tokens: number;
  threshold: number;
  reason?: string;
}

/** A compaction that was asked for and did not happen: a hook blocked it, or it had nothing to gain. */
export interface CompactionNotDoneEvent {
  kind: "compact_blocked" | "compact_skipped";
  tokens: number;
  reason: string;
}

/**
 * The server's real context is smaller than the configured window (it said so in a context
 * error, or it silently truncated a request): the engine works to the smaller one from now on.
 */
export interface WindowLearnedEvent {
  kind: "window_learned";
  contextWindow: number;
  previous: number;
  threshold: number;
  /** "limit_error": the server named its limit; "truncated": it reported far fewer input tokens than were sent. */
  cause: "limit_error" | "truncated";
  reason: string;
}

/**
 * The host switched the window (engine.setWindow: another model). A smaller one makes the next
 * request compact to fit it, summarised by the model that can still read the whole session.
 */
export interface WindowSetEvent {
  kind: "window_set";
  contextWindow: number;
  previous: number;
  maxOutputTokens: number;
  threshold: number;
}

/** A compaction was previewed (engine.preview): nothing changed; applying it is a manual compaction with fromPreview. */
export interface CompactPreviewEvent {
  kind: "compact_preview";
  tokensBefore: number;
  tokensAfter: number;
  focus?: string;
  /** Why it would not help (the summary would not make the context smaller). */
  skipped?: string;
}

/** The last compaction was undone (engine.uncompact): the history from before it is back. */
export interface UncompactEvent {
  kind: "uncompact";
  /** The kind of compaction undone. */
  undone: SummaryKind;
  tokensBefore: number;
  tokensAfter: number;
  messagesBefore: number;
  messagesAfter: number;
}

/** Every event the engine emits. */
export type CompactionEvent = LayerEvent | SummarizeEvent | SummaryFailedEvent | CompactionNoticeEvent | CompactionNotDoneEvent | WindowLearnedEvent | NoProgressEvent | SummaryCallEvent | WindowSetEvent | CompactPreviewEvent | UncompactEvent;

export interface LayerResult<E extends LayerEvent = LayerEvent> {
  history: Message[];
  freedTokens: number;
  /** null when the layer did nothing (and then `history` is the input, unchanged). */
  event: E | null;
}

/** The layer contract: a pure function of the history and the context. */
export type Layer<E extends LayerEvent = LayerEvent> = (
  history: readonly Message[],
  ctx: LayerContext,
) => LayerResult<E>;
