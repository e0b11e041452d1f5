// engine.observe: after each reply, the reported usage anchors the meter, unless the server
// evidently cut the prompt to a smaller context of its own (then that window is learned).
import type { Message } from "../messages/types.ts";
import { checkHistory, checkMessage } from "../messages/input.ts";
import { type Usage, usageInput } from "../tokens/meter.ts";
import type { PrepareCall } from "./contract.ts";
import { checkUsage } from "./options.ts";
import { learnWindow } from "./recover.ts";
import type { EngineState } from "./state.ts";

/** Estimate of a request minus thinking (servers may drop earlier turns' thinking from the input). */
function visibleTokens(s: EngineState, history: readonly Message[], fixedTokens: number): number {
  let n = fixedTokens;
  for (const m of history) {
    if (typeof m.content === "string" || m.role !== "assistant") n += s.counter.message(m);
    else for (const b of m.content) if (b.type !== "thinking" && b.type !== "redacted_thinking") n += s.counter.block(b);
  }
  return n;
}

export function observeReply(s: EngineState, sent: readonly Message[], reply: Message, usage: Usage, call: PrepareCall = {}): void {
  checkHistory(sent, "observe: sent");
  checkMessage(reply, "observe: reply");
  usage = checkUsage(usage);
  s.lastResponseAt = (s.opts.now ?? Date.now)();
  const fixed = call.fixedTokens ?? 0;
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
