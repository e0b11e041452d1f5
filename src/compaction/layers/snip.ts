// Layer 2, snip: drop the middle of a very long history, keep the head (the original
// task) and the newest messages, and leave one boundary note saying how many messages
// went and where they are archived.
//
// Like a summary's rebuild, the boundary carries the user's own messages and the file
// ledger of what it removed, so a later compaction still sees them, and a record of the
// work done there (commands with outcomes, the agent's conclusions: work.ts).
//
// Cut points keep every tool_use/tool_result pair whole: the head ends with a user
// message (so any tool_use in it is answered inside the head) and the tail starts with
// an assistant message (so no tool_result in the tail lost its tool_use). The boundary
// note is appended to the head's last user message, which keeps roles alternating.
import { blocksOf } from "../../messages/blocks.ts";
import type { ContentBlock, Message } from "../../messages/types.ts";

const isCarried = (text: string) => isLetheText(text) || text.startsWith(USER_MESSAGE_PREFIX);
import { rebuildBudgets, snipGateTokens, thresholdOf } from "../config/config.ts";
import { renderLedgerWithin } from "../state/ledger.ts";
import { attachmentsAfter, ledgerAfter, readAhead, readMiddle, readPart } from "../state/middle.ts";
import { USER_MESSAGE_PREFIX, carryAttachmentsRead, isLetheText, selectUserMessages, userMessagesOf } from "../state/retain.ts";
import { recordedTokens, snipBoundary } from "./markers.ts";
import { carriedWorkOf, renderWorkWithin, workRecordFrom } from "../state/work.ts";
import type { LayerContext, LayerResult, SnipEvent } from "../types.ts";

/** Where the head ends: after `keepHead` messages, and after a user message. */
function snipHead(history: readonly Message[], keepHead: number): number {
  const n = history.length;
  let head = Math.min(keepHead, n);
  while (head < n && history[head - 1]!.role !== "user") head++;
  return head;
}

/** Where the head ends and the tail starts, or null when nothing can be cut. */
export function snipCut(history: readonly Message[], keepHead: number, targetMessages: number): { head: number; tail: number } | null {
  const n = history.length;
  const head = snipHead(history, keepHead);
  let tail = Math.max(head, n - (targetMessages - head));
  while (tail < n && history[tail]!.role !== "assistant") tail++;
  // Keep at least the newest assistant turn and the request after it.
  if (tail >= n - 1 || tail <= head) return null;
  return { head, tail };
}

/**
 * A message's tokens before budget or micro shrank its results (at the size their markers record):
 * snipPays must not change its mind because micro acted after it (prepare run twice gives the same
 * history).
 */
function sizeBefore(m: Message, ctx: LayerContext): number {
  let n = ctx.tokens.message(m);
  if (typeof m.content === "string") return n;
  for (const b of m.content) {
    const was = b.type === "tool_result" ? recordedTokens(b.content) : undefined;
    if (was !== undefined) n += Math.max(0, was - ctx.tokens.block(b));
  }
  return n;
}

/**
 * The block carrying `text`: the one the last snip carried (`before`, by text) when it carried the
 * same text, each at most once, else a new one. Its tokens, and its JSON in the transcript's head,
 * are memoised per block and not worked out again.
 */
function carriedBlock(before: Map<string, ContentBlock>, text: string): ContentBlock {
  const b = before.get(text);
  if (b === undefined) return { type: "text", text };
  before.delete(text);
  return b;
}

/**
 * Whether snipping now pays for itself. After a snip, the bounded head message and the tail are
 * written to the prompt cache again (W tokens at 1.25×); until then, every request reads the
 * middle (E tokens at 0.1×). With the context growing g tokens a request, the cost per request
 * of snipping whenever the middle reaches E is 0.05·E + 1.25·W·g/E, least at E = √(25·W·g):
 * snip once the middle is that large. g is measured since the last snip (tokens per model turn).
 */
export function snipPays(history: readonly Message[], cut: { head: number; tail: number }, ctx: LayerContext): boolean {
  let middle = 0, kept = sizeBefore(history[cut.head - 1]!, ctx), since = 0, turns = 0;
  for (let i = cut.head; i < history.length; i++) {
    const t = sizeBefore(history[i]!, ctx);
    if (i < cut.tail) middle += t;
    else kept += t;
    since += t;
    if (history[i]!.role === "assistant") turns++;
  }
  const growth = since / Math.max(1, turns);
  return middle * middle >= 25 * kept * growth;
}

/** Layer 2: past the message trigger and under pressure, drops the middle of the history, keeping the head, the newest messages, and a note carrying the user's messages and the file ledger. */
export function snip(history: readonly Message[], ctx: LayerContext): LayerResult<SnipEvent> {
  const cfg = ctx.config.snip;
  const none = { history: history as Message[], freedTokens: 0, event: null };
  if (!cfg.enabled) return none;
  // What the next snip removes is read a few messages a request, as it forms (../state/middle.ts):
  // from the head to where the tail starts at the earliest.
  if (ctx.middle) {
    const head = snipHead(history, cfg.keepHead);
    readAhead(ctx.middle, history, head, Math.max(head, history.length - (cfg.targetMessages - head)));
  }
  if (history.length <= (cfg.cacheAware ? cfg.targetMessages + 1 : cfg.triggerMessages)) return none;
  const gate = snipGateTokens(thresholdOf(ctx), ctx.config);
  if (gate > 0 && (ctx.fixedTokens ?? 0) + ctx.tokens.messages(history) < gate) return none;
  const cut = snipCut(history, cfg.keepHead, cfg.targetMessages);
  if (!cut) return none;
  if (cfg.cacheAware && history.length <= cfg.triggerMessages && !snipPays(history, cut, ctx)) return none;

  const last = history[cut.head - 1]!;
  const note = snipBoundary({ removed: cut.tail - cut.head, from: cut.head, to: cut.tail, archivePath: ctx.archivePath });
  // What must survive verbatim goes with the boundary (as it does with a summary): the
  // user's own messages and the file ledger of the removed part, plus what an earlier
  // snip carried here. The head message's own content stays as it was.
  const own = blocksOf(last).filter((b) => !(b.type === "text" && isCarried(b.text)));
  const carriedBefore: Message = { role: "user", content: blocksOf(last).filter((b) => b.type === "text" && isCarried(b.text)) };
  // What the removed part holds, read as it formed (or now, without the engine's reading); what the
  // head carried comes before it.
  const read = (ctx.middle && readMiddle(ctx.middle, history, cut.head, cut.tail)) || readPart(history.slice(cut.head, cut.tail));
  const budgets = rebuildBudgets(ctx.window, ctx.config);
  const users = selectUserMessages([...userMessagesOf([carriedBefore]), ...read.users], budgets.userMessagesTokens, ctx.tokens, budgets.latestRequestTokens);
  const kept = users.latest === undefined ? users.kept : [...users.kept, users.latest];
  const ledger = ledgerAfter(carriedBefore, read.ledger);
  // A text the last snip carried too keeps its block (carriedBlock).
  const before = new Map<string, ContentBlock>();
  for (const b of carriedBefore.content as ContentBlock[]) if (b.type === "text") before.set(b.text, b);
  const carried: ContentBlock[] = [carriedBlock(before, note), ...kept.map((t) => carriedBlock(before, `${USER_MESSAGE_PREFIX}${t}`))];
  const attachments = carryAttachmentsRead(attachmentsAfter(carriedBefore, read.attachments), budgets.restoreTotalTokens, ctx.tokens, ctx.archivePath ? ` (${ctx.archivePath})` : "").blocks;
  // Its first block is its note (a new text block); the others are the attachments themselves.
  carried.push(...attachments.map((b, k) => (k === 0 && b.type === "text" ? carriedBlock(before, b.text) : b)));
  // Capped as a rebuild caps it (modified files first): uncapped, it grew with every snip.
  if (ledger.read.size + ledger.modified.size > 0) carried.push(carriedBlock(before, renderLedgerWithin(ledger, budgets.ledgerTokens, ctx.tokens)));
  // What was tried and how it ended: without it the agent repeats work after a snip.
  const work = workRecordFrom(carriedWorkOf([carriedBefore]), read.commands, read.assistants);
  const workText = renderWorkWithin(work, budgets.workTokens, ctx.tokens);
  if (workText) carried.push(carriedBlock(before, workText));
  const bounded: Message = { ...last, content: [...own, ...carried] };
  const out = [...history.slice(0, cut.head - 1), bounded, ...history.slice(cut.tail)];

  // The removed messages' tokens: a range of the running sums the gate left (or a walk of it).
  const freed = ctx.tokens.message(last) - ctx.tokens.message(bounded) + ctx.tokens.messages(history, cut.head, cut.tail);
  if (freed <= 0) return none;
  return {
    history: out,
    freedTokens: freed,
    event: {
      kind: "snip",
      removedMessages: cut.tail - cut.head,
      from: cut.head,
      to: cut.tail,
      messagesBefore: history.length,
      messagesAfter: out.length,
      freedTokens: freed,
      ledger: { read: [...ledger.read], modified: [...ledger.modified] },
    },
  };
}
