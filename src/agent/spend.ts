// What a run spends: every model call's price (the host's requestCost), summaries included, and
// the run's limit (maxBudgetUsd), checked before each request so the run stops before the request
// that would cross it, not after. A call whose price is unknown (a local or free model) costs 0:
// such a run is never stopped for money.
import { LetheError } from "../errors.ts";
import { LetheInputError, show } from "../messages/input.ts";
import type { Usage } from "../tokens/meter.ts";

/** The next request would take the run past its spending limit: it was not sent. */
export class BudgetError extends LetheError {
  constructor(readonly spentUsd: number, readonly budgetUsd: number, readonly nextUsd: number) {
    super("max_budget", `lethe: the next request (about ${usd(nextUsd)}) would take this run past its budget of ${usd(budgetUsd)} (${usd(spentUsd)} spent); stopped before sending it`);
  }
}

const usd = (n: number) => `$${n < 0.1 ? n.toFixed(4) : n.toFixed(2)}`;

/** A run's spending so far, and its limit: what runAgent checks before each request and summary. */
export interface Spend {
  /** Dollars spent by the calls priced so far. */
  readonly spentUsd: number;
  /** Adds one call's usage; returns its price (undefined when unknown). */
  add(model: string, usage: Usage): number | undefined;
  /** Throws BudgetError when a request of about `tokens` input tokens (and `outputTokens` out) would cross the limit. */
  check(model: string, tokens: number, outputTokens?: number): void;
}

/** The spend of one run: `requestCost` prices each call, `maxBudgetUsd` is the limit (none: never stops). */
export function createSpend(opts: { requestCost?: (model: string, usage: Usage) => number | undefined; maxBudgetUsd?: number }): Spend {
  const budget = opts.maxBudgetUsd;
  // A limit that can never stop the run is refused at the door, not found out after the money is gone.
  if (budget !== undefined) {
    if (typeof budget !== "number" || !(budget >= 0) || !Number.isFinite(budget)) throw new LetheInputError("runAgent", `maxBudgetUsd must be a number of dollars ≥ 0, got ${show(budget)}`);
    if (typeof opts.requestCost !== "function") throw new LetheInputError("runAgent", "maxBudgetUsd needs requestCost (the price of each call), or nothing could be counted against it");
  }
  let spent = 0;
  // What the last call left in the prompt cache: the next request reads that prefix at the cache price.
  let cached = 0;
  return {
    get spentUsd() {
      return spent;
    },
    add(model, usage) {
      cached = (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
      const cost = opts.requestCost?.(model, usage);
      if (cost !== undefined && Number.isFinite(cost)) spent += cost;
      return cost;
    },
    check(model, tokens, outputTokens = 0) {
      const budget = opts.maxBudgetUsd;
      if (budget === undefined || !opts.requestCost) return;
      const read = Math.min(cached, tokens);
      const next = opts.requestCost(model, { input_tokens: Math.max(0, tokens - read), cache_read_input_tokens: read, output_tokens: outputTokens }) ?? 0;
      if (spent + next > budget || (next > 0 && spent >= budget)) throw new BudgetError(spent, budget, next);
    },
  };
}
