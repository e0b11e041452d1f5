// After a reply, the next request's snip is known but for what answers the reply: the part it
// would remove ends where its kept tail starts, at the reply or before it, so every message it
// removes is already here. Working out what it carries now, while the reply's tools run and the
// next request forms, leaves that request the cut alone. A cache, like the middle's reading: the
// snip is the same with or without it (./snip.ts takes the plan only for the same cut of the
// same messages, fitted to the same budgets; else it works the carry out itself).
import type { Message } from "../../messages/types.ts";
import type { LayerContext } from "../types.ts";
import { carryKey, carryOf } from "./snip-carry.ts";
import { snipAt } from "./snip-cut.ts";

/** Stands for what the next request adds (the reply's results, or the user's next prompt): one user message, its size not known yet. */
const ARRIVAL: Message = { role: "user", content: [] };

/**
 * What arrives next is taken to be as large as the largest of the last ARRIVALS user messages. On
 * bench:replay's held-aside sessions at 64k, the last one alone missed one snip in five (what
 * arrived was larger and crossed the gate), the last four one in fifteen, at 1.9 plans a snip.
 */
const ARRIVALS = 4;

/** The tokens of the largest of the last ARRIVALS user messages before the reply. */
function largestArrival(history: readonly Message[], ctx: LayerContext): number {
  let most = 0;
  for (let i = history.length - 2, k = 0; i >= 0 && k < ARRIVALS; i--) {
    const m = history[i]!;
    if (m.role === "user") (most = Math.max(most, ctx.tokens.message(m))), k++;
  }
  return most;
}

/**
 * After a reply (`history`: what was sent, then the reply): when the next request would snip, with
 * what arrives as large as the largest of the last few arrivals, works out the carry of that snip into
 * ctx.middle.plan (and drops an older plan). Returns whether it did.
 */
export function snipAhead(history: readonly Message[], ctx: LayerContext): boolean {
  const r = ctx.middle;
  if (!r) return false;
  r.plan = undefined;
  if (!ctx.config.snip.enabled) return false;
  const next = [...history, ARRIVAL];
  const cut = snipAt(next, ctx, largestArrival(history, ctx));
  if (!cut) return false;
  const carry = carryOf(next, cut, ctx);
  // Its blocks counted now too (memoised per block): the snip measures the head message it bounds.
  for (const b of carry.carried) ctx.tokens.block(b);
  r.plan = { head: cut.head, tail: cut.tail, messages: next.slice(cut.head - 1, cut.tail), key: carryKey(ctx), counter: ctx.tokens, carry };
  return true;
}
