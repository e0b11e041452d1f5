// Layer 3, micro: replace old tool results the model has already seen with a short
// placeholder, keeping the newest N intact. The original is saved to tool-results/
// first (unless the transcript already holds it), so the placeholder says where it is.
//
// Two triggers:
// - size: only when clearing frees at least minSavingsTokens. Every clear rewrites the
//   prompt prefix (a cache miss), so we clear in batches rather than one result a turn.
// - idle: after a gap longer than the prompt-cache lifetime the cache is cold anyway,
//   so everything older than the newest N goes, whatever the savings.
import { createHash } from "node:crypto";
import { resultText, toolUseFor } from "../../messages/blocks.ts";
import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from "../../messages/types.ts";
import { describeMedia } from "../../messages/media.ts";
import { microMinSavings, thresholdOf } from "../config/config.ts";
import { clearedPlaceholder, describeCall, isClearedPlaceholder, isPersistedMarker, persistedPath, recordedTokens } from "./markers.ts";
import type { ClearedResult, LayerContext, LayerResult, MicroEvent } from "../types.ts";

interface Candidate {
  msg: number;
  block: number;
  original: ToolResultBlock;
  /** The call it answers: described only when it is cleared (most requests clear nothing). */
  use: ToolUseBlock;
  tokens: number;
  savedPath?: string;
}

const PATH_STANDIN = "/workspace/.lethe/sessions/00000000-0000/tool-results/toolu_000000000000000000000000.txt";

/** Index of the last assistant message: results after it have not been seen by the model. */
export function seenBoundary(history: readonly Message[]): number {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]!.role === "assistant") return i;
  return -1;
}

/**
 * Clearing rewrites the prompt cache from the first cleared result on: the suffix S is
 * written again at 1.25× instead of read at 0.1×. It pays when the reads it saves over
 * the turns still to come (about as many as the session has had: a long session tends
 * to go on) exceed that one-off cost: 0.1·X·R > 1.15·(S − X).
 */
function clearingPays(history: readonly Message[], from: number, freed: number, ctx: LayerContext): boolean {
  let suffix = 0;
  let turns = 0;
  for (let i = 0; i < history.length; i++) {
    if (history[i]!.role === "assistant") turns++;
    if (i >= from) suffix += ctx.tokens.message(history[i]!);
  }
  const remaining = Math.min(200, Math.max(10, turns));
  return 0.1 * freed * remaining > 1.15 * Math.max(0, suffix - freed);
}

/** Bound on what micro remembers having saved (ids beyond it are saved again if they come back). */
const CLEARED_MEMO = 20_000;

/** Saves a result before clearing it, or names where it went the last time (the same id and text). */
function save(ctx: LayerContext, id: string, text: string): string {
  if (!ctx.cleared) return ctx.store.save(id, text);
  const digest = createHash("sha1").update(text).digest("base64");
  const known = ctx.cleared.get(id);
  if (known && known.digest === digest) return known.path;
  const path = ctx.store.save(id, text);
  if (ctx.cleared.size >= CLEARED_MEMO) ctx.cleared.delete(ctx.cleared.keys().next().value!);
  ctx.cleared.set(id, { digest, path });
  return path;
}

/** The newest results micro keeps whole may take at most this share of the conversation's room under the threshold. */
const KEEP_SHARE = 0.25;
/** From this share of the threshold on, micro clears what it can without weighing the prompt cache. */
const PRESSURE_SHARE = 0.8;

/** A placeholder costs about this much; the gate uses it to avoid building every placeholder each turn. */
const PLACEHOLDER_TOKENS = 80;

// The compactable tools' names, lowercased, per config list (made once, not on every request).
const compactableSets = new WeakMap<readonly string[], ReadonlySet<string>>();
export function compactableOf(tools: readonly string[]): ReadonlySet<string> {
  let set = compactableSets.get(tools);
  if (set === undefined) compactableSets.set(tools, (set = new Set(tools.map((t) => t.toLowerCase()))));
  return set;
}

/** Whether the context is near the threshold (at PRESSURE_SHARE of it): a measure walks the history, so it is asked only when it decides something. */
function isPressed(history: readonly Message[], ctx: LayerContext, threshold: number): boolean {
  return (ctx.measure ? ctx.measure(history) : (ctx.fixedTokens ?? 0) + ctx.tokens.messages(history)) >= PRESSURE_SHARE * threshold;
}

/**
 * The placeholder for a cleared result: the call it answered (`call`, described), its size, where its
 * original is (`savedPath`; none: the transcript) and what media it held.
 */
export function placeholderOf(original: ToolResultBlock, call: string, tokens: number, savedPath: string | undefined): ToolResultBlock {
  const size = recordedTokens(original.content) ?? tokens; // a result budget moved is named with its own size, not its marker's
  const media = Array.isArray(original.content) ? original.content.filter((b) => b.type !== "text").map((b) => describeMedia(b)) : [];
  return { ...original, content: clearedPlaceholder({ toolUseId: original.tool_use_id, call, tokens: size, savedPath, media }) };
}

/** Where budget saved a result it moved (its marker names the file), else undefined. */
export const persistedAt = (c: ToolResultBlock["content"]): string | undefined => (typeof c === "string" && isPersistedMarker(c) ? persistedPath(c) : undefined);

/** Layer 3: clears the content of old tool results the model has already seen (the newest few stay whole), when that pays for the prompt cache it breaks; each original is saved first, so it stays recallable. */
export function micro(history: readonly Message[], ctx: LayerContext): LayerResult<MicroEvent> {
  const cfg = ctx.config.micro;
  const none = { history: history as Message[], freedTokens: 0, event: null };
  if (!cfg.enabled) return none;

  const idle = cfg.idleClearMs > 0 && ctx.lastResponseAt !== undefined && ctx.now - ctx.lastResponseAt > cfg.idleClearMs;
  const compactable = compactableOf(cfg.compactableTools);
  const seenUpTo = seenBoundary(history);

  // Seen, compactable results, oldest first.
  const seen: { msg: number; block: number; b: ToolResultBlock; use: ToolUseBlock }[] = [];
  for (let i = 0; i < seenUpTo; i++) {
    const m = history[i]!;
    if (m.role !== "user" || typeof m.content === "string") continue;
    for (let j = 0; j < m.content.length; j++) {
      const b = m.content[j]!;
      if (b.type !== "tool_result") continue;
      const use = toolUseFor(history, i, b.tool_use_id);
      if (use && compactable.has(use.name.toLowerCase())) seen.push({ msg: i, block: j, b, use });
    }
  }

  const threshold = thresholdOf(ctx);
  // Measured only when it decides something (a measure walks the history: prepare is a hot path).
  let pressed: boolean | undefined;
  // The newest results stay whole: at most keepRecent of them, and no more than a quarter of the
  // room the conversation has under the threshold (the threshold less the system prompt and tools:
  // three 3.5k reads are most of a 16k window). The newest is kept too, unless the context is
  // pressed and it alone is over that share: the model has read it already, and a summary would
  // take it out anyway.
  const keepTokens = Math.floor(Math.max(0, threshold - (ctx.fixedTokens ?? 0)) * KEEP_SHARE);
  let kept = 0;
  let keptTokens = 0;
  for (let i = seen.length - 1; i >= 0 && kept < cfg.keepRecent; i--) {
    const t = ctx.tokens.block(seen[i]!.b);
    if (keptTokens + t > keepTokens && (kept > 0 || (pressed ??= isPressed(history, ctx, threshold)))) break;
    kept++;
    keptTokens += t;
  }

  // Candidates and an estimate of what clearing them saves.
  const candidates: Candidate[] = [];
  let estimate = 0;
  for (const { msg, block, b, use } of seen.slice(0, seen.length - kept)) {
    const c = b.content;
    if (typeof c === "string" && isClearedPlaceholder(c)) continue;
    const tokens = ctx.tokens.block(b);
    if (!idle && tokens < cfg.minResultTokens) continue;
    const savedPath = persistedAt(c);
    estimate += Math.max(0, tokens - PLACEHOLDER_TOKENS);
    candidates.push({ msg, block, original: b, use, tokens, savedPath });
  }
  if (candidates.length === 0) return none;
  // Tight: near the threshold with results too large for the window's room to keep even the newest
  // (a small window): a summary is the alternative, and it rewrites the whole prompt, so clearing
  // pays whatever the prompt cache says.
  const worth = idle || (estimate >= microMinSavings(ctx.window, cfg) && (!cfg.cacheAware || clearingPays(history, candidates[0]!.msg, estimate, ctx)));
  if (!worth && !(kept === 0 && (pressed ??= isPressed(history, ctx, threshold)))) return none;

  // Save each original before replacing it, so the exact text stays recallable by id.
  const out = history.slice();
  const cleared: ClearedResult[] = [];
  let freed = 0;
  for (const c of candidates) {
    const id = c.original.tool_use_id;
    // Where the original is: already saved (budget's file), in the transcript, or saved now. Only
    // that last needs a look first, at a placeholder naming a long path (nothing saved in vain);
    // the others are priced once, as they will be sent (and were made after the reply that saw
    // them, when the engine could: ./micro-ahead.ts).
    const saves = c.savedPath === undefined && !ctx.archived;
    let replacement: ToolResultBlock;
    if (saves) {
      const call = describeCall(c.use);
      if (ctx.tokens.text(clearedPlaceholder({ toolUseId: id, call, tokens: recordedTokens(c.original.content) ?? c.tokens, savedPath: PATH_STANDIN })) + 8 >= c.tokens) continue;
      replacement = placeholderOf(c.original, call, c.tokens, save(ctx, id, resultText(c.original.content)));
    } else {
      const ahead = ctx.placeholders?.get(c.original);
      replacement = ahead !== undefined && ahead.use === c.use ? ahead.block : placeholderOf(c.original, describeCall(c.use), c.tokens, c.savedPath);
    }
    const after = ctx.tokens.block(replacement);
    if (after + (saves ? 0 : 8) >= c.tokens) continue;
    freed += c.tokens - after;
    const m = out[c.msg]!;
    const blocks = (m.content as ContentBlock[]).slice();
    blocks[c.block] = replacement;
    out[c.msg] = { ...m, content: blocks };
    cleared.push({ toolUseId: id, toolName: c.use.name, tokens: c.tokens });
  }
  if (cleared.length === 0) return none;
  return {
    history: out,
    freedTokens: freed,
    event: { kind: "micro", trigger: idle ? "idle" : "size", cleared, freedTokens: freed },
  };
}
