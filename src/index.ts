// lethe: the package root — the engine, its layers, stores, transcripts, recall, converters and
// errors. No provider SDK and no agent loop in its import graph: those are `lethe/clients` (the
// SDK-backed model clients) and `lethe/agent` (the loop and the built-in tools).
export * from "./messages/types.ts";
export * from "./messages/blocks.ts";
export { estimateTokens } from "./tokens/estimate.ts";
export { countTokens } from "./tokens/exact.ts";
export { createTokenCounter, type TokenCounter } from "./tokens/count.ts";
export * from "./compaction/types.ts";
export * from "./compaction/config.ts";
export { prepare, LAYERS, type PrepareResult, type LayerReport } from "./compaction/pipeline.ts";
export { budget } from "./compaction/budget.ts";
export { snip } from "./compaction/snip.ts";
export { micro } from "./compaction/micro.ts";
export { createFileStore, createMemoryStore } from "./session/tool-results.ts";
export { createContextMeter, usageTotal, type ContextMeter, type Usage } from "./tokens/meter.ts";
export { createEngine, InvariantError, type Engine, type EngineOptions, type EnginePrepareResult } from "./engine/index.ts";
export { validate, repair, isValid, type Violation, type ViolationKind, type Fix, type FixKind } from "./messages/invariants.ts";
export { toOpenAI, fromOpenAI } from "./messages/openai.ts";
export { LetheInputError, checkHistory } from "./messages/input.ts";
export type * from "./messages/openai-types.ts";
export { createCompactor, ThrashError, CompactionBlockedError, type Compactor, type CompactHooks, type Summarizer } from "./compaction/compactor.ts";
export { digest } from "./compaction/digest.ts";
export { rebuild } from "./compaction/rebuild.ts";
export { summarize, summaryInstruction } from "./compaction/summarize.ts";
export { ledgerOf, type FileLedger } from "./compaction/ledger.ts";
export { OverWindowError } from "./engine/index.ts";
export { openTranscript, loadTranscript, resumeContext, type TranscriptWriter, type TranscriptEntry, type BoundaryEntry } from "./session/transcript.ts";
export { recall, type RecallOptions, type RecallResult } from "./session/recall.ts";
export * from "./session/paths.ts";
// Model types, errors, retries and the known-model table: no SDK behind them.
export * from "./model/types.ts";
export * from "./model/errors.ts";
export * from "./model/models.ts";
export * from "./model/retry.ts";
export { parseToolInput } from "./model/tool-input.ts";
export { LetheError, isLetheError, EXIT_CODES, type LetheErrorCode } from "./errors.ts";
export { TranscriptVersionError } from "./session/transcript.ts";
export { SessionLockedError } from "./session/lock.ts";
export { compactionRecords, type CompactionRecord } from "./compaction/records.ts";
export { createCommandHooks, parseHooksConfig, type HooksConfig, type HookCommand } from "./hooks/compact-hooks.ts";
