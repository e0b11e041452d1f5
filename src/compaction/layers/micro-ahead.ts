// After a reply, the placeholders micro will put in place of the results that reply saw are known:
// made now, while the reply's tools run, and kept by their original block, so the request that
// clears a batch of results swaps them in instead of describing each call and counting each
// placeholder then. Only for results whose original needs no file written (budget's file, or the
// transcript holds it): writing one stays with the request that clears. A cache: micro takes a
// placeholder only for the same block answering the same call (./micro.ts), else makes its own.
import { toolUseFor } from "../../messages/blocks.ts";
import type { Message } from "../../messages/types.ts";
import type { LayerContext } from "../types.ts";
import { describeCall, isClearedPlaceholder } from "./markers.ts";
import { compactableOf, persistedAt, placeholderOf } from "./micro.ts";

/** User messages looked at, from the newest back: older ones were looked at after the replies before. */
const LOOK_BACK = 4;

/**
 * After a reply (`history`: what was sent, then the reply): makes the placeholders of the results
 * in the last few user messages that micro could clear (compactable, at least minResultTokens, no
 * file to write), counted, into ctx.placeholders. Returns how many it made.
 */
export function microAhead(history: readonly Message[], ctx: LayerContext): number {
  const memo = ctx.placeholders;
  const cfg = ctx.config.micro;
  if (!memo || !cfg.enabled) return 0;
  const compactable = compactableOf(cfg.compactableTools);
  let made = 0;
  for (let i = history.length - 1, looked = 0; i >= 0 && looked < LOOK_BACK; i--) {
    const m = history[i]!;
    if (m.role !== "user" || typeof m.content === "string") continue;
    looked++;
    for (const b of m.content) {
      if (b.type !== "tool_result" || memo.has(b)) continue;
      if (typeof b.content === "string" && isClearedPlaceholder(b.content)) continue;
      const savedPath = persistedAt(b.content);
      if (savedPath === undefined && !ctx.archived) continue;
      const tokens = ctx.tokens.block(b);
      if (tokens < cfg.minResultTokens) continue;
      const use = toolUseFor(history, i, b.tool_use_id);
      if (!use || !compactable.has(use.name.toLowerCase())) continue;
      const block = placeholderOf(b, describeCall(use), tokens, savedPath);
      ctx.tokens.block(block);
      memo.set(b, { use, block });
      made++;
    }
  }
  return made;
}
