// The history invariants every request must satisfy (SPEC "Invariants"), a validator that
// reports every violation, and a repair that fixes what can be fixed without losing text.
//
// Rules (Anthropic Messages API):
// - the first message is `user`, roles alternate;
// - no empty content: no empty or blank string content, no empty block list, no blank text block
//   (the API rejects empty and whitespace-only text blocks);
// - tool_use only in assistant messages, tool_result only in user messages;
// - every tool_result answers a tool_use of the immediately preceding assistant message, once;
// - every tool_use is answered in the immediately following user message (a trailing assistant
//   message with tool_use is tolerated only with `allowTrailingToolUse`);
// - tool_use ids are unique over the whole history;
// - in a user message, tool_result blocks come before every other block.
//
// Both functions are O(total blocks) and never serialise content.
import { checkHistory, show } from "./input.ts";
import type { ContentBlock, Message, Role, ToolResultBlock } from "./types.ts";

export type ViolationKind =
  | "orphan_tool_result"
  | "unanswered_tool_use"
  | "role_order"
  | "empty_content"
  | "duplicate_tool_use_id"
  | "duplicate_tool_result"
  | "tool_result_not_first"
  | "misplaced_block";

export interface Violation {
  kind: ViolationKind;
  /** Index of the message in the history. */
  index: number;
  /** Index of the block in that message's content, where the violation is about one block. */
  blockIndex?: number;
  /** The tool_use id concerned, for pairing violations. */
  toolUseId?: string;
  /** One line, human-readable. */
  message: string;
}

export interface ValidateOptions {
  /**
   * Accept a trailing assistant message whose tool_use blocks have no results yet (an agent's
   * history right after the model replied). Default false: a request must not be sent like that.
   */
  allowTrailingToolUse?: boolean;
}

/** Stops a validation at its first violation ("is it valid?" needs no list of 100k problems). */
class FirstOnly extends Array<Violation> {
  override push(...items: Violation[]): number {
    super.push(...items);
    throw FIRST_FOUND;
  }
}
const FIRST_FOUND = Symbol("first violation found");

/** Whether the history is valid, stopping at the first violation. */
export function isValid(history: readonly Message[], opts: ValidateOptions = {}): boolean {
  return validate(history, opts, true).length === 0;
}

/** True for text the API would reject as empty (empty or whitespace-only). */
export function isBlankText(text: unknown): boolean {
  return typeof text !== "string" || text.trim() === "";
}

interface PendingUse {
  blockIndex: number;
  answered: boolean;
}

/**
 * Every violation of the history invariants, ordered by message index then block index.
 * An empty array means the history can be sent.
 */
export function validate(history: readonly Message[], opts: ValidateOptions = {}, firstOnly = false): Violation[] {
  checkHistory(history);
  const out: Violation[] = firstOnly ? new FirstOnly() : [];
  try {
    check(history, opts, out);
  } catch (e) {
    if (e !== FIRST_FOUND) throw e;
  }
  return firstOnly ? Array.from(out) : out;
}

function check(history: readonly Message[], opts: ValidateOptions, out: Violation[]): void {
  const seenUseIds = new Set<string>();
  // tool_use blocks of the previous message when it is an assistant message.
  let expected: Map<string, PendingUse> | null = null;
  let expectedAt = -1;

  const closeExpected = (trailing: boolean) => {
    if (!expected) return;
    for (const [id, use] of expected) {
      if (use.answered) continue;
      out.push({
        kind: "unanswered_tool_use",
        index: expectedAt,
        blockIndex: use.blockIndex,
        toolUseId: id,
        message: trailing
          ? `tool_use ${id} in the last message has no result`
          : `tool_use ${id} has no tool_result in message ${expectedAt + 1}`,
      });
    }
    expected = null;
  };

  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    const role = m.role;
    if (role !== "user" && role !== "assistant") {
      out.push({ kind: "role_order", index: i, message: `unknown role ${show(role)}` });
    } else if (i === 0 && role !== "user") {
      out.push({ kind: "role_order", index: i, message: "the first message is not a user message" });
    } else if (i > 0 && history[i - 1]!.role === role) {
      out.push({ kind: "role_order", index: i, message: `two ${role} messages in a row (${i - 1}, ${i})` });
    }

    const answering: Map<string, PendingUse> | null = role === "user" ? expected : null;
    let uses: Map<string, PendingUse> | null = null;
    const content = m.content as unknown;

    if (typeof content === "string") {
      if (isBlankText(content)) out.push({ kind: "empty_content", index: i, message: "empty text content" });
    } else if (!Array.isArray(content)) {
      out.push({ kind: "empty_content", index: i, message: "content is neither a string nor a block list" });
    } else if (content.length === 0) {
      out.push({ kind: "empty_content", index: i, message: "empty block list" });
    } else {
      const blocks = content as ContentBlock[];
      let blank = 0;
      let firstBlank = out.length; // where the per-block empty_content entries start
      let seenNonResult = false;
      for (let k = 0; k < blocks.length; k++) {
        const b = blocks[k]!;
        switch (b.type) {
          case "text":
            seenNonResult = true;
            if (isBlankText(b.text)) {
              if (blank === 0) firstBlank = out.length;
              blank++;
              out.push({ kind: "empty_content", index: i, blockIndex: k, message: "empty text block" });
            }
            break;
          case "tool_result": {
            const id = b.tool_use_id;
            if (role !== "user") {
              out.push({
                kind: "misplaced_block",
                index: i,
                blockIndex: k,
                toolUseId: id,
                message: `tool_result ${id} in an assistant message`,
              });
              break;
            }
            if (seenNonResult) {
              out.push({
                kind: "tool_result_not_first",
                index: i,
                blockIndex: k,
                toolUseId: id,
                message: `tool_result ${id} comes after a non-tool_result block`,
              });
            }
            const use = answering?.get(id);
            if (!use) {
              out.push({
                kind: "orphan_tool_result",
                index: i,
                blockIndex: k,
                toolUseId: id,
                message: `tool_result ${id} has no tool_use in the preceding assistant message`,
              });
            } else if (use.answered) {
              out.push({
                kind: "duplicate_tool_result",
                index: i,
                blockIndex: k,
                toolUseId: id,
                message: `second tool_result for tool_use ${id}`,
              });
            } else {
              use.answered = true;
            }
            break;
          }
          case "tool_use": {
            seenNonResult = true;
            const id = b.id;
            if (role !== "assistant") {
              out.push({
                kind: "misplaced_block",
                index: i,
                blockIndex: k,
                toolUseId: id,
                message: `tool_use ${id} in a user message`,
              });
              break;
            }
            uses ??= new Map();
            if (seenUseIds.has(id)) {
              out.push({
                kind: "duplicate_tool_use_id",
                index: i,
                blockIndex: k,
                toolUseId: id,
                message: `tool_use id ${id} is used more than once`,
              });
            } else {
              seenUseIds.add(id);
            }
            // A duplicate from an earlier message still pairs with its result here.
            if (!uses.has(id)) uses.set(id, { blockIndex: k, answered: false });
            break;
          }
          default:
            seenNonResult = true;
        }
      }
      if (blank === blocks.length) {
        // All blocks are blank text: one message-level violation instead of one per block.
        out.splice(firstBlank, blank, {
          kind: "empty_content",
          index: i,
          message: "every block is empty text",
        });
      }
    }

    closeExpected(false);
    if (uses) {
      expected = uses;
      expectedAt = i;
    }
  }
  if (!opts.allowTrailingToolUse) closeExpected(true);

  // Unanswered uses are found one message late: restore index order (stable sort).
  out.sort((a, b) => a.index - b.index || (a.blockIndex ?? -1) - (b.blockIndex ?? -1));
}


