// The message model: the Anthropic Messages API shape, which lethe uses inside.
// Other providers convert to and from it at the edges (see ./openai.ts).

/** Text. */
export interface TextBlock {
  type: "text";
  text: string;
  /** Provider extras we carry untouched (citations, cache_control, …). */
  [extra: string]: unknown;
}

/** An image, inline (base64) or by URL. */
export interface ImageBlock {
  type: "image";
  source:
    | { type: "base64"; media_type: string; data: string }
    | { type: "url"; url: string }
    | { type: string; [k: string]: unknown };
  [extra: string]: unknown;
}

/** A model's reasoning, with the provider's signature when it has one. */
export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  signature?: string;
  [extra: string]: unknown;
}

/** Reasoning the provider returned encrypted. */
export interface RedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
  [extra: string]: unknown;
}

/** A tool call in an assistant message. */
export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
  [extra: string]: unknown;
}

/** What a tool_result may hold when its content is a list of blocks. */
export type ToolResultContentBlock = TextBlock | ImageBlock;

export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | ToolResultContentBlock[];
  is_error?: boolean;
  [extra: string]: unknown;
}

/**
 * Anthropic's server-side compaction: the server's summary of everything before it. Sent back
 * verbatim (content, encrypted_content, signature); the server ignores the blocks before it.
 * null content is a compaction that failed (the server treats it as a no-op).
 */
export interface CompactionBlock {
  type: "compaction";
  content?: string | null;
  encrypted_content?: string | null;
  signature?: string | null;
  [extra: string]: unknown;
}

/** Any block of a message (unknown provider blocks pass through as they are). */
export type ContentBlock =
  | TextBlock
  | ImageBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ToolUseBlock
  | ToolResultBlock
  | CompactionBlock;

/** Who wrote a message. */
export type Role = "user" | "assistant";

export interface Message {
  role: Role;
  /** A plain string is accepted on input; the engine normalises to blocks. */
  content: string | ContentBlock[];
}

/** A message whose content is always a block list (what the engine works on). */
export interface BlockMessage extends Message {
  content: ContentBlock[];
}

/** A conversation. */
export type History = readonly Message[];
