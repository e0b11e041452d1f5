// lethe: the package root — the engine, its layers, stores, transcripts, recall, converters and
// errors. No provider SDK and no agent loop in its import graph: those are `lethe/clients` (the
// SDK-backed model clients) and `lethe/agent` (the loop and the built-in tools). Every name is
// listed: what a host needs, nothing of lethe's own plumbing (test/package/surface.test.ts).

// The engine: the one object an agent loop calls around each request.
export { createEngine, InvariantError, OverWindowError, UncompactError, type CompactionPreview, type Engine, type EngineOptions, type EnginePrepareResult, type PrepareCall, type RequestReady } from "./engine/index.ts";

// Messages (Anthropic's shape), their invariants, the OpenAI converters, input checks.
export type { TextBlock, ImageBlock, ThinkingBlock, RedactedThinkingBlock, ToolUseBlock, ToolResultContentBlock, ToolResultBlock, ContentBlock, Role, Message, BlockMessage, History } from "./messages/types.ts";
export { validate, repair, isValid, type Violation, type ViolationKind, type Fix, type FixKind } from "./messages/invariants.ts";
export { toOpenAI, fromOpenAI } from "./messages/openai.ts";
export { toResponses, fromResponses } from "./messages/responses.ts";
export type { OpenAITextPart, OpenAIImagePart, OpenAIUserPart, OpenAIToolCall, LetheExtension, OpenAISystemMessage, OpenAIUserMessage, OpenAIAssistantMessage, OpenAIToolMessage, OpenAIMessage } from "./messages/openai-types.ts";
export { LetheInputError, checkHistory } from "./messages/input.ts";

// Tokens: the estimate, the exact count, the memoised counter, the usage meter.
export { estimateTokens } from "./tokens/estimate.ts";
export { countTokens } from "./tokens/exact.ts";
export { createTokenCounter, type TokenCounter } from "./tokens/count.ts";
export { createContextMeter, usageTotal, type ContextMeter, type Usage } from "./tokens/meter.ts";

// Compaction: the configuration, the layers and their pipeline, the summary, events and records.
export { DEFAULT_CONFIG, resolveConfig, autoCompactThreshold, type CompactionConfig, type BudgetConfig, type SnipConfig, type MicroConfig, type ThresholdConfig, type SummaryConfig, type DeepPartial } from "./compaction/config/config.ts";
export type {
  ModelWindow,
  ToolResultStore,
  CompactionKind,
  SummaryKind,
  LayerContext,
  Layer,
  LayerResult,
  LayerEvent,
  PersistedResult,
  ClearedResult,
  BudgetEvent,
  SnipEvent,
  MicroEvent,
  SummarizeEvent,
  SummaryFailedEvent,
  NoProgressEvent,
  SummaryCallEvent,
  CompactionNoticeEvent,
  CompactionNotDoneEvent,
  WindowLearnedEvent,
  WindowSetEvent,
  CompactPreviewEvent,
  UncompactEvent,
  CompactionEvent,
} from "./compaction/types.ts";
export { prepare, LAYERS, type PrepareResult, type LayerReport } from "./compaction/pipeline.ts";
export { budget } from "./compaction/layers/budget.ts";
export { snip } from "./compaction/layers/snip.ts";
export { micro } from "./compaction/layers/micro.ts";
export { createCompactor, ThrashError, NoProgressError, CompactionBlockedError, type Compactor, type CompactHooks, type Summarizer } from "./compaction/summary/compactor.ts";
export { digest } from "./compaction/summary/digest.ts";
export { rebuild } from "./compaction/summary/rebuild.ts";
export { summarize, summaryInstruction } from "./compaction/summary/summarize.ts";
export { ledgerOf, type FileLedger } from "./compaction/state/ledger.ts";
export { compactionRecords, type CompactionRecord } from "./compaction/state/records.ts";
export { createCommandHooks, parseHooksConfig, type HooksConfig, type HookCommand } from "./hooks/compact-hooks.ts";

// Sessions: tool-result stores, transcripts, session folders, recall.
export { createFileStore, createMemoryStore } from "./session/tool-results.ts";
export { openTranscript, loadTranscript, resumeContext, TranscriptVersionError, type TranscriptWriter, type TranscriptEntry, type BoundaryEntry } from "./session/transcript.ts";
export { uncompactTranscript, type TranscriptUndo } from "./session/uncompact.ts";
export { sessionPaths, createSessionDir, listSessions, latestSession, resolveSession, SessionNotFoundError, SessionStorageError, type SessionPaths, type SessionSummary } from "./session/paths.ts";
export { SessionLockedError } from "./session/lock.ts";
export { recall, type RecallOptions, type RecallResult } from "./session/recall.ts";

// Conversation stores: files by default, PostgreSQL from lethe/postgres (loaded by connectStore).
export { connectStore, type ConnectOptions } from "./store/connect.ts";
export { createFilesStore } from "./store/files.ts";
export { StoreError } from "./store/errors.ts";
export type { ConversationStore, Conversation, ConversationInfo, EngineSnapshot, MeterState, AppendResult } from "./store/types.ts";

// Models: the client interface and its errors, retries, the known-model table (no SDK behind them).
export { ModelError, type ModelClient, type ModelRequest, type ModelResponse, type StreamEvent, type StopReason, type ToolDefinition, type ModelErrorKind, type ModelInfo } from "./model/types.ts";
export { toModelError } from "./model/errors.ts";
export { withErrorBodies } from "./model/error-fetch.ts";
export { withRetry, type RetryOptions, type RetryInfo } from "./model/retry.ts";
export { KNOWN_MODELS, lookupModel, resolveModelInfo, type ModelEntry, type ModelOverrides, type ResolvedModelInfo } from "./model/models.ts";
export { parseToolInput } from "./model/tool-input.ts";

// Errors: one base with a code and the CLI's exit status.
export { LetheError, isLetheError, EXIT_CODES, type LetheErrorCode } from "./errors.ts";
