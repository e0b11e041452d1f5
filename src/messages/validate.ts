// The history invariants every request must satisfy (SPEC "Invariants"), a validator that
// reports every violation, and a repair that fixes what can be fixed without losing text.
//
// Rules (Anthropic Messages API):
// - the first message is `user` (or an assistant message that starts with a server-side
//   `compaction` block: the API's own summary, sent first), roles alternate;
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
import { leadingCompaction } from "./compaction.ts";
import { checkHistory, show } from "./input.ts";
import type { ContentBlock, Message } from "./types.ts";

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

/** The state of one pass: what was found, the ids seen, the tool_use blocks awaiting results. */
interface Pass {
  out: Violation[];
  seenUseIds: Set<string>;
  /** tool_use blocks of the previous message when it is an assistant message. */
  expected: Map<string, PendingUse> | null;
  expectedAt: number;
}

function check(history: readonly Message[], opts: ValidateOptions, out: Violation[]): void {
  const pass: Pass = { out, seenUseIds: new Set(), expected: null, expectedAt: -1 };
  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    const role = m.role;
    if (role !== "user" && role !== "assistant") out.push({ kind: "role_order", index: i, message: `unknown role ${show(role)}` });
    else if (i === 0 && role !== "user" && !leadingCompaction(history)) out.push({ kind: "role_order", index: i, message: "the first message is not a user message" });
    else if (i > 0 && history[i - 1]!.role === role) out.push({ kind: "role_order", index: i, message: `two ${role} messages in a row (${i - 1}, ${i})` });

    const content = m.content as unknown;
    let uses: Map<string, PendingUse> | null = null;
    if (typeof content === "string") {
      if (isBlankText(content)) out.push({ kind: "empty_content", index: i, message: "empty text content" });
    } else if (!Array.isArray(content)) {
      out.push({ kind: "empty_content", index: i, message: "content is neither a string nor a block list" });
    } else if (content.length === 0) {
      out.push({ kind: "empty_content", index: i, message: "empty block list" });
    } else {
      uses = checkBlocks(pass, i, role, content as ContentBlock[], role === "user" ? pass.expected : null);
    }
    closeExpected(pass, false);
    if (uses) {
      pass.expected = uses;
      pass.expectedAt = i;
    }
  }
  if (!opts.allowTrailingToolUse) closeExpected(pass, true);

  // Unanswered uses are found one message late: restore index order (stable sort).
  out.sort((a, b) => a.index - b.index || (a.blockIndex ?? -1) - (b.blockIndex ?? -1));
}

/** Reports the previous assistant message's tool_use blocks that got no result. */
function closeExpected(pass: Pass, trailing: boolean): void {
  if (!pass.expected) return;
  for (const [id, use] of pass.expected) {
    if (use.answered) continue;
    const message = trailing ? `tool_use ${id} in the last message has no result` : `tool_use ${id} has no tool_result in message ${pass.expectedAt + 1}`;
    pass.out.push({ kind: "unanswered_tool_use", index: pass.expectedAt, blockIndex: use.blockIndex, toolUseId: id, message });
  }
  pass.expected = null;
}

/** One message's blocks; returns its tool_use blocks (an assistant message's), to be answered next. */
function checkBlocks(pass: Pass, i: number, role: string, blocks: ContentBlock[], answering: Map<string, PendingUse> | null): Map<string, PendingUse> | null {
  const { out } = pass;
  let uses: Map<string, PendingUse> | null = null;
  let blank = 0;
  let firstBlank = out.length; // where the per-block empty_content entries start
  let seenNonResult = false;
  for (let k = 0; k < blocks.length; k++) {
    const b = blocks[k]!;
    if (b.type === "tool_result") {
      checkResult(pass, i, k, role, b.tool_use_id, seenNonResult, answering);
      continue;
    }
    seenNonResult = true;
    if (b.type === "text" && isBlankText(b.text)) {
      if (blank === 0) firstBlank = out.length;
      blank++;
      out.push({ kind: "empty_content", index: i, blockIndex: k, message: "empty text block" });
    } else if (b.type === "tool_use") {
      if (role !== "assistant") {
        out.push({ kind: "misplaced_block", index: i, blockIndex: k, toolUseId: b.id, message: `tool_use ${b.id} in a user message` });
        continue;
      }
      uses ??= new Map();
      if (pass.seenUseIds.has(b.id)) out.push({ kind: "duplicate_tool_use_id", index: i, blockIndex: k, toolUseId: b.id, message: `tool_use id ${b.id} is used more than once` });
      else pass.seenUseIds.add(b.id);
      // A duplicate from an earlier message still pairs with its result here.
      if (!uses.has(b.id)) uses.set(b.id, { blockIndex: k, answered: false });
    }
  }
  // All blocks are blank text: one message-level violation instead of one per block.
  if (blank === blocks.length) out.splice(firstBlank, blank, { kind: "empty_content", index: i, message: "every block is empty text" });
  return uses;
}

function checkResult(pass: Pass, i: number, k: number, role: string, id: string, seenNonResult: boolean, answering: Map<string, PendingUse> | null): void {
  const { out } = pass;
  if (role !== "user") {
    out.push({ kind: "misplaced_block", index: i, blockIndex: k, toolUseId: id, message: `tool_result ${id} in an assistant message` });
    return;
  }
  if (seenNonResult) out.push({ kind: "tool_result_not_first", index: i, blockIndex: k, toolUseId: id, message: `tool_result ${id} comes after a non-tool_result block` });
  const use = answering?.get(id);
  if (!use) out.push({ kind: "orphan_tool_result", index: i, blockIndex: k, toolUseId: id, message: `tool_result ${id} has no tool_use in the preceding assistant message` });
  else if (use.answered) out.push({ kind: "duplicate_tool_result", index: i, blockIndex: k, toolUseId: id, message: `second tool_result for tool_use ${id}` });
  else use.answered = true;
}


