// Layer 3, micro: replace old tool results the model has already seen with a short
// placeholder, keeping the newest N intact.
//
// Two triggers:
// - size: only when clearing frees at least minSavingsTokens. Every clear rewrites the
//   prompt prefix (a cache miss), so we clear in batches rather than one result a turn.
// - idle: after a gap longer than the prompt-cache lifetime the cache is cold anyway,
//   so everything older than the newest N goes, whatever the savings.
import { toolUseIndex } from "../messages/blocks.ts";
import type { ContentBlock, Message, ToolResultBlock } from "../messages/types.ts";
import { microMinSavings } from "./config.ts";
import { clearedPlaceholder, describeCall, isClearedPlaceholder, isPersistedMarker, persistedPath } from "./markers.ts";
import type { ClearedResult, LayerContext, LayerResult, MicroEvent } from "./types.ts";

interface Candidate {
  msg: number;
  block: number;
  replacement: ToolResultBlock;
  record: ClearedResult;
}

/** Index of the last assistant message: results after it have not been seen by the model. */
export function seenBoundary(history: readonly Message[]): number {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]!.role === "assistant") return i;
  return -1;
}

export function micro(history: readonly Message[], ctx: LayerContext): LayerResult<MicroEvent> {
  const cfg = ctx.config.micro;
  const none = { history: history as Message[], freedTokens: 0, event: null };
  if (!cfg.enabled) return none;

  const idle = cfg.idleClearMs > 0 && ctx.lastResponseAt !== undefined && ctx.now - ctx.lastResponseAt > cfg.idleClearMs;
  const compactable = new Set(cfg.compactableTools.map((t) => t.toLowerCase()));
  const uses = toolUseIndex(history);
  const seenUpTo = seenBoundary(history);

  // Seen, compactable results, oldest first.
  const seen: { msg: number; block: number; b: ToolResultBlock; name: string }[] = [];
  for (let i = 0; i < seenUpTo; i++) {
    const m = history[i]!;
    if (m.role !== "user" || typeof m.content === "string") continue;
    m.content.forEach((b, j) => {
      if (b.type !== "tool_result") return;
      const use = uses.get(b.tool_use_id);
      const name = use?.name ?? "";
      if (compactable.has(name.toLowerCase())) seen.push({ msg: i, block: j, b, name });
    });
  }

  const old = seen.slice(0, Math.max(0, seen.length - cfg.keepRecent));
  const candidates: Candidate[] = [];
  let savings = 0;
  for (const { msg, block, b, name } of old) {
    const c = b.content;
    if (typeof c === "string" && isClearedPlaceholder(c)) continue;
    const tokens = ctx.tokens.block(b);
    if (!idle && tokens < cfg.minResultTokens) continue;
    const savedPath = typeof c === "string" && isPersistedMarker(c) ? persistedPath(c) : undefined;
    const text = clearedPlaceholder({ toolUseId: b.tool_use_id, call: describeCall(uses.get(b.tool_use_id)), tokens, savedPath });
    const replacement: ToolResultBlock = { ...b, content: text };
    const after = ctx.tokens.block(replacement);
    if (after >= tokens) continue;
    savings += tokens - after;
    candidates.push({ msg, block, replacement, record: { toolUseId: b.tool_use_id, toolName: name, tokens } });
  }

  if (candidates.length === 0) return none;
  if (!idle && savings < microMinSavings(ctx.window, cfg)) return none;

  const out = history.slice();
  for (const c of candidates) {
    const m = out[c.msg]!;
    const blocks = (m.content as ContentBlock[]).slice();
    blocks[c.block] = c.replacement;
    out[c.msg] = { ...m, content: blocks };
  }
  return {
    history: out,
    freedTokens: savings,
    event: { kind: "micro", trigger: idle ? "idle" : "size", cleared: candidates.map((c) => c.record), freedTokens: savings },
  };
}
