// Prompt-cache pricing of replayed requests.
//
// Anthropic-style prompt caching with one cache breakpoint on the last message of every request:
// the longest prefix shared with the previous request of the same session (system prompt, then
// whole messages) is a cache read; everything after it is written to the cache. Output tokens are
// the recorded reply's exact tokens. Prices are relative to $3 per million input tokens.
import type { Message } from "../../src/messages/types.ts";

export const USD_PER_INPUT_TOKEN = 3 / 1_000_000;
export const MULT = { input: 1, cacheWrite: 1.25, cacheRead: 0.1, output: 5 } as const;

export interface CallTokens {
  cacheRead: number;
  cacheWrite: number;
  /** Uncached, unwritten input (1×). The replay's breakpoint rule leaves none; kept for completeness. */
  input: number;
  output: number;
}

export function callCost(t: CallTokens): number {
  return USD_PER_INPUT_TOKEN * (t.cacheRead * MULT.cacheRead + t.cacheWrite * MULT.cacheWrite + t.input * MULT.input + t.output * MULT.output);
}

/**
 * How many leading messages `cur` shares with `prev`: equal by identity, or failing that by JSON
 * (a policy that copies an unchanged message still hits the cache; one that edits it does not).
 */
export function commonPrefixMessages(prev: readonly Message[] | null, cur: readonly Message[]): number {
  if (!prev) return 0;
  const n = Math.min(prev.length, cur.length);
  let i = 0;
  for (; i < n; i++) {
    const a = prev[i]!;
    const b = cur[i]!;
    if (a === b) continue;
    if (a.role !== b.role || JSON.stringify(a.content) !== JSON.stringify(b.content)) break;
  }
  return i;
}
