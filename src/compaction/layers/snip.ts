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
//
//   snip-cut.ts    where it cuts, and whether cutting pays
//   snip-carry.ts  what the boundary carries
//   snip-ahead.ts  the carry worked out after a reply, before the request that snips
import type { Message } from "../../messages/types.ts";
import { plannedCarry, readAhead } from "../state/middle.ts";
import { carryKey, carryOf } from "./snip-carry.ts";
import { snipAt, snipHead } from "./snip-cut.ts";
import type { LayerContext, LayerResult, SnipEvent } from "../types.ts";

export { snipCut } from "./snip-cut.ts";

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
  const cut = snipAt(history, ctx);
  if (!cut) return none;

  const last = history[cut.head - 1]!;
  // Worked out after the last reply when it named the same messages (./snip-ahead.ts), else now.
  const { own, carried, ledger } = (ctx.middle && plannedCarry(ctx.middle, history, cut, () => carryKey(ctx), ctx.tokens)) || carryOf(history, cut, ctx);
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
