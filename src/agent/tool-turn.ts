// The tool-result turn: one assistant message's tool calls run (./tool-batch.ts) and their
// results go back as one user message, one result per tool_use in call order, with the note
// about calls cut off by max_tokens and the host's notes. Then the compact tool's compaction,
// once the whole batch's results are in.
import type { ContentBlock, ToolUseBlock } from "../messages/types.ts";
import type { CompactionGate } from "./compaction-gate.ts";
import type { Conversation } from "./conversation.ts";
import { TRUNCATED_CALL_TEXT } from "./reply.ts";
import type { CallResult } from "./tool-batch.ts";
import type { AgentOptions } from "./types.ts";

export interface ToolTurnDeps {
  runBatch: (uses: ToolUseBlock[]) => Promise<CallResult[]>;
  conversation: Conversation;
  gate: CompactionGate;
  signal?: AbortSignal;
  /** The run's options: `takeNotes` (the host's texts for the model). */
  opts: Pick<AgentOptions, "takeNotes">;
}

/** Runs `uses` and appends their results; "aborted" when the signal fired meanwhile (the results are in, the run stops). */
export async function runToolTurn(d: ToolTurnDeps, uses: ToolUseBlock[], truncatedCalls: readonly ToolUseBlock[]): Promise<"aborted" | undefined> {
  const results = await d.runBatch(uses);
  const content: ContentBlock[] = results.map((r) => r.block);
  if (truncatedCalls.length > 0) content.push({ type: "text", text: TRUNCATED_CALL_TEXT });
  for (const text of d.opts.takeNotes?.() ?? []) content.push({ type: "text", text });
  d.conversation.append({ role: "user", content });
  if (d.signal?.aborted) return "aborted";
  // The compact tool: compact once the whole batch's results are in.
  const asks = results.map((r) => r.outcome?.compact).filter((c): c is { focus?: string } => c !== undefined);
  if (asks.length > 0) {
    const focus = asks.map((c) => c.focus?.trim()).filter((f): f is string => !!f).join("\n");
    await d.gate.compactNow("manual", focus || undefined);
  }
  return undefined;
}
