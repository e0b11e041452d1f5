// lethe/agent: lethe's own agent loop and its built-in tools (bash, read_file, write_file,
// edit_file, glob, grep, todo_write, task, compact, recall). The loop drives an engine and a model
// client; pass `toolset: createToolset()` to give it the tools.
export { runAgent, fixedTokensOf, historyAtFailure, runAtFailure, reportCompactions } from "./loop.ts";
export { BudgetError, createSpend, type Spend } from "./spend.ts";
export type { AgentEvent, AgentOptions, AgentResult, AgentStop, CompactionRecord, ToolOutcome } from "./types.ts";
export type { SubagentOptions, SubagentEngineArgs } from "./types.ts";
export { systemPrompt, type PromptInfo } from "./prompt.ts";
export {
  createToolset,
  toolDefinitions,
  runToolCall,
  inputSchemaOf,
  TOOL_NAMES,
  createBashTool,
  BASH_LIMITS,
  resolveInWorkspace,
  ToolError,
  type AnyTool,
  type ToolName,
  type ToolsetOptions,
  type Tool,
  type ToolContext,
  type TodoItem,
  type BashLimits,
} from "../tools/index.ts";
