// One assistant message's tool calls: consecutive read-only calls run together, every other
// call alone, in order; results come back in call order, one per tool_use. When the signal
// fires, a call still running is answered at once with an "interrupted" result (its process
// is killed by the tool itself through the same signal).
import type { ToolResultBlock, ToolUseBlock } from "../messages/types.ts";
import { runToolCall } from "../tools/index.ts";
import type { Tool, ToolContext, ToolOutcome } from "../tools/types.ts";
import type { AgentEvent } from "./types.ts";

export const INTERRUPTED_TEXT = "[lethe] The user interrupted this tool call before it finished; it may have had partial effects.";

export interface CallResult {
  block: ToolResultBlock;
  outcome?: ToolOutcome;
}

export interface ToolBatchOptions {
  toolset?: Tool[];
  ctx?: ToolContext;
  /** Runs one call when there is no toolset. Throwing is reported to the model as an error result. */
  runTool?: (use: ToolUseBlock, signal?: AbortSignal) => Promise<ToolOutcome>;
  signal?: AbortSignal;
  emit: (e: AgentEvent) => void;
}

export function createToolBatchRunner(opts: ToolBatchOptions): (uses: ToolUseBlock[]) => Promise<CallResult[]> {
  const { toolset, ctx, signal, emit } = opts;
  const readOnly = new Set((toolset ?? []).filter((t) => t.readOnly).map((t) => t.name));

  const runOne = async (use: ToolUseBlock): Promise<CallResult> => {
    emit({ type: "tool", use });
    let outcome: ToolOutcome;
    try {
      if (toolset && ctx) outcome = await runToolCall(toolset, use, ctx);
      else if (opts.runTool) outcome = await opts.runTool(use, signal);
      else outcome = { content: `Error: no tool runner for ${use.name}`, isError: true };
    } catch (err) {
      outcome = { content: `Error: ${err instanceof Error ? err.message : String(err)}`, isError: true };
    }
    const block: ToolResultBlock = { type: "tool_result", tool_use_id: use.id, content: outcome.content, ...(outcome.isError ? { is_error: true } : {}) };
    emit({ type: "tool_result", use, result: block });
    return { block, outcome };
  };

  /** Resolves with the tool's result, or with an "interrupted" result as soon as the signal fires. */
  const guarded = (use: ToolUseBlock): Promise<CallResult> => {
    const interrupted = { block: { type: "tool_result" as const, tool_use_id: use.id, content: INTERRUPTED_TEXT, is_error: true } };
    if (signal?.aborted) return Promise.resolve(interrupted);
    if (!signal) return runOne(use);
    return new Promise((resolve) => {
      const onAbort = () => resolve(interrupted);
      signal.addEventListener("abort", onAbort, { once: true });
      runOne(use).then(
        (r) => {
          signal.removeEventListener("abort", onAbort);
          resolve(r);
        },
        () => resolve(interrupted),
      );
    });
  };

  return async (uses) => {
    const out: CallResult[] = [];
    let i = 0;
    while (i < uses.length) {
      if (readOnly.has(uses[i]!.name)) {
        let j = i;
        while (j < uses.length && readOnly.has(uses[j]!.name)) j++;
        out.push(...(await Promise.all(uses.slice(i, j).map(guarded))));
        i = j;
      } else {
        out.push(await guarded(uses[i]!));
        i++;
      }
    }
    return out;
  };
}
