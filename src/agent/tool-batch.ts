// One assistant message's tool calls: consecutive read-only calls run together, every other
// call alone, in order; results come back in call order, one per tool_use. When the signal
// fires, a call still running is answered at once with an "interrupted" result (its process
// is killed by the tool itself through the same signal).
import type { ToolResultBlock, ToolUseBlock } from "../messages/types.ts";
import { runToolCall } from "../tools/index.ts";
import type { Tool, ToolContext, ToolOutcome } from "../tools/types.ts";
import type { AgentEvent } from "./types.ts";

export const INTERRUPTED_TEXT = "[lethe] The user interrupted this tool call before it finished; it may have had partial effects.";
/** Interrupted before the call started: it never ran. */
export const NOT_STARTED_TEXT = "[lethe] The user interrupted before this tool call started; it was not run.";
/** Interrupted while the permission question was still open: the call never ran. */
export const NOT_RUN_TEXT = "[lethe] The user interrupted while this tool call was waiting for permission; it was not run.";

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

  const runOne = async (use: ToolUseBlock, asking: { open: boolean }): Promise<CallResult> => {
    emit({ type: "tool", use });
    let outcome: ToolOutcome;
    // While the permission question is open nothing has run: an interrupt then says so.
    const ask = ctx?.askPermission;
    const callCtx: ToolContext | undefined = ctx && ask ? { ...ctx, askPermission: async (req) => { asking.open = true; try { return await ask(req); } finally { asking.open = false; } } } : ctx;
    try {
      if (toolset && callCtx) outcome = await runToolCall(toolset, use, callCtx);
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
    const asking = { open: false };
    const interrupted = (text: string) => ({ block: { type: "tool_result" as const, tool_use_id: use.id, content: text, is_error: true } });
    if (signal?.aborted) return Promise.resolve(interrupted(NOT_STARTED_TEXT));
    if (!signal) return runOne(use, asking);
    return new Promise((resolve) => {
      const onAbort = () => resolve(interrupted(asking.open ? NOT_RUN_TEXT : INTERRUPTED_TEXT));
      signal.addEventListener("abort", onAbort, { once: true });
      runOne(use, asking).then(
        (r) => {
          signal.removeEventListener("abort", onAbort);
          resolve(r);
        },
        () => resolve(interrupted(INTERRUPTED_TEXT)),
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
