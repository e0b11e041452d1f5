// Exact o200k token counts of requests, memoised per block object.
//
// Exact counting runs at only ~2–3 MB/s, so every block is counted once: createTokenCounter keeps
// a WeakMap keyed by block object, and the replay never copies a block it does not change (the
// corpus objects are frozen, policies replace what they change with new objects). The per-message
// and per-block framing overheads are the ones src/tokens/count.ts adds (4 per message, 3 per block).
import type { Message } from "../../src/messages/types.ts";
import { type TokenCounter, createTokenCounter } from "../../src/tokens/count.ts";
import { countTokens } from "../../src/tokens/exact.ts";

export type ExactCounter = TokenCounter;

export function createExactCounter(): ExactCounter {
  return createTokenCounter(countTokens);
}

/** Exact tokens of a request: system prompt + messages. */
export function requestTokens(exact: ExactCounter, systemTokens: number, history: readonly Message[]): number {
  return systemTokens + exact.messages(history);
}
