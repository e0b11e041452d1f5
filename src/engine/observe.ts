// engine.observe: after each reply, the reported usage anchors the meter, unless the server
// evidently cut the prompt to a smaller context of its own (then that window is learned), or
// compacted or edited it on its side (Anthropic's context management).
import type { Message } from "../messages/types.ts";
import { checkHistory, checkMessage } from "../messages/input.ts";
import { isCompaction } from "../messages/compaction.ts";
import { type Usage, usageInput } from "../tokens/meter.ts";
import type { PrepareCall } from "./contract.ts";
import { checkUsage } from "./options.ts";
import { learnWindow } from "./recover.ts";
import { type EngineState, layerContext } from "./state.ts";
import { microAhead } from "../compaction/layers/micro-ahead.ts";
import { snipAhead } from "../compaction/layers/snip-ahead.ts";

/** Estimate of a request minus thinking (servers may drop earlier turns' thinking from the input). */
function visibleTokens(s: EngineState, history: readonly Message[], fixedTokens: number): number {
  let n = fixedTokens;
  for (const m of history) {
    if (typeof m.content === "string" || m.role !== "assistant") n += s.counter.message(m);
    else for (const b of m.content) if (b.type !== "thinking" && b.type !== "redacted_thinking") n += s.counter.block(b);
  }
  return n;
}

/** Tokens the server's context editing cleared, from an Anthropic (beta) reply's context_management. */
function clearedBy(reply: Message): number {
  try {
    const edits = (reply as { context_management?: { applied_edits?: { cleared_input_tokens?: unknown }[] } }).context_management?.applied_edits;
    if (!Array.isArray(edits)) return 0;
    return edits.reduce((n, e) => n + (typeof e?.cleared_input_tokens === "number" && e.cleared_input_tokens > 0 ? e.cleared_input_tokens : 0), 0);
  } catch {
    return 0; // a reply whose extras cannot be read: nothing cleared that we know of
  }
}

export function observeReply(s: EngineState, sent: readonly Message[], reply: Message, usage: Usage, call: PrepareCall = {}): void {
  checkHistory(sent, "observe: sent");
  checkMessage(reply, "observe: reply");
  usage = checkUsage(usage);
  s.lastResponseAt = (s.opts.now ?? Date.now)();
  const fixed = call.fixedTokens ?? 0;
  // The server compacted the context while answering (a compaction block in the reply): what it
  // reported is its compacted context, not what was sent. Nothing to calibrate on; the next
  // request starts from the block, and growth is measured afresh from there.
  if (Array.isArray(reply.content) && reply.content.some(isCompaction)) {
    s.rewrote = true;
    return;
  }
  // The server's context editing took tokens out before counting: compare with what was sent.
  const cleared = usage.cleared_input_tokens ?? clearedBy(reply);
  if (cleared) usage = { ...usage, input_tokens: usage.input_tokens + cleared };
  if (s.rewrote) {
    s.rewrote = false;
    s.truncation.reanchor(usageInput(usage), visibleTokens(s, sent, fixed));
    s.meter.observe(sent, reply, usage, fixed);
    return;
  }
  const seen = s.truncation.observe(usageInput(usage), visibleTokens(s, sent, fixed), usage.output_tokens ?? 0);
  if (seen.kind === "truncated") {
    // The server cut the prompt to its own context and counted only what it kept (Ollama's
    // OpenAI endpoint does this silently): the window it evidently has becomes ours.
    learnWindow(s, seen.window, "truncated", seen.reason);
    return;
  }
  // A figure that may be a cap anchors nothing (the estimate, higher, stands meanwhile).
  if (seen.kind === "suspect") return;
  s.meter.observe(sent, reply, usage, fixed);
}

/**
 * After a reply, the work of the next request that can be done before it, while the reply's tools
 * run: the carry of a snip it would make (compaction/layers/snip-ahead.ts) and the placeholders of
 * the results micro may clear (compaction/layers/micro-ahead.ts). Not when the server
 * compacted (the next request starts from its block).
 */
export function aheadOfNext(s: EngineState, sent: readonly Message[], reply: Message, call: PrepareCall = {}): void {
  if (Array.isArray(reply.content) && reply.content.some(isCompaction)) {
    s.middle.plan = undefined;
    return;
  }
  const history = [...sent, reply];
  const ctx = layerContext(s, call);
  try {
    snipAhead(history, ctx);
    microAhead(history, ctx);
  } catch {
    // Only a head start: the request works its carry and placeholders out itself (and fails there, if it must).
    s.middle.plan = undefined;
  }
}
