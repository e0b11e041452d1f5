// Layer 3, micro: replace old tool results the model has already seen with a short
// placeholder, keeping the newest N intact. The original is saved to tool-results/
// first, so the placeholder can say exactly where it is.
//
// Two triggers:
// - size: only when clearing frees at least minSavingsTokens. Every clear rewrites the
//   prompt prefix (a cache miss), so we clear in batches rather than one result a turn.
// - idle: after a gap longer than the prompt-cache lifetime the cache is cold anyway,
//   so everything older than the newest N goes, whatever the savings.
import { resultText, toolUseIndex } from "../messages/blocks.ts";
import type { ContentBlock, Message, ToolResultBlock } from "../messages/types.ts";
import { microMinSavings } from "./config.ts";
import { clearedPlaceholder, describeCall, isClearedPlaceholder, isPersistedMarker, persistedPath } from "./markers.ts";
import type { ClearedResult, LayerContext, LayerResult, MicroEvent } from "./types.ts";

interface Candidate {
  msg: number;
  block: number;
  original: ToolResultBlock;
  call: string;
  tokens: number;
  savedPath?: string;
  name: string;
}

const PATH_STANDIN = "/workspace/.lethe/sessions/00000000-0000/tool-results/toolu_000000000000000000000000.txt";

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
    const call = describeCall(uses.get(b.tool_use_id));
    // The path is only known once saved; a stand-in of typical length prices the placeholder.
    const after = ctx.tokens.text(clearedPlaceholder({ toolUseId: b.tool_use_id, call, tokens, savedPath: savedPath ?? PATH_STANDIN }));
    if (after >= tokens) continue;
    savings += tokens - after;
    candidates.push({ msg, block, original: b, call, tokens, savedPath, name });
  }

  if (candidates.length === 0) return none;
  if (!idle && savings < microMinSavings(ctx.window, cfg)) return none;

  // Save each original before replacing it, so the exact text stays recallable by id.
  const out = history.slice();
  const cleared: ClearedResult[] = [];
  let freed = 0;
  for (const c of candidates) {
    const savedPath = c.savedPath ?? ctx.store.save(c.original.tool_use_id, resultText(c.original.content));
    const replacement: ToolResultBlock = {
      ...c.original,
      content: clearedPlaceholder({ toolUseId: c.original.tool_use_id, call: c.call, tokens: c.tokens, savedPath }),
    };
    freed += c.tokens - ctx.tokens.block(replacement);
    const m = out[c.msg]!;
    const blocks = (m.content as ContentBlock[]).slice();
    blocks[c.block] = replacement;
    out[c.msg] = { ...m, content: blocks };
    cleared.push({ toolUseId: c.original.tool_use_id, toolName: c.name, tokens: c.tokens });
  }
  return {
    history: out,
    freedTokens: freed,
    event: { kind: "micro", trigger: idle ? "idle" : "size", cleared, freedTokens: freed },
  };
}
