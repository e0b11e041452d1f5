// Model clients: one interface, SDK-backed implementations (Anthropic, OpenAI-compatible Chat Completions,
// OpenAI's Responses API), normalised errors, retries and the table of known models.
export * from "./types.ts";
export * from "./errors.ts";
export * from "./models.ts";
export * from "./retry.ts";
export { parseToolInput } from "./tool-input.ts";
export {
  createAnthropicClient,
  mapAnthropicStopReason,
  toAnthropicMessages,
  AnthropicAssembler,
  type AnthropicClientOptions,
  type AnthropicModelClient,
} from "./anthropic.ts";
export {
  createOpenAIClient,
  mapOpenAIFinishReason,
  mapOpenAIUsage,
  toOpenAITools,
  OpenAIAssembler,
  type OpenAIClientOptions,
  type OpenAIConnectionOptions,
  type OpenAIModelClient,
} from "./openai.ts";
export {
  createOpenAIResponsesClient,
  toResponsesTools,
  ResponsesAssembler,
  type OpenAIResponsesClientOptions,
  type OpenAIResponsesModelClient,
} from "./openai-responses.ts";
