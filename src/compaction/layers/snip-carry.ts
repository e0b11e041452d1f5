// What a snip leaves at its boundary, in the head's last message: a note of what went and where it
// is archived, the user's own messages, the attachments read, the file ledger and the work record
// of the removed part, after what an earlier snip carried there (./snip.ts).
import { blocksOf } from "../../messages/blocks.ts";
import type { ContentBlock, Message } from "../../messages/types.ts";
import { rebuildBudgets } from "../config/config.ts";
import { renderLedgerWithin } from "../state/ledger.ts";
import { type Carry, attachmentsAfter, ledgerAfter, readMiddle, readPart } from "../state/middle.ts";
import { USER_MESSAGE_PREFIX, carryAttachmentsRead, isLetheText, selectUserMessages, userMessagesOf } from "../state/retain.ts";
import { snipBoundary } from "./markers.ts";
import { carriedWorkOf, renderWorkWithin, workRecordFrom } from "../state/work.ts";
import type { LayerContext } from "../types.ts";

const isCarried = (text: string) => isLetheText(text) || text.startsWith(USER_MESSAGE_PREFIX);

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

/** What the carry depends on besides the messages: the budgets it is fitted to and the archive it names. */
export function carryKey(ctx: LayerContext): string {
  const b = rebuildBudgets(ctx.window, ctx.config);
  return `${b.userMessagesTokens} ${b.latestRequestTokens} ${b.restoreTotalTokens} ${b.ledgerTokens} ${b.workTokens} ${ctx.archivePath ?? ""}`;
}

/** The boundary a snip at `cut` writes into the head's last message (pure: the same messages give the same blocks). */
export function carryOf(history: readonly Message[], cut: { head: number; tail: number }, ctx: LayerContext): Carry {
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
  return { own, carried, ledger };
}

