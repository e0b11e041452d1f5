// Small read-only helpers over messages and blocks, shared by every layer.
import type {
  ContentBlock,
  Message,
  ToolResultBlock,
  ToolUseBlock,
} from "./types.ts";
import { describeMedia } from "./media.ts";

/** The blocks of a message; a plain string becomes one text block. */
export function blocksOf(message: Message): ContentBlock[] {
  return typeof message.content === "string"
    ? [{ type: "text", text: message.content }]
    : message.content;
}

/** The tool_use blocks of a message. */
export function toolUsesOf(message: Message): ToolUseBlock[] {
  if (typeof message.content === "string") return [];
  return message.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
}

/** The tool_result blocks of a message. */
export function toolResultsOf(message: Message): ToolResultBlock[] {
  if (typeof message.content === "string") return [];
  return message.content.filter((b): b is ToolResultBlock => b.type === "tool_result");
}

/** Whether a message calls a tool. */
export function hasToolUse(message: Message): boolean {
  return message.role === "assistant" && toolUsesOf(message).length > 0;
}

/**
 * The exact text form of a tool result's content, as written to disk when it is
 * persisted: a string stays itself; a block list is its JSON, so nothing is lost
 * (images included) and the original can be restored byte for byte.
 */
export function resultText(content: ToolResultBlock["content"]): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  return JSON.stringify(content);
}

/** The readable text of a result (text blocks joined), for previews and search. */
export function resultPlainText(content: ToolResultBlock["content"]): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .map((b) => (b.type === "text" ? b.text : `[${describeMedia(b)}]`))
    .join("\n");
}

/**
 * The tool_use a result in history[index] answers. In a valid history it sits in the
 * assistant message right before, so this is O(that message), not O(history).
 */
export function toolUseFor(history: readonly Message[], index: number, toolUseId: string): ToolUseBlock | undefined {
  // Micro asks this of every result it has seen, on every request: nothing is allocated.
  for (let i = index - 1; i >= 0; i--) {
    const c = history[i]!.content;
    if (typeof c === "string") continue;
    for (const b of c) if (b.type === "tool_use" && b.id === toolUseId) return b;
  }
  return undefined;
}
