// Layer 1, budget: a huge tool result (or a huge batch of them in one message) goes
// to disk; the context keeps a marker with the path and a preview. It runs first, so
// the exact original is saved before any later layer could replace it.
import { resultChars, resultPlainText, resultText, toolUseIndex } from "../messages/blocks.ts";
import type { ContentBlock, Message, ToolResultBlock } from "../messages/types.ts";
import { resultLimitChars, resultLimitTokens } from "./config.ts";
import { isClearedPlaceholder, isPersistedMarker, persistedMarker } from "./markers.ts";
import type { BudgetEvent, LayerContext, LayerResult, PersistedResult } from "./types.ts";

function alreadyCompact(block: ToolResultBlock): boolean {
  const c = block.content;
  return typeof c === "string" && (isPersistedMarker(c) || isClearedPlaceholder(c));
}

/** Replace one result by a marker, after saving it. Returns null if that would not save tokens. */
function persist(
  block: ToolResultBlock,
  toolName: string,
  ctx: LayerContext,
): { block: ToolResultBlock; record: PersistedResult } | null {
  const { budget } = ctx.config;
  const tokensBefore = ctx.tokens.block(block);
  const chars = resultChars(block.content);
  const plain = resultPlainText(block.content);
  // The preview may never be most of what it replaces (small windows, token-dense text).
  let previewChars = Math.min(budget.previewChars, Math.floor(plain.length / 4), Math.floor(resultLimitTokens(ctx.window, budget) * 2));
  let marker = "";
  let tokensAfter = Infinity;
  const path = ctx.store.save(block.tool_use_id, resultText(block.content));
  while (true) {
    marker = persistedMarker({ toolUseId: block.tool_use_id, path, chars, tokens: tokensBefore, preview: plain.slice(0, previewChars) });
    const next: ToolResultBlock = { ...block, content: marker };
    tokensAfter = ctx.tokens.block(next);
    if (tokensAfter < tokensBefore) {
      return { block: next, record: { toolUseId: block.tool_use_id, toolName, path, chars, tokensBefore, tokensAfter } };
    }
    if (previewChars === 0) return null;
    previewChars = Math.floor(previewChars / 4);
  }
}

export function budget(history: readonly Message[], ctx: LayerContext): LayerResult<BudgetEvent> {
  const { budget: cfg } = ctx.config;
  const maxTokens = resultLimitTokens(ctx.window, cfg);
  const uses = toolUseIndex(history);
  const persisted: PersistedResult[] = [];
  let out: Message[] | null = null;

  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    if (m.role !== "user" || typeof m.content === "string") continue;
    let blocks: ContentBlock[] | null = null;
    const replace = (j: number, b: ContentBlock) => {
      blocks ??= m.content.slice() as ContentBlock[];
      blocks[j] = b;
    };

    // Per result: over its tool's character limit, or over its share of the window.
    for (let j = 0; j < m.content.length; j++) {
      const b = m.content[j]!;
      if (b.type !== "tool_result" || alreadyCompact(b)) continue;
      const name = uses.get(b.tool_use_id)?.name ?? "unknown";
      const tooLong = resultChars(b.content) > resultLimitChars(name, ctx.window, cfg);
      if (!tooLong && ctx.tokens.block(b) <= maxTokens) continue;
      const done = persist(b, name, ctx);
      if (done) {
        replace(j, done.block);
        persisted.push(done.record);
      }
    }

    // Per message: a batch of parallel results over the batch limit, largest first.
    const current: ContentBlock[] = blocks ?? (m.content as ContentBlock[]);
    let total = 0;
    const candidates: { j: number; chars: number }[] = [];
    current.forEach((b, j) => {
      if (b.type !== "tool_result") return;
      const chars = resultChars(b.content);
      total += chars;
      if (!alreadyCompact(b)) candidates.push({ j, chars });
    });
    if (total > cfg.perMessageChars) {
      candidates.sort((a, b) => b.chars - a.chars || a.j - b.j);
      for (const { j, chars } of candidates) {
        if (total <= cfg.perMessageChars) break;
        const b = current[j] as ToolResultBlock;
        const done = persist(b, uses.get(b.tool_use_id)?.name ?? "unknown", ctx);
        if (!done) continue;
        replace(j, done.block);
        persisted.push(done.record);
        total -= chars - resultChars(done.block.content);
      }
    }

    if (blocks) {
      out ??= history.slice();
      out[i] = { ...m, content: blocks };
    }
  }

  if (!out) return { history: history as Message[], freedTokens: 0, event: null };
  const freedTokens = persisted.reduce((s, p) => s + p.tokensBefore - p.tokensAfter, 0);
  return { history: out, freedTokens, event: { kind: "budget", persisted, freedTokens } };
}
