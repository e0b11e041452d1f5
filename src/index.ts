// lethe: the package root.
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
export { createEngine, InvariantError, type Engine, type EngineOptions, type EnginePrepareResult } from "./engine.ts";
export { validate, repair, isValid, type Violation, type ViolationKind, type Fix, type FixKind } from "./messages/invariants.ts";
export { toOpenAI, fromOpenAI } from "./messages/openai.ts";
export type * from "./messages/openai-types.ts";
