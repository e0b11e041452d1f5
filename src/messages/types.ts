// The message model: the Anthropic Messages API shape, which lethe uses inside.
// Other providers convert to and from it at the edges (see ./openai.ts).

export interface TextBlock {
  type: "text";
  text: string;
  /** Provider extras we carry untouched (citations, cache_control, …). */
  [extra: string]: unknown;
}

export interface ImageBlock {
  type: "image";
  source:
    | { type: "base64"; media_type: string; data: string }
    | { type: "url"; url: string }
    | { type: string; [k: string]: unknown };
  [extra: string]: unknown;
}

export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  signature?: string;
  [extra: string]: unknown;
}

export interface RedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
  [extra: string]: unknown;
}

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

export type ContentBlock =
  | TextBlock
  | ImageBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ToolUseBlock
  | ToolResultBlock;

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

export type History = readonly Message[];
