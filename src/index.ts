// lethe: the package root.
export * from "./messages/types.ts";
export * from "./messages/blocks.ts";
export { estimateTokens } from "./tokens/estimate.ts";
export { countTokens } from "./tokens/exact.ts";
export { createTokenCounter, type TokenCounter } from "./tokens/count.ts";
export * from "./compaction/types.ts";
export * from "./compaction/config.ts";
