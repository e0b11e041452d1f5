// The agent loop's contract: what runAgent takes, what it reports as it goes, and what it
// returns; and the compaction records (kind, tokens before → after) the CLI prints and the
// headless JSON carries.
import type { Engine } from "../engine/index.ts";
import type { CompactionEvent, CompactionKind } from "../compaction/types.ts";
import { type CompactionRecord, compactionRecords } from "../compaction/state/records.ts";
import type { Message, ToolResultBlock, ToolUseBlock } from "../messages/types.ts";
import type { ModelClient, ModelError, ModelResponse, StreamEvent, ToolDefinition } from "../model/types.ts";
import type { RetryOptions } from "../model/retry.ts";
import type { TranscriptWriter } from "../session/transcript.ts";
import type { Usage } from "../tokens/meter.ts";
import type { Tool, ToolContext, ToolOutcome } from "../tools/types.ts";

export type { ToolOutcome };

/** Options of runAgent. */
export interface AgentOptions {
  engine: Engine;
  client: ModelClient;
  model: string;
  system?: string;
  /** Tool definitions sent to the model; derived from `toolset` when absent. */
  tools?: ToolDefinition[];
  /** The tools (src/tools contract). Calls run through runToolCall with `toolContext`. */
  toolset?: Tool[];
  /**
   * Session state the tools share (workspace, read state, todos, permission prompt). The loop
   * never writes to it: the tools run with a copy that adds this run's `signal` (and
   * `runSubagent`, when `subagents` is given); readState and todos are the same objects.
   */
  toolContext?: ToolContext;
  /** Runs one tool call (when there is no toolset). Throwing is reported to the model as an error result. */
  runTool?: (use: ToolUseBlock, signal?: AbortSignal) => Promise<ToolOutcome>;
  /** Enables the task tool: how subagents are built. */
  subagents?: SubagentOptions;
  transcript?: TranscriptWriter;
  maxTurns?: number;
  maxOutputTokens: number;
  signal?: AbortSignal;
  onEvent?: (e: AgentEvent) => void;
  /** The price of one call, for the transcript's request lines and the budget (the CLI passes its pricing). */
  requestCost?: (model: string, usage: Usage) => number | undefined;
  /**
   * The run's spending limit in dollars (needs requestCost): the run stops with stop
   * "max_budget" before the request (or summary) that would take it past the limit. Calls whose
   * price is unknown count 0.
   */
  maxBudgetUsd?: number;
  /** Retry options for transient provider errors (tests inject sleep). */
  retry?: RetryOptions;
  /** Switch to this model after `fallbackAfter` consecutive overloaded / 5xx errors on the main one. */
  fallbackModel?: string;
  /** Default 3. */
  fallbackAfter?: number;
  /** Continuations after a max_tokens stop, in a row (default 3). */
  maxContinuations?: number;
  /** Texts for the model from the host (e.g. why a tool was denied), added after the next batch of tool results. */
  takeNotes?: () => string[];
  /**
   * auto-compact "ask": called when the context is over the threshold; true compacts now.
   * Asked once per crossing, and again when the context no longer fits at all.
   */
  onCompactSuggested?: (info: { tokens: number; threshold: number; full: boolean }) => Promise<boolean>;
}

export type { CompactionRecord } from "../compaction/state/records.ts";

/** What a subagent's own engine is built with. */
export interface SubagentEngineArgs {
  /** The subagent's own folder (tool-results/ and transcript.jsonl), when the parent has one. */
  sessionDir?: string;
  transcript?: TranscriptWriter;
  onEvent?: (e: CompactionEvent) => void;
}

/** How the task tool's subagents are built (their engine, tools and limits). */
export interface SubagentOptions {
  /** The parent session's folder; subagents live in <sessionDir>/subagents/<id>/. */
  sessionDir?: string;
  /** Builds the subagent's own engine: same window and settings, its own state. */
  createEngine: (args: SubagentEngineArgs) => Engine;
  /** The subagent's tools (the task tool is removed if present: no nesting). */
  toolset: Tool[];
  system?: string;
  /** Model turns a subagent may take (default 50). */
  maxTurns?: number;
}

/** What runAgent reports as it goes (stream deltas, compactions, requests, responses, tool calls, …). */
export type AgentEvent =
  | { type: "stream"; event: StreamEvent }
  | { type: "compaction"; event: CompactionEvent; record?: CompactionRecord }
  | { type: "compacting"; kind: CompactionKind }
  | { type: "request"; model: string; tokens: number; threshold: number }
  /** A model call answered; `summary`: the engine's summary call (its cost is the run's too). */
  | { type: "response"; usage: Usage; stopReason: ModelResponse["stopReason"]; model: string; summary?: boolean }
  | { type: "message"; message: Message }
  | { type: "tool"; use: ToolUseBlock }
  | { type: "tool_result"; use: ToolUseBlock; result: ToolResultBlock }
  | { type: "retry"; error: ModelError; attempt: number; delayMs: number }
  | { type: "fallback"; from: string; to: string; error: ModelError }
  | { type: "continuation"; count: number; /** "context_window": the window filled up (the history is compacted before going on). */ reason?: "max_tokens" | "context_window" }
  | { type: "subagent"; id: string; phase: "start" | "end"; description?: string; transcript?: string }
  | { type: "subagent_event"; id: string; event: AgentEvent };

/** Why runAgent stopped. */
export type AgentStop = "end_turn" | "max_turns" | "aborted" | "max_tokens" | "refusal" | "max_budget";

export interface AgentResult {
  history: Message[];
  /** Text of the final assistant message (with the text of the replies it continued, after max_tokens). */
  text: string;
  turns: number;
  usage: Required<Omit<Usage, "cleared_input_tokens">>;
  compactions: CompactionRecord[];
  /** Why the loop stopped. */
  stop: AgentStop;
  /** The model that answered last (the fallback after a switch). */
  model: string;
}

/** Emits a compaction event for each of `events`, in order, with its record; returns the records. */
export function reportCompactions(events: readonly CompactionEvent[], tokensAfter: number, emit: (e: AgentEvent) => void): CompactionRecord[] {
  const records = compactionRecords(events, tokensAfter);
  const out: CompactionRecord[] = [];
  for (const e of events) {
    const record = records.get(e);
    if (record) out.push(record);
    emit({ type: "compaction", event: e, ...(record ? { record } : {}) });
  }
  return out;
}
