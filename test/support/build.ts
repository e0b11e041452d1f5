// Tiny builders for hand-written histories in unit tests.
import type { ContentBlock, Message, ToolResultBlock } from "../../src/messages/types.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { resolveConfig, type CompactionConfig, type DeepPartial } from "../../src/compaction/config/config.ts";
import { createMemoryStore } from "../../src/session/tool-results.ts";
import type { LayerContext } from "../../src/compaction/types.ts";

export const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
export const said = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });

/** An assistant message calling tools: [name, input, id] triples. */
export function calls(...uses: [name: string, input: unknown, id: string][]): Message {
  return { role: "assistant", content: uses.map(([name, input, id]) => ({ type: "tool_use", id, name, input }) as ContentBlock) };
}

export function results(...rs: [id: string, content: ToolResultBlock["content"], isError?: boolean][]): Message {
  return {
    role: "user",
    content: rs.map(([tool_use_id, content, is_error]) => ({ type: "tool_result", tool_use_id, content, ...(is_error ? { is_error } : {}) }) as ContentBlock),
  };
}

/**
 * What a host does to its history between requests, in property tests: 1 a layer's copy of one
 * message (micro, budget), 2 the host drops its newest round, 3 the host edits one message (other
 * words, a new object). Anything else, or a history too short for it, is returned as it is.
 */
export function hostStep(h: Message[], kind: number, at: number): Message[] {
  if (kind === 2 && h.length > 3) return h.slice(0, -2);
  if ((kind !== 1 && kind !== 3) || h.length <= 1) return h;
  const j = 1 + (at % (h.length - 1));
  const m = h[j]!;
  const out = h.slice();
  out[j] = kind === 1 ? { ...m } : { ...m, content: [...(typeof m.content === "string" ? [{ type: "text" as const, text: m.content }] : m.content), { type: "text", text: `edited ${at}` }] };
  return out;
}

/** A history of `rounds` bash rounds, each result `size` chars, starting with a user task. */
export function bashSession(rounds: number, size: number, tool = "bash"): Message[] {
  const h: Message[] = [user("Fix the failing test in src/app.ts")];
  for (let i = 0; i < rounds; i++) {
    h.push(calls([tool, { command: `cat file${i}.txt` }, `t${i}`]));
    h.push(results([`t${i}`, `line ${i} `.repeat(Math.ceil(size / 8)).slice(0, size)]));
  }
  return h;
}

export function context(opts: {
  window?: number;
  maxOutput?: number;
  config?: DeepPartial<CompactionConfig>;
  now?: number;
  lastResponseAt?: number;
} = {}): LayerContext & { store: ReturnType<typeof createMemoryStore> } {
  return {
    window: { contextWindow: opts.window ?? 200_000, maxOutputTokens: opts.maxOutput ?? 32_000 },
    config: resolveConfig(opts.config),
    tokens: createTokenCounter(),
    store: createMemoryStore(),
    now: opts.now ?? 1_000_000,
    lastResponseAt: opts.lastResponseAt,
  };
}

export const contentOf = (m: Message | undefined, j = 0): unknown =>
  m && typeof m.content !== "string" ? (m.content[j] as { content?: unknown }).content : undefined;
