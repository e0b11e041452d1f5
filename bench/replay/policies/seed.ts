// `seed`: the course's s08 rules (learn-claude-code, s08_context_compact), implemented here as the
// baseline, sizes in characters, the whole history re-serialised every turn as the course does.
//
//   tool_result_budget → snip_compact → micro_compact → estimate = len(json(messages)) / 4
//   → over threshold? (summary: the shared stand-in, see ../standin-summary.ts)
//
// Faithfulness notes:
// - The course mutates `messages` in place (`messages[:] = …`, `block["content"] = …`). The replay
//   must not corrupt the recorded corpus objects (they are frozen and shared by every policy), so
//   this port is copy-on-write: it returns a new array and replaces only the blocks/messages it
//   changes (a shallow copy of the changed message and its block list). Unchanged messages keep
//   their identity. That is cheaper than deep-copying the history each turn, and close to the
//   course's own cost (which re-serialises everything anyway).
// - Sizes follow Python: the budget measures `len(str(content))` (a block-list content is
//   measured by its JSON, close to Python's repr); micro tests `len(block.get("content", ""))`,
//   which for a block-list content is the number of blocks (so such results are never cleared).
// - snip has no hysteresis: once the history passes 50 messages it fires on every request, and its
//   placeholder is a user message placed after the head's last message (a user message): two user
//   messages in a row. That violation is the course's; the replay counts it.
// - The estimate covers the messages only, as the course's estimate_token_count(messages) does.
// - Persisting writes the full result to <dir>/tool-results/<tool_use_id>.txt (plain write, as the
//   course's Path.write_text).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ContentBlock, Message, ToolResultBlock } from "../../../src/messages/types.ts";
import { resultFileName } from "../../../src/session/tool-results.ts";
import { type Policy, type PolicySession, claudeCodeThreshold } from "../types.ts";

export const SEED = {
  budgetMaxChars: 200_000,
  previewChars: 2_000,
  snipMaxMessages: 50,
  snipHead: 3,
  keepRecentResults: 3,
  microMinChars: 120,
  microPlaceholder: "[Earlier tool result compacted. Re-run if needed.]",
} as const;

/** Python's len(str(content)). */
function strLen(content: ToolResultBlock["content"]): number {
  if (content === undefined) return 0;
  return typeof content === "string" ? content.length : JSON.stringify(content).length;
}

/** Python's str(content). */
function str(content: ToolResultBlock["content"]): string {
  if (content === undefined) return "";
  return typeof content === "string" ? content : JSON.stringify(content);
}

/** Python's len(block.get("content", "")): characters of a string, items of a list. */
function pyLen(content: ToolResultBlock["content"]): number {
  return content === undefined ? 0 : content.length;
}

function hasToolUse(m: Message | undefined): boolean {
  return !!m && typeof m.content !== "string" && m.content.some((b) => b.type === "tool_use");
}

function isToolResultMessage(m: Message | undefined): boolean {
  return !!m && m.role === "user" && typeof m.content !== "string" && m.content.some((b) => b.type === "tool_result");
}

export type Persist = (toolUseId: string, text: string) => string;

export function persistedOutput(path: string, text: string): string {
  return (
    `<persisted-output>\nOutput too large (${text.length} chars). Full output saved to: ${path}\n` +
    `Preview (first ${SEED.previewChars} chars):\n${text.slice(0, SEED.previewChars)}\n</persisted-output>`
  );
}

/** L3 tool_result_budget: the last message's results over 200k chars → persist, largest first. */
export function toolResultBudget(messages: Message[], persist: Persist): Message[] {
  const last = messages[messages.length - 1];
  if (!last || typeof last.content === "string") return messages;
  const blocks: { j: number; b: ToolResultBlock }[] = [];
  last.content.forEach((b, j) => {
    if (b.type === "tool_result") blocks.push({ j, b });
  });
  let total = 0;
  for (const { b } of blocks) total += strLen(b.content);
  if (total <= SEED.budgetMaxChars) return messages;
  const content = last.content.slice();
  const ranked = blocks.slice().sort((x, y) => strLen(y.b.content) - strLen(x.b.content));
  for (const { j, b } of ranked) {
    if (total <= SEED.budgetMaxChars) break;
    content[j] = { ...b, content: persist(b.tool_use_id, str(b.content)) };
    total = 0;
    for (const { j: k } of blocks) total += strLen((content[k] as ToolResultBlock).content);
  }
  return [...messages.slice(0, -1), { ...last, content }];
}

/** L1 snip_compact: > 50 messages → first 3 + placeholder + last 47, with its one boundary guard. */
export function snipCompact(messages: Message[]): Message[] {
  const max = SEED.snipMaxMessages;
  if (messages.length <= max) return messages;
  let headEnd = SEED.snipHead;
  let tailStart = messages.length - (max - SEED.snipHead);
  if (hasToolUse(messages[headEnd - 1])) {
    while (headEnd < messages.length && isToolResultMessage(messages[headEnd])) headEnd++;
  }
  if (isToolResultMessage(messages[tailStart]) && hasToolUse(messages[tailStart - 1])) tailStart--;
  const snipped = tailStart - headEnd;
  const placeholder: Message = { role: "user", content: `[snipped ${snipped} messages from conversation middle]` };
  return [...messages.slice(0, headEnd), placeholder, ...messages.slice(tailStart)];
}

/** L2 micro_compact: all but the 3 newest tool_result blocks, if longer than 120 → placeholder. */
export function microCompact(messages: Message[]): Message[] {
  const found: { i: number; j: number; b: ToolResultBlock }[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "user" || typeof m.content === "string") continue;
    const c = m.content;
    for (let j = 0; j < c.length; j++) {
      const b = c[j]!;
      if (b.type === "tool_result") found.push({ i, j, b });
    }
  }
  if (found.length <= SEED.keepRecentResults) return messages;
  let out: Message[] | null = null;
  const copied = new Map<number, ContentBlock[]>();
  for (let k = 0; k < found.length - SEED.keepRecentResults; k++) {
    const { i, j, b } = found[k]!;
    if (pyLen(b.content) <= SEED.microMinChars) continue;
    out ??= messages.slice();
    let blocks = copied.get(i);
    if (!blocks) {
      blocks = (messages[i]!.content as ContentBlock[]).slice();
      copied.set(i, blocks);
      out[i] = { ...messages[i]!, content: blocks };
    }
    blocks[j] = { ...b, content: SEED.microPlaceholder };
  }
  return out ?? messages;
}

/** The course's estimate: len(json(messages)) / 4, the whole history serialised every turn. */
export function estimateTokenCount(messages: readonly Message[]): number {
  return JSON.stringify(messages).length / 4;
}

export const seedPolicy: Policy = {
  name: "seed",
  describe:
    "course s08 rules in characters: tool_result_budget (last message > 200,000 chars → persist largest first, 2,000-char preview), " +
    "snip_compact (> 50 messages → first 3 + placeholder + last 47), micro_compact (keep 3 newest results, older > 120 chars → placeholder), " +
    "estimate = JSON.stringify(messages).length / 4 every turn, threshold = window − min(maxOutput, 20k) − 13k (83.5% of the window if ≤ 0); copy-on-write instead of in-place mutation",
  start({ window, dir }): PolicySession {
    const threshold = claudeCodeThreshold(window);
    const resultsDir = join(dir, "tool-results");
    let made = false;
    const persist: Persist = (id, text) => {
      if (!made) {
        mkdirSync(resultsDir, { recursive: true });
        made = true;
      }
      const path = join(resultsDir, resultFileName(id));
      writeFileSync(path, text);
      return persistedOutput(path, text);
    };
    return {
      threshold,
      prepare(live) {
        const acted: string[] = [];
        let messages = live as Message[];
        let next = toolResultBudget(messages, persist);
        if (next !== messages) acted.push("budget");
        messages = next;
        next = snipCompact(messages);
        if (next !== messages) acted.push("snip");
        messages = next;
        next = microCompact(messages);
        if (next !== messages) acted.push("micro");
        messages = next;
        const overThreshold = estimateTokenCount(messages) > threshold;
        return { history: messages, overThreshold, acted };
      },
      observe() {},
    };
  },
};
