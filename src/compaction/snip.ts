// Layer 2, snip: drop the middle of a very long history, keep the head (the original
// task) and the newest messages, and leave one boundary note saying how many messages
// went and where they are archived.
//
// Cut points keep every tool_use/tool_result pair whole: the head ends with a user
// message (so any tool_use in it is answered inside the head) and the tail starts with
// an assistant message (so no tool_result in the tail lost its tool_use). The boundary
// note is appended to the head's last user message, which keeps roles alternating.
import { blocksOf } from "../messages/blocks.ts";
import type { Message } from "../messages/types.ts";
import { autoCompactThreshold } from "./config.ts";
import { snipBoundary } from "./markers.ts";
import type { LayerContext, LayerResult, SnipEvent } from "./types.ts";

/** Where the head ends and the tail starts, or null when nothing can be cut. */
export function snipCut(history: readonly Message[], keepHead: number, targetMessages: number): { head: number; tail: number } | null {
  const n = history.length;
  let head = Math.min(keepHead, n);
  while (head < n && history[head - 1]!.role !== "user") head++;
  let tail = Math.max(head, n - (targetMessages - head));
  while (tail < n && history[tail]!.role !== "assistant") tail++;
  // Keep at least the newest assistant turn and the request after it.
  if (tail >= n - 1 || tail <= head) return null;
  return { head, tail };
}

export function snip(history: readonly Message[], ctx: LayerContext): LayerResult<SnipEvent> {
  const cfg = ctx.config.snip;
  const none = { history: history as Message[], freedTokens: 0, event: null };
  if (!cfg.enabled || history.length <= cfg.triggerMessages) return none;
  if (cfg.minThresholdShare > 0) {
    const threshold = autoCompactThreshold(ctx.window, ctx.config);
    if ((ctx.fixedTokens ?? 0) + ctx.tokens.messages(history) < cfg.minThresholdShare * threshold) return none;
  }
  const cut = snipCut(history, cfg.keepHead, cfg.targetMessages);
  if (!cut) return none;

  const last = history[cut.head - 1]!;
  const note = snipBoundary({ removed: cut.tail - cut.head, from: cut.head, to: cut.tail, archivePath: ctx.archivePath });
  const bounded: Message = { ...last, content: [...blocksOf(last), { type: "text", text: note }] };
  const out = [...history.slice(0, cut.head - 1), bounded, ...history.slice(cut.tail)];

  let freed = ctx.tokens.message(last) - ctx.tokens.message(bounded);
  for (let i = cut.head; i < cut.tail; i++) freed += ctx.tokens.message(history[i]!);
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
    },
  };
}
