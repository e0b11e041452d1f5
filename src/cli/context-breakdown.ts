// /context: where the tokens of the next request go, by kind (system and tools, project
// instructions, the user's messages, the assistant, tool results, what compactions wrote).
import { tagOf } from "../compaction/state/tags.ts";
import { blocksOf } from "../messages/blocks.ts";
import type { ContentBlock, Message } from "../messages/types.ts";
import type { TokenCounter } from "../tokens/count.ts";

export interface ContextCategory {
  name: string;
  tokens: number;
}

export interface ContextBreakdown {
  categories: ContextCategory[];
  /** Estimated tokens of the next request (sum of the categories). */
  estimate: number;
  /** Anchored measure (provider-reported usage + estimate of what is new). */
  measured: number;
  window: number;
  threshold: number;
  autoCompact: "on" | "off" | "ask";
  messages: number;
}

/** The history's tokens by kind; `fixedTokens` (system prompt and tools) includes the instructions. */
export function contextCategories(history: readonly Message[], counter: TokenCounter, fixedTokens: number, instructionTokens: number): ContextCategory[] {
  const cats = { system: fixedTokens - instructionTokens, instructions: instructionTokens, user: 0, assistant: 0, results: 0, summary: 0 };
  for (const m of history) {
    const blocks: ContentBlock[] = blocksOf(m);
    const overhead = Math.max(0, counter.message(m) - blocks.reduce((n, b) => n + counter.block(b), 0));
    if (m.role === "assistant") {
      cats.assistant += counter.message(m);
      continue;
    }
    let first: keyof typeof cats | undefined;
    for (const b of blocks) {
      const t = counter.block(b);
      let cat: keyof typeof cats;
      if (b.type === "tool_result") cat = "results";
      else if (b.type === "text" && (tagOf(b.text) === "user_message" || tagOf(b.text) === "latest_request")) cat = "user";
      else if (b.type === "text" && tagOf(b.text) !== undefined) cat = "summary";
      else cat = "user";
      first ??= cat;
      cats[cat] += t;
    }
    cats[first ?? "user"] += overhead;
  }
  return [
    { name: "system + tools", tokens: cats.system },
    { name: "project instructions", tokens: cats.instructions },
    { name: "user messages", tokens: cats.user },
    { name: "assistant", tokens: cats.assistant },
    { name: "tool results", tokens: cats.results },
    { name: "summary", tokens: cats.summary },
  ];
}
