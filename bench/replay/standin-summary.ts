// STAND-IN for the summary layer (auto-compact), which is not built yet (a later issue).
//
// This is NOT a summary. It is a shared, deterministic rebuild applied to every policy the same
// way whenever that policy's own check says it is over its threshold, so that the replay can go
// on and the *call* can be counted and priced (see pricing.ts). It writes no summary text at all,
// so the numbers it produces say nothing about what a real summary would retain (retention is
// null in replay.json until the summary layer lands).
//
// New live context:
//   user:  "[stand-in for a summary of N earlier messages]"
//   then the newest whole rounds (each starting at an assistant message, so no tool_use/tool_result
//   pair is split and roles alternate after the stand-in) that fit in ~25% of the policy's threshold.
// If not even the newest round fits, that round is kept with its tool results reduced to a short
// stub; if the assistant message alone is still too big, only the latest user message's text
// (results as stubs) is kept, folded into the stand-in message: a single, valid user message.
import type { ContentBlock, Message, ToolResultBlock } from "../../src/messages/types.ts";
import { resultChars } from "../../src/messages/blocks.ts";

/** Share of the policy's threshold the kept rounds may take. */
export const STANDIN_KEEP_SHARE = 0.25;

export type StandinMode = "rounds" | "stubbed-round" | "latest-user-only";

export interface StandinResult {
  history: Message[];
  /** Messages of the old context replaced by the stand-in line. */
  replaced: number;
  mode: StandinMode;
}

export function standinText(replaced: number): string {
  return `[stand-in for a summary of ${replaced} earlier messages]`;
}

function resultStub(b: ToolResultBlock): string {
  return `[stand-in: tool result for ${b.tool_use_id} omitted (${resultChars(b.content)} chars)]`;
}

/**
 * Rebuild `history` (which ends with the user message(s) of the pending request) after a
 * summary call. `tokensOf` measures one message (the replay passes the exact counter), `threshold`
 * is the policy's auto-compact threshold.
 */
export function standinRebuild(history: readonly Message[], threshold: number, tokensOf: (m: Message) => number): StandinResult {
  const budget = Math.floor(threshold * STANDIN_KEEP_SHARE);
  const n = history.length;

  // Newest whole rounds: the earliest assistant index whose suffix still fits.
  let start = -1;
  let suffix = 0;
  let lastAssistant = -1;
  for (let i = n - 1; i >= 1; i--) {
    suffix += tokensOf(history[i]!);
    if (history[i]!.role !== "assistant") continue;
    if (lastAssistant < 0) lastAssistant = i;
    if (suffix > budget) break;
    start = i;
  }
  if (start > 0) {
    const head: Message = { role: "user", content: [{ type: "text", text: standinText(start) }] };
    return { history: [head, ...history.slice(start)], replaced: start, mode: "rounds" };
  }

  // The newest round alone is too big: keep it with its results reduced to stubs.
  if (lastAssistant > 0) {
    const tail = history.slice(lastAssistant + 1).map(stubResults);
    const head: Message = { role: "user", content: [{ type: "text", text: standinText(lastAssistant) }] };
    const rebuilt = [head, history[lastAssistant]!, ...tail];
    let total = 0;
    for (let i = 1; i < rebuilt.length; i++) total += tokensOf(rebuilt[i]!);
    if (total <= budget) return { history: rebuilt, replaced: lastAssistant, mode: "stubbed-round" };
  }

  // Not even that: one user message with the stand-in line, then the latest user message's text.
  const latest = n > 0 && history[n - 1]!.role === "user" ? history[n - 1]! : undefined;
  const replaced = latest ? n - 1 : n;
  const blocks: ContentBlock[] = [{ type: "text", text: standinText(replaced) }];
  if (latest) {
    if (typeof latest.content === "string") {
      if (latest.content.trim() !== "") blocks.push({ type: "text", text: latest.content });
    } else {
      for (const b of latest.content) {
        if (b.type === "tool_result") blocks.push({ type: "text", text: resultStub(b) });
        else if (b.type === "text" && b.text.trim() !== "") blocks.push(b);
      }
    }
  }
  return { history: [{ role: "user", content: blocks }], replaced, mode: "latest-user-only" };
}

function stubResults(m: Message): Message {
  if (m.role !== "user" || typeof m.content === "string") return m;
  if (!m.content.some((b) => b.type === "tool_result")) return m;
  return {
    ...m,
    content: m.content.map((b) => (b.type === "tool_result" ? { ...b, content: resultStub(b) } : b)),
  };
}
