// What a session costs, with prompt-cache pricing: $ per million tokens for input, output,
// cache writes and cache reads. Prices are list prices at the time of writing; settings
// ("pricing") override or add models. Local models (unknown names) cost nothing we can know.
import { normalizeModelName } from "../model/models.ts";
import { linesWith } from "../session/transcript-scan.ts";
import type { Usage } from "../tokens/meter.ts";
import type { Pricing } from "./settings.ts";

/** Anthropic: cache write 1.25× input, cache read 0.1×. OpenAI: cached input at its own rate, no write charge. */
const anthropic = (input: number, output: number): Pricing => ({ input, output, cacheWrite: input * 1.25, cacheRead: input * 0.1 });
const openai = (input: number, output: number, cacheRead: number): Pricing => ({ input, output, cacheWrite: input, cacheRead });

/** Longest matching prefix wins. */
export const PRICES: Record<string, Pricing> = {
  "claude-opus-4-5": anthropic(5, 25),
  "claude-opus-4-6": anthropic(5, 25),
  "claude-opus-4-7": anthropic(5, 25),
  "claude-opus-4": anthropic(15, 75),
  "claude-opus-5": anthropic(5, 25),
  "claude-opus-5-5": anthropic(4, 20),
  "claude-fable-5": anthropic(10, 50),
  "claude-sonnet": anthropic(3, 15),
  "claude-sonnet-5": anthropic(2, 10),
  "claude-3-7-sonnet": anthropic(3, 15),
  "claude-3-5-sonnet": anthropic(3, 15),
  "claude-haiku-4": anthropic(1, 5),
  "claude-3-5-haiku": anthropic(0.8, 4),
  "claude-3-haiku": anthropic(0.25, 1.25),
  "gpt-4o-mini": openai(0.15, 0.6, 0.075),
  "gpt-4o": openai(2.5, 10, 1.25),
  "gpt-4.1-nano": openai(0.1, 0.4, 0.025),
  "gpt-4.1-mini": openai(0.4, 1.6, 0.1),
  "gpt-4.1": openai(2, 8, 0.5),
  "gpt-5-nano": openai(0.05, 0.4, 0.005),
  "gpt-5-mini": openai(0.25, 2, 0.025),
  "gpt-5": openai(1.25, 10, 0.125),
  "o3": openai(2, 8, 0.5),
  "o4-mini": openai(1.1, 4.4, 0.275),
};

export function priceOf(model: string, overrides: Record<string, Pricing> = {}): { pricing: Pricing; matched: string } | undefined {
  const name = normalizeModelName(model);
  for (const table of [overrides, PRICES]) {
    let best: string | undefined;
    for (const key of Object.keys(table)) {
      const k = normalizeModelName(key);
      if (name.startsWith(k) && (best === undefined || k.length > normalizeModelName(best).length)) best = key;
    }
    if (best !== undefined) return { pricing: table[best]!, matched: best };
  }
  return undefined;
}

export function costOf(usage: Usage, p: Pricing): number {
  const m = 1_000_000;
  return (
    (usage.input_tokens * p.input +
      (usage.cache_creation_input_tokens ?? 0) * (p.cacheWrite ?? p.input) +
      (usage.cache_read_input_tokens ?? 0) * (p.cacheRead ?? p.input) +
      usage.output_tokens * p.output) /
    m
  );
}

export function formatUsd(n: number): string {
  return n < 1 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`;
}

/** $ for usage per model (undefined when a model's price is unknown). */
export function costOfModels(byModel: ReadonlyMap<string, Usage>, pricing: Record<string, Pricing>): number | undefined {
  let total = 0;
  for (const [model, u] of byModel) {
    const p = priceOf(model, pricing);
    if (!p) return undefined;
    total += costOf(u, p.pricing);
  }
  return total;
}

/** The price of one call under these prices (undefined for a model with none): for request lines and the budget. */
export function requestCostOf(pricing: Record<string, Pricing>): (model: string, usage: Usage) => number | undefined {
  return (model, usage) => {
    const p = priceOf(model, pricing);
    return p ? costOf(usage, p.pricing) : undefined;
  };
}

/** Dollars the request lines of a transcript add up to (what a resumed session had already cost). */
export function costInTranscript(path: string): number {
  let total = 0;
  // Only request lines carry cost_usd, and only those lines are parsed (a transcript is tens of MB);
  // a line that does not parse (a torn last line) costs nothing.
  linesWith(path, '"cost_usd"', (line) => {
    try {
      const e = JSON.parse(line) as { type?: unknown; name?: unknown; cost_usd?: unknown };
      if (e.type === "event" && e.name === "request" && typeof e.cost_usd === "number" && Number.isFinite(e.cost_usd)) total += e.cost_usd;
    } catch {
      // not a line of its own
    }
  });
  return total;
}
