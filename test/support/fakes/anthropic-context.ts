// The fake Anthropic server's context management, as the API documents it (beta): server-side
// compaction (`context_management.edits` `compact_20260112`, and the `compaction` request that
// only summarises) and context editing (`clear_tool_uses_20250919`, `clear_thinking_20251015`).
// Test support, not product.
//
// - A compaction block the server wrote must come back byte-identical (the fake keeps the JSON of
//   every block it emitted); anything else is a 400, as a tampered signature is.
// - The server keeps its context from the last compaction block on (one with content): the blocks
//   before it are neither counted nor seen.
// - Clearing replaces old tool results (and thinking) with nothing the model sees, and the reply
//   reports what it cleared in context_management.applied_edits; usage counts what was left.
import { randomBytes } from "node:crypto";
import { stableStringify, unitTokens } from "./common.ts";

type Obj = Record<string, any>;
const isCompaction = (b: unknown): b is Obj => typeof b === "object" && b !== null && (b as Obj).type === "compaction";
const effective = (b: unknown) => isCompaction(b) && typeof b.content === "string" && b.content !== "";

/** The messages the server keeps: from the last compaction block with content on. */
export function keptMessages(messages: Obj[]): Obj[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const c = messages[i]?.content;
    if (!Array.isArray(c)) continue;
    for (let k = c.length - 1; k >= 0; k--) if (effective(c[k])) return [{ ...messages[i], content: c.slice(k) }, ...messages.slice(i + 1)];
  }
  return messages;
}

/** Every compaction block the server wrote, as JSON (keys sorted: JSON objects have no order): what may come back. */
export class CompactionLedger {
  readonly emitted = new Set<string>();
  count = 0;

  /** A new block summarising `n` messages. */
  block(summary: string): Obj {
    this.count++;
    const b = { type: "compaction", content: summary, encrypted_content: randomBytes(240).toString("base64"), signature: `sig_compact_${this.count}_${randomBytes(12).toString("hex")}` };
    this.emitted.add(stableStringify(b));
    return b;
  }

  /** Why the request's compaction blocks are refused, or undefined when each is one we wrote, byte for byte. */
  check(messages: Obj[]): string | undefined {
    for (const [i, m] of messages.entries()) {
      if (!Array.isArray(m?.content)) continue;
      for (const b of m.content) {
        if (!isCompaction(b)) continue;
        const { cache_control: _c, ...rest } = b;
        if (!this.emitted.has(stableStringify(rest))) return `messages.${i}: compaction block does not match the one the server returned (content, encrypted_content and signature must be sent back unchanged)`;
      }
    }
    if (messages[0]?.role === "assistant" && !isCompaction(messages[0]?.content?.[0])) return "messages: first message must use the \"user\" role";
    return undefined;
  }
}

/** The summary text the fake's compaction writes for a conversation. */
export function summaryOf(messages: Obj[]): string {
  const users = messages.filter((m) => m.role === "user").length;
  const tools = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: Obj) => b?.type === "tool_use").map((b: Obj) => b.name);
  return `Summary written by the server: ${messages.length} messages, ${users} from the user side, ${tools.length} tool calls (${[...new Set(tools)].join(", ") || "none"}). The work continues from the latest request.`;
}

export interface Edits {
  compact?: { trigger: number; pause: boolean; instructions?: string };
  clearToolUses?: { trigger: number; keep: number };
  clearThinking?: { keep: number };
}

/** The edits a request asks for (undefined where absent). */
export function editsOf(body: Obj): Edits {
  const out: Edits = {};
  for (const e of Array.isArray(body?.context_management?.edits) ? body.context_management.edits : []) {
    if (e?.type === "compact_20260112") out.compact = { trigger: e.trigger?.value ?? 150_000, pause: e.pause_after_compaction === true, instructions: e.instructions ?? undefined };
    if (e?.type === "clear_tool_uses_20250919") out.clearToolUses = { trigger: e.trigger?.value ?? 100_000, keep: e.keep?.value ?? 3 };
    if (e?.type === "clear_thinking_20251015") out.clearThinking = { keep: e.keep?.value ?? 1 };
  }
  return out;
}

export interface Cleared {
  messages: Obj[];
  applied: Obj[];
}

/** Context editing: old tool results (past the trigger) and old thinking taken out of what the model sees. */
export function clearContext(messages: Obj[], edits: Edits, tokensOf: (messages: Obj[]) => number): Cleared {
  const applied: Obj[] = [];
  let out = messages;
  if (edits.clearThinking) {
    const before = tokensOf(out);
    const assistants = out.map((m, i) => (m.role === "assistant" ? i : -1)).filter((i) => i >= 0);
    const keepFrom = assistants[Math.max(0, assistants.length - edits.clearThinking.keep)] ?? out.length;
    let turns = 0;
    out = out.map((m, i) => {
      if (m.role !== "assistant" || i >= keepFrom || !Array.isArray(m.content) || !m.content.some((b: Obj) => b?.type === "thinking" || b?.type === "redacted_thinking")) return m;
      turns++;
      return { ...m, content: m.content.filter((b: Obj) => b?.type !== "thinking" && b?.type !== "redacted_thinking") };
    });
    if (turns > 0) applied.push({ type: "clear_thinking_20251015", cleared_thinking_turns: turns, cleared_input_tokens: before - tokensOf(out) });
  }
  if (edits.clearToolUses && tokensOf(out) > edits.clearToolUses.trigger) {
    const before = tokensOf(out);
    const results: [number, number][] = [];
    out.forEach((m, i) => Array.isArray(m.content) && m.content.forEach((b: Obj, k: number) => b?.type === "tool_result" && results.push([i, k])));
    const clear = results.slice(0, Math.max(0, results.length - edits.clearToolUses.keep));
    const at = new Set(clear.map(([i, k]) => `${i}:${k}`));
    out = out.map((m, i) => (Array.isArray(m.content) ? { ...m, content: m.content.map((b: Obj, k: number) => (at.has(`${i}:${k}`) ? { ...b, content: "[cleared]" } : b)) } : m));
    if (clear.length > 0) applied.push({ type: "clear_tool_uses_20250919", cleared_tool_uses: clear.length, cleared_input_tokens: before - tokensOf(out) });
  }
  return { messages: out, applied };
}

/** Tokens of a compaction block as the fake counts it (its summary; the encrypted part is the server's). */
export const compactionTokens = (b: Obj): number => unitTokens({ type: "compaction", content: b.content });
