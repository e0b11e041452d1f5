// reactive: the provider still said "prompt too long". First shrink the freshest oversized
// tool results (they most likely caused it), harder than budget does; the caller then
// summarises the older part keeping the newest rounds whole, and retries once.
import type { Message } from "../messages/types.ts";
import { budget } from "./budget.ts";
import type { BudgetEvent, LayerContext, LayerResult } from "./types.ts";

/** How many of the newest messages count as fresh. */
const FRESH_MESSAGES = 4;

export function shrinkFresh(history: readonly Message[], ctx: LayerContext, overTokens = 0): LayerResult<BudgetEvent> {
  // Start the fresh slice at an assistant message so the tool names of its results are known.
  let from = Math.max(0, history.length - FRESH_MESSAGES);
  while (from > 0 && history[from]!.role !== "assistant") from--;
  const window = ctx.window.contextWindow;
  // Results above an eighth of the window (or what is over, if smaller) go to disk.
  const share = Math.min(0.125, overTokens > 0 ? Math.max(0.02, overTokens / window) : 0.125);
  const tight: LayerContext = {
    ...ctx,
    config: {
      ...ctx.config,
      budget: {
        ...ctx.config.budget,
        maxWindowShare: share,
        perResultChars: Math.min(ctx.config.budget.perResultChars, Math.floor(window * share * 2)),
        perToolChars: {},
        perMessageChars: Math.min(ctx.config.budget.perMessageChars, Math.floor(window * 0.5)),
        previewChars: Math.min(ctx.config.budget.previewChars, 500),
      },
    },
  };
  const r = budget(history.slice(from), tight);
  if (!r.event) return { history: history as Message[], freedTokens: 0, event: null };
  return { history: [...history.slice(0, from), ...r.history], freedTokens: r.freedTokens, event: r.event };
}
