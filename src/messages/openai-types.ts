// Minimal OpenAI Chat Completions message types: the subset lethe converts to and
// from (see ./openai.ts). Structurally compatible with the official `openai`
// package's ChatCompletionMessageParam, plus two optional non-standard fields:
// `reasoning_content` (DeepSeek / vLLM / OpenRouter convention) and `lethe`.

/** A text part of a user message's content. */
export interface OpenAITextPart {
  type: "text";
  text: string;
}

/** An image part of a user message's content (a URL or a data: URL). */
export interface OpenAIImagePart {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" };
}

/** One part of a user message's content. */
export type OpenAIUserPart = OpenAITextPart | OpenAIImagePart;

/** A function call an assistant message makes (`tool_calls[]`). */
export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * What an OpenAI message cannot say about the Anthropic message behind it.
 * Written by `toOpenAI` only when the plain decoding would differ; omitted in strict mode.
 */
export interface LetheExtension {
  /**
   * The Anthropic blocks behind this message, in their original order, minus the
   * fields the OpenAI message already carries (text, tool call id/name/arguments,
   * image source, the single reasoning text, tool result id/content). In a tool
   * message: the one tool_result block; there `content: null` means "no content".
   */
  blocks?: Record<string, unknown>[];
  /** Assistant: the Anthropic content was a plain string, not a block list. */
  string?: true;
  /** Tool/user: starts a new Anthropic user message instead of joining the tool messages before it. */
  split?: true;
  /** First tool message of a group: the Anthropic block order, t = tool_result, u = other, when results do not all come first. */
  order?: string;
}

/** A system (or developer) message. */
export interface OpenAISystemMessage {
  role: "system" | "developer";
  content: string | OpenAITextPart[];
  name?: string;
}

/** A user message: text, or text and image parts. */
export interface OpenAIUserMessage {
  role: "user";
  content: string | OpenAIUserPart[];
  name?: string;
  lethe?: LetheExtension;
}

/** An assistant message: its text, tool calls, and reasoning where the server sends it. */
export interface OpenAIAssistantMessage {
  role: "assistant";
  content?: string | OpenAITextPart[] | null;
  tool_calls?: OpenAIToolCall[];
  reasoning_content?: string | null;
  name?: string;
  lethe?: LetheExtension;
}

/** A tool's result, answering one tool call by its id. */
export interface OpenAIToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string | OpenAITextPart[];
  lethe?: LetheExtension;
}

/** Any Chat Completions message lethe converts to or from. */
export type OpenAIMessage =
  | OpenAISystemMessage
  | OpenAIUserMessage
  | OpenAIAssistantMessage
  | OpenAIToolMessage;
