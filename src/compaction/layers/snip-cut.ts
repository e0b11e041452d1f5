// Where a snip cuts (the head ends after a user message, the tail starts at an assistant one, so
// every tool_use keeps its tool_result) and whether cutting there pays for itself (cache-aware).
import type { Message } from "../../messages/types.ts";
import { snipGateTokens, thresholdOf } from "../config/config.ts";
import { recordedTokens } from "./markers.ts";
import type { LayerContext } from "../types.ts";

/** Where the head ends: after `keepHead` messages, and after a user message. */
export function snipHead(history: readonly Message[], keepHead: number): number {
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


/**
 * Where a snip of `history` cuts, or null when it does not act: past the message trigger (or, cache-
 * aware, past the kept messages), the context (plus `more` tokens) past the pressure gate, something
 * to cut, and, cache-aware and under the trigger, cutting pays.
 */
export function snipAt(history: readonly Message[], ctx: LayerContext, more = 0): { head: number; tail: number } | null {
  const cfg = ctx.config.snip;
  if (history.length <= (cfg.cacheAware ? cfg.targetMessages + 1 : cfg.triggerMessages)) return null;
  const gate = snipGateTokens(thresholdOf(ctx), ctx.config);
  if (gate > 0 && (ctx.fixedTokens ?? 0) + ctx.tokens.messages(history) + more < gate) return null;
  const cut = snipCut(history, cfg.keepHead, cfg.targetMessages);
  if (!cut) return null;
  if (cfg.cacheAware && history.length <= cfg.triggerMessages && !snipPays(history, cut, ctx)) return null;
  return cut;
}
