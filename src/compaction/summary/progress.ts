// The no-progress guard: summaries in a row that each summarise the same work (the same tool
// calls, with the same inputs, since the summary before) and leave the same context (the same size
// after, to the token) mean the session goes round in circles, paying for a summary every few
// turns (seen: 752 identical summaries, $48). After `repeats` of them, the next summary is not paid
// for: the session stops with one line. Sizes alone are not enough: reading a file chunk by chunk
// gives summaries of the same size that are progress all the same.
import { createHash } from "node:crypto";
import { LetheError } from "../../errors.ts";
import { toolUsesOf } from "../../messages/blocks.ts";
import type { Message } from "../../messages/types.ts";
import type { CompactionEvent, SummarizeEvent } from "../types.ts";

/** Summaries in a row left the same context: the session makes no progress. */
export class NoProgressError extends LetheError {
  constructor(readonly repeats: number, readonly tokensAfter: number) {
    super("no_progress", `lethe: the last ${repeats} summaries each left the same context (${tokensAfter.toLocaleString("en-US")} tokens after); the session is making no progress, so it stops here instead of paying for more. Give the agent a narrower task or a larger context window.`);
  }
}

export function createProgressGuard(repeatsAllowed: () => number, emit: (e: CompactionEvent) => void) {
  let same = { key: "", after: -1, repeats: 0 };
  // An auto summary that would not have made the context smaller (a threshold below what the
  // rebuild carries): the next is not paid for until the context has grown a quarter past it.
  let growFrom = 0;
  return {
    /** Why an auto summary of `tokens` is not worth paying for now, or undefined. */
    waiting(tokens: number): string | undefined {
      if (tokens >= growFrom) return undefined;
      return `the last auto-compact would not have made the context smaller (the summary and what it keeps outweigh the history); the next waits until the context passes ${growFrom.toLocaleString("en-US")} tokens. The threshold is probably too low for this session`;
    },
    /** An auto summary gained nothing at `tokens`. */
    noGain(tokens: number): void {
      growFrom = Math.ceil(tokens * 1.25);
    },
    /** Records what a summary summarised and its size after (a manual /compact is the user's choice, not a loop). */
    record(e: SummarizeEvent, history: readonly Message[]): void {
      if (e.kind === "manual") return;
      const key = `${e.tokensAfter}:${workKey(history)}`;
      same = key === same.key ? { key, after: e.tokensAfter, repeats: same.repeats + 1 } : { key, after: e.tokensAfter, repeats: 1 };
    },
    /** Before paying for another summary: throws NoProgressError when the last ones all ended the same. */
    check(tokensBefore: number): void {
      const n = repeatsAllowed();
      if (n <= 0 || same.repeats < n) return;
      emit({ kind: "no_progress", repeats: same.repeats, tokensBefore, tokensAfter: same.after });
      throw new NoProgressError(same.repeats, same.after);
    },
  };
}

/** The tool calls (name and input) a history holds: what was done since the summary before it. */
function workKey(history: readonly Message[]): string {
  const h = createHash("sha1");
  for (const m of history) for (const u of toolUsesOf(m)) h.update(`${u.name}\u0000${JSON.stringify(u.input ?? null)}\u0001`);
  return h.digest("base64");
}
