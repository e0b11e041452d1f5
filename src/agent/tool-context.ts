// The tool context of one run: a new object over the caller's, with this run's signal and,
// when subagents are enabled, the task tool's runner. The caller's object is never written to;
// its session state (readState, todos, the permission prompt, …) is shared as the same objects,
// so what the tools record there outlives the run.
import type { ToolContext } from "../tools/types.ts";
import { type SubagentParent, createSubagentRunner } from "./subagent.ts";
import type { AgentEvent, AgentOptions, CompactionRecord } from "./types.ts";

/** What the subagents take from the running loop. */
export interface RunLinks {
  /** The loop itself (runAgent), which runs each subagent. */
  run: SubagentParent["run"];
  /** The run's current model. */
  model: () => string;
  emit: (e: AgentEvent) => void;
  onCompaction: (r: CompactionRecord) => void;
  /** How full the run's context is now (the context tool). */
  contextUsage: NonNullable<ToolContext["contextUsage"]>;
}

/** The context the run's tools get, or undefined when there is neither a toolset nor a context. */
export function runToolContext(opts: AgentOptions, links: RunLinks): ToolContext | undefined {
  const base: ToolContext | undefined = opts.toolset ? (opts.toolContext ?? { workspace: process.cwd(), readState: new Map(), todos: [] }) : opts.toolContext;
  if (!base) return undefined;
  const ctx: ToolContext = { ...base, signal: opts.signal, contextUsage: links.contextUsage };
  if (opts.subagents) {
    ctx.runSubagent = createSubagentRunner(opts.subagents, {
      run: links.run,
      client: opts.client,
      model: links.model,
      maxOutputTokens: opts.maxOutputTokens,
      retry: opts.retry,
      fallbackModel: opts.fallbackModel,
      askPermission: base.askPermission,
      ...(base.readDenied ? { readDenied: base.readDenied } : {}),
      ...(base.passEnv ? { passEnv: base.passEnv } : {}),
      workspace: base.workspace,
      parentTranscript: opts.transcript,
      onEvent: links.emit,
      onCompaction: links.onCompaction,
    });
  }
  return ctx;
}
