// Layer 1, budget: a huge tool result (or a huge batch of them in one message) goes
// to disk; the context keeps a marker with the path and a preview. It runs first, so
// the exact original is saved before any later layer could replace it.
import { createHash } from "node:crypto";
import { resultPlainText, resultText, toolUseFor } from "../../messages/blocks.ts";
import type { ContentBlock, Message, ToolResultBlock, ToolResultContentBlock } from "../../messages/types.ts";
import { describeMedia } from "../../messages/media.ts";
import { resultChars } from "../../tokens/media.ts";
import { resultLimitChars, resultLimitTokens } from "../config/config.ts";
import { isClearedPlaceholder, isPersistedMarker, persistedMarker } from "./markers.ts";
import type { BudgetEvent, LayerContext, LayerResult, PersistedResult } from "../types.ts";

/** Results remembered as moved (the oldest are forgotten first; a forgotten one is written again). */
const PERSISTED_MEMO = 4_096;

function alreadyCompact(block: ToolResultBlock): boolean {
  const c = block.content;
  return typeof c === "string" && (isPersistedMarker(c) || isClearedPlaceholder(c));
}

/** Replace one result by a marker, after saving it. Returns null if that would not save tokens. */
function persist(
  block: ToolResultBlock,
  toolName: string,
  ctx: LayerContext,
): { block: ToolResultBlock; record: PersistedResult; again?: true } | null {
  const { budget } = ctx.config;
  const chars = resultChars(block.content);
  // Images and documents are named after the preview whatever its length (the model must know
  // what the result held); the preview itself is the text.
  const media = Array.isArray(block.content) ? block.content.filter((b) => b.type !== "text") : [];
  const plain = media.length === 0 ? resultPlainText(block.content) : resultPlainText((block.content as ToolResultContentBlock[]).filter((b) => b.type === "text"));
  const named = media.map((b) => `\n[${describeMedia(b)}]`).join("");
  // The preview may never be most of what it replaces (small windows, token-dense text).
  // On a small window it is sized to the window too: a 2,000-char preview of dense text is a
  // tenth of an 8k window, and every read would leave one.
  let previewChars = Math.min(budget.previewChars, Math.floor(plain.length / 4), Math.floor(resultLimitTokens(ctx.window, budget) * 2), Math.floor(ctx.window.contextWindow * 0.15));
  // Moved before (a host passing a rebuilt copy of its history): the same marker, nothing written.
  // The same id is not enough (local servers reuse "call_0"), nor the same size and start: the
  // whole text must be the one saved.
  const full = resultText(block.content);
  const digest = ctx.persisted ? createHash("sha1").update(full).digest("base64") : "";
  const known = ctx.persisted?.get(block.tool_use_id);
  if (known && known.chars === chars && known.digest === digest) return { block: { ...block, content: known.block.content }, record: known.record, again: true };
  const tokensBefore = ctx.tokens.block(block);
  let marker = "";
  let tokensAfter = Infinity;
  let path: string | undefined;
  let unsaved: string | undefined;
  try {
    path = ctx.store.save(block.tool_use_id, full);
  } catch (e) {
    // A full or read-only disk: the marker must not claim a file that is not there. The host's
    // transcript (written ahead) still has the whole result.
    unsaved = `${(e as NodeJS.ErrnoException).code ?? "error"}: ${(e as Error).message.split("\n")[0]!.slice(0, 120)}`;
  }
  while (true) {
    marker = persistedMarker({ toolUseId: block.tool_use_id, ...(path !== undefined ? { path } : { unsaved: unsaved!, archived: ctx.archived }), chars, tokens: tokensBefore, preview: plain.slice(0, previewChars) + named });
    const next: ToolResultBlock = { ...block, content: marker };
    tokensAfter = ctx.tokens.block(next);
    if (tokensAfter < tokensBefore) {
      const record = { toolUseId: block.tool_use_id, toolName, path: path ?? "", chars, tokensBefore, tokensAfter };
      // Only a result that is on disk is remembered (an unsaved one is tried again next time).
      if (ctx.persisted && path !== undefined) {
        if (ctx.persisted.size >= PERSISTED_MEMO) ctx.persisted.delete(ctx.persisted.keys().next().value!);
        ctx.persisted.set(block.tool_use_id, { chars, digest, block: next, record });
      }
      return { block: next, record };
    }
    if (previewChars === 0) return null;
    previewChars = Math.floor(previewChars / 4);
  }
}

/** The message budget is reading: its blocks once one changes, its results' characters, and what moved. */
interface Reading {
  current: ContentBlock[];
  blocks: ContentBlock[] | null;
  total: number;
  persisted: PersistedResult[];
  /** Markers put back in place of results moved on an earlier call: not a new move, no event. */
  freedAgain: number;
}

/** A result moved (or its earlier marker put back): into the message's blocks, counted. */
function take(r: Reading, j: number, chars: number, done: ReturnType<typeof persist>): void {
  if (!done) return;
  r.blocks ??= r.current.slice();
  r.blocks[j] = done.block;
  if (done.again) r.freedAgain += done.record.tokensBefore - done.record.tokensAfter;
  else r.persisted.push(done.record);
  r.total -= chars - resultChars(done.block.content);
}

/** Layer 1: a tool result over its limit (or a batch over the per-message limit) goes to the store; the context keeps a marker with its path and a preview. */
export function budget(history: readonly Message[], ctx: LayerContext): LayerResult<BudgetEvent> {
  const { budget: cfg } = ctx.config;
  const maxTokens = resultLimitTokens(ctx.window, cfg);
  const minLimit = Math.min(cfg.perResultChars, ...Object.values(cfg.perToolChars));
  const r: Reading = { current: [], blocks: null, total: 0, persisted: [], freedAgain: 0 };
  let out: Message[] | null = null;

  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    if (m.role !== "user" || typeof m.content === "string") continue;
    r.current = m.content;
    r.blocks = null;
    r.total = 0;

    // Per result: over its tool's character limit, or over its share of the window.
    for (let j = 0; j < m.content.length; j++) {
      const b = m.content[j]!;
      if (b.type !== "tool_result") continue;
      const chars = resultChars(b.content);
      r.total += chars;
      // Cheap checks first: most results are far under every limit, and a result
      // cannot hold more tokens than characters.
      if (chars <= minLimit && (chars + 8 <= maxTokens || ctx.tokens.block(b) <= maxTokens)) continue;
      if (alreadyCompact(b)) continue;
      const name = toolUseFor(history, i, b.tool_use_id)?.name ?? "unknown";
      if (chars <= resultLimitChars(name, cfg) && ctx.tokens.block(b) <= maxTokens) continue;
      take(r, j, chars, persist(b, name, ctx));
    }

    // Per message: a batch of parallel results over the batch limit, largest first.
    if (r.total > cfg.perMessageChars) {
      const now: ContentBlock[] = r.blocks ?? m.content;
      const candidates: { j: number; chars: number }[] = [];
      now.forEach((b, j) => {
        if (b.type === "tool_result" && !alreadyCompact(b)) candidates.push({ j, chars: resultChars(b.content) });
      });
      candidates.sort((a, b) => b.chars - a.chars || a.j - b.j);
      for (const { j, chars } of candidates) {
        if (r.total <= cfg.perMessageChars) break;
        const b = now[j] as ToolResultBlock;
        take(r, j, chars, persist(b, toolUseFor(history, i, b.tool_use_id)?.name ?? "unknown", ctx));
      }
    }

    if (r.blocks) {
      out ??= history.slice();
      out[i] = { ...m, content: r.blocks };
    }
  }

  if (!out) return { history: history as Message[], freedTokens: 0, event: null };
  const { persisted, freedAgain } = r;
  const freedTokens = persisted.reduce((s, p) => s + p.tokensBefore - p.tokensAfter, 0);
  if (persisted.length === 0) return { history: out, freedTokens: freedAgain, event: null };
  return { history: out, freedTokens: freedTokens + freedAgain, event: { kind: "budget", persisted, freedTokens } };
}
