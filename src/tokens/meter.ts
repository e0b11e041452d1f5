// How big the context is right now: anchored on what the provider reported for the
// last response, plus an estimate of only the messages added since.
//
// The estimate is corrected per model by a smoothed ratio of reported input tokens to
// our estimate of the same request, so a tokenizer we cannot run locally (Claude's) is
// still tracked closely after a turn or two.
import type { Message } from "../messages/types.ts";
import type { TokenCounter } from "./count.ts";

/** A provider's usage, in Anthropic's terms (cache reads and writes apart from input). */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /**
   * Input tokens the server's own context editing took out of this request before counting it
   * (Anthropic's clear_tool_uses / clear_thinking: context_management.applied_edits). lethe adds
   * them back to compare the report with what it sent; billing counts only input_tokens.
   */
  cleared_input_tokens?: number | null;
}

/** Everything the provider counted for a request and its reply. */
export function usageTotal(u: Usage): number {
  return u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + u.output_tokens;
}

export function usageInput(u: Usage): number {
  return u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
}

export interface MeterOptions {
  counter: TokenCounter;
  /** Model name the correction factor belongs to. */
  model?: string;
  /** Shared per-model factors (e.g. loaded from settings); the meter updates its model's entry. */
  factors?: Map<string, number>;
  /** Smoothing of the correction factor (weight of the newest observation). */
  alpha?: number;
}

/** Measures the context: the provider's last reported input plus an estimate of what was added since. */
export interface ContextMeter {
  /** Record the provider's usage for `sent` (the request's history) and its `reply`. */
  observe(sent: readonly Message[], reply: Message, usage: Usage, fixedTokens?: number): void;
  /** Tokens of a request made of `history` (+ the fixed part), anchored when possible. */
  measure(history: readonly Message[], fixedTokens?: number): number;
  /** Current reported/estimated ratio for this model (1 until the first observation). */
  correction(): number;
  /** Whether the last measure() used the anchor. */
  anchored(): boolean;
}

const CLAMP: [number, number] = [0.5, 3];

/** Creates a context meter over a token counter. */
export function createContextMeter(opts: MeterOptions): ContextMeter {
  const { counter } = opts;
  const model = opts.model ?? "default";
  const factors = opts.factors ?? new Map<string, number>();
  const alpha = opts.alpha ?? 0.3;
  let anchor: { prefix: Message[]; total: number } | null = null;
  let lastAnchored = false;

  const factor = () => factors.get(model) ?? 1;

  return {
    observe(sent, reply, usage, fixedTokens = 0) {
      const estimate = fixedTokens + counter.messages(sent);
      const reported = usageInput(usage);
      if (estimate > 0 && reported > 0) {
        const ratio = Math.min(CLAMP[1], Math.max(CLAMP[0], reported / estimate));
        const prev = factors.get(model);
        factors.set(model, prev === undefined ? ratio : prev + alpha * (ratio - prev));
      }
      anchor = { prefix: [...sent, reply], total: usageTotal(usage) };
    },

    measure(history, fixedTokens = 0) {
      const a = anchor;
      // The anchor holds only while every anchored message is still there, unchanged
      // (layers replace changed messages with new objects, so identity is enough).
      let valid = a !== null && history.length >= a.prefix.length;
      for (let i = 0; valid && i < a!.prefix.length; i++) valid = history[i] === a!.prefix[i];
      lastAnchored = valid;
      if (valid) {
        let fresh = 0;
        for (let i = a!.prefix.length; i < history.length; i++) fresh += counter.message(history[i]!);
        return a!.total + Math.ceil(fresh * factor());
      }
      return Math.ceil((fixedTokens + counter.messages(history)) * factor());
    },

    correction: factor,
    anchored: () => lastAnchored,
  };
}
