// The agent loop: prepare → streamed call → run tools → append, until the model stops
// calling tools. Every message is written to the transcript before it is sent
// (write-ahead), so a killed process loses nothing that reached the model.
//
// What the loop takes care of besides the happy path:
// - tools: read-only calls of one assistant message run in parallel, the others one by one
//   in order; results always come back in call order, one per tool_use;
// - the compact tool: after the batch's results are appended, engine.compact (kind "manual");
// - task: a subagent (./subagent.ts) with its own engine and transcript; its compactions are
//   reported here with kind "subagent";
// - max_tokens: the partial reply is kept and the model asked to continue without repeating;
// - transient provider errors: withRetry (backoff with jitter, retry-after honoured); a stream
//   cut mid-way is retried as a new request and, since only complete replies are appended,
//   nothing is duplicated; after repeated overloaded / 5xx errors, the fallback model;
// - "prompt too long" from the provider: engine.recover, then one retry;
// - cancellation (AbortSignal, Ctrl-C): the running turn stops, the history stays valid and
//   the result says "aborted"; the session can go on.
//
// Layout: ./types.ts (options, events, result, compaction records), ./conversation.ts (the
// history and its transcript), ./compaction-gate.ts (beforeRequest and the "ask" question),
// ./request.ts (one request: the reactive path, then the accounting; ./request-log.ts its
// transcript line), ./model-call.ts (one call with retries and the fallback model), ./reply.ts
// (stop reasons: refusal, pause, max_tokens continuations, tool calls), ./tool-turn.ts (the
// tool-result turn; ./tool-batch.ts runs one message's calls), ./tool-context.ts (the tools'
// context for the run), ./subagent.ts (task); this file the turn loop itself.
import type { Message } from "../messages/types.ts";
import type { Engine } from "../engine/index.ts";
import type { CompactionEvent } from "../compaction/types.ts";
import { ModelError, type ModelResponse, type ToolDefinition } from "../model/types.ts";
import { toolDefinitions } from "../tools/index.ts";
import { type CompactionGate, createCompactionGate } from "./compaction-gate.ts";
import { createConversation } from "./conversation.ts";
import { createModelCaller } from "./model-call.ts";
import { type ReplyStep, createReplyHandler, textOf } from "./reply.ts";
import { type AccountDeps, accountReply, accountSummaries, sendRequest } from "./request.ts";
import { BudgetError, createSpend } from "./spend.ts";
import { createToolBatchRunner } from "./tool-batch.ts";
import { runToolContext } from "./tool-context.ts";
import { type ToolTurnDeps, runToolTurn } from "./tool-turn.ts";
import { type AgentOptions, type AgentResult, type AgentStop, type CompactionRecord, reportCompactions } from "./types.ts";

export type { AgentEvent, AgentOptions, AgentResult, AgentStop, CompactionRecord, ToolOutcome } from "./types.ts";
export { reportCompactions } from "./types.ts";
export { compactionRecords } from "../compaction/state/records.ts";
export { INTERRUPTED_TEXT } from "./tool-batch.ts";
export { CONTINUE_TEXT, TRUNCATED_CALL_TEXT } from "./reply.ts";

/** Fixed tokens of every request: the system prompt and the tool definitions. */
export function fixedTokensOf(engine: Engine, system: string | undefined, tools: readonly ToolDefinition[] | undefined): number {
  return engine.counter.text(system ?? "") + engine.counter.text(JSON.stringify(tools ?? []));
}

const AGENT_HISTORY = Symbol.for("lethe.agentHistory");

/** The history a failed runAgent had reached (attached to the error it threw), if any. */
export function historyAtFailure(e: unknown): Message[] | undefined {
  return e !== null && typeof e === "object" ? ((e as Record<symbol, unknown>)[AGENT_HISTORY] as Message[] | undefined) : undefined;
}

const AGENT_PARTIAL = Symbol.for("lethe.agentPartial");

/** What a failed runAgent had done before it failed (attached to the error it threw), if any. */
export function runAtFailure(e: unknown): Pick<AgentResult, "turns" | "usage" | "compactions"> & { spentUsd: number } | undefined {
  return e !== null && typeof e === "object" ? ((e as Record<symbol, unknown>)[AGENT_PARTIAL] as ReturnType<typeof runAtFailure>) : undefined;
}

/** After the agent saved its state and the summary ran: back to the task. */
export const SAVED_GO_ON_TEXT = "[lethe] The context was compacted after you saved your state. Go on with the task where you left off.";

const isAborted = (e: unknown) => e instanceof ModelError && e.kind === "aborted";

/** One run's parts and counters. */
interface AgentRun extends AccountDeps, ToolTurnDeps {
  opts: AgentOptions;
  gate: CompactionGate;
  handleReply: (reply: ModelResponse) => ReplyStep;
  maxTurns: number;
  compactions: CompactionRecord[];
  /** Model calls answered so far. */
  turns: number;
}

/** How a run ended. */
interface RunEnd {
  stop: AgentStop;
  text: string;
}

/** Runs lethe's agent loop from `start` (plus `prompt` as a new user message) until the model stops calling tools: compaction before every request, the reactive path, tools, retries, the transcript. */
export async function runAgent(start: readonly Message[], prompt: string | undefined, opts: AgentOptions): Promise<AgentResult> {
  const run = startRun(start, opts);
  if (prompt !== undefined) run.conversation.append({ role: "user", content: [{ type: "text", text: prompt }] });
  let end: RunEnd;
  try {
    end = await turnLoop(run);
  } catch (e) {
    if (e instanceof BudgetError) end = { stop: "max_budget", text: "" };
    else if (!isAborted(e) && !opts.signal?.aborted) {
      // The caller may go on with the session: give it the history as it stood (it is valid at
      // every point where something can throw, and everything in it is in the transcript), and
      // what the run did before it failed (turns, compactions, usage: a report says so).
      if (e !== null && typeof e === "object") {
        Object.defineProperty(e, AGENT_HISTORY, { value: run.conversation.history, configurable: true });
        Object.defineProperty(e, AGENT_PARTIAL, { value: { turns: run.turns, usage: run.usage, compactions: run.compactions, spentUsd: run.spend.spentUsd }, configurable: true });
      }
      throw e;
    } else end = { stop: "aborted", text: "" };
  }
  const { history } = run.conversation;
  let text = end.text;
  if (end.stop === "max_turns" || end.stop === "aborted") {
    // What the model last said in this run, for the caller to show.
    for (let i = history.length - 1; i >= 0 && !text; i--) if (history[i]!.role === "assistant") text = textOf(history[i]);
  }
  return { history, text, turns: run.turns, usage: run.usage, compactions: run.compactions, stop: end.stop, model: run.caller.model() };
}

/** Builds the run's parts: the conversation, the model caller, the tools' context, the compaction gate. */
function startRun(start: readonly Message[], opts: AgentOptions): AgentRun {
  const { engine, signal } = opts;
  const emit = opts.onEvent ?? (() => {});
  const tools = opts.tools ?? (opts.toolset ? (toolDefinitions(opts.toolset) as ToolDefinition[]) : undefined);
  const compactions: CompactionRecord[] = [];
  const spend = createSpend(opts);
  const fixedTokens = fixedTokensOf(engine, opts.system, tools);
  // A summary is a model call too: it may not take the run past its budget either.
  const beforeSummaryCall = opts.maxBudgetUsd !== undefined ? () => spend.check(caller.model(), engine.meter.measure(conversation.history, fixedTokens)) : undefined;
  const shape = { system: opts.system, tools, fixedTokens, signal, ...(beforeSummaryCall ? { beforeSummaryCall } : {}) };
  const usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const note = (events: readonly CompactionEvent[], tokensAfter: number) => {
    compactions.push(...reportCompactions(events, tokensAfter, emit));
    accountSummaries({ spend, usage, emit }, events);
  };
  const conversation = createConversation(start, opts.transcript, emit);
  const caller = createModelCaller({
    client: opts.client,
    model: opts.model,
    fallbackModel: opts.fallbackModel,
    fallbackAfter: opts.fallbackAfter,
    system: opts.system,
    tools,
    maxOutputTokens: opts.maxOutputTokens,
    retry: opts.retry,
    signal,
    emit,
  });
  const contextUsage = () => ({ tokens: engine.meter.measure(conversation.history, fixedTokens), threshold: engine.threshold, contextWindow: engine.contextWindow });
  const ctx = runToolContext(opts, { run: runAgent, model: () => caller.model(), emit, onCompaction: (r) => compactions.push(r), contextUsage });
  return {
    opts,
    engine,
    transcript: opts.transcript,
    signal,
    emit,
    shape,
    note,
    conversation,
    caller,
    gate: createCompactionGate({ engine, conversation, shape, emit, note, opts }),
    runBatch: createToolBatchRunner({ toolset: opts.toolset, ctx, runTool: opts.runTool, signal, emit }),
    handleReply: createReplyHandler({ conversation, emit, maxContinuations: opts.maxContinuations ?? 3 }),
    maxTurns: opts.maxTurns ?? Infinity,
    usage,
    spend,
    compactions,
    turns: 0,
  };
}

/** Request after request until the run ends: the compaction gate, the call, the reply, its tools. */
async function turnLoop(run: AgentRun): Promise<RunEnd> {
  for (;;) {
    if (run.turns >= run.maxTurns) return { stop: "max_turns", text: "" };
    if (run.signal?.aborted) return { stop: "aborted", text: "" };
    const ready = await run.gate.beforeRequest();
    run.spend.check(run.caller.model(), ready.tokens);
    run.emit({ type: "request", model: run.caller.model(), tokens: ready.tokens, threshold: ready.threshold });
    const request = await sendRequest(run, ready.tokens);
    run.turns++;
    accountReply(run, request);
    const step = run.handleReply(request.reply);
    if (step.next === "stop" && step.stop === "end_turn" && run.gate.saving) {
      // The agent answered the save notice without a tool call: the summary runs now, and the task goes on.
      await run.gate.compactNow("summarize");
      run.conversation.appendNote(SAVED_GO_ON_TEXT);
      continue;
    }
    if (step.next === "stop") return { stop: step.stop, text: step.text };
    // The reply filled the context window: the history is summarised before the model goes on.
    if (step.next === "request" && step.compact) await run.gate.compactNow("summarize");
    if (step.next === "tools" && (await runToolTurn(run, step.uses, step.truncatedCalls)) === "aborted") return { stop: "aborted", text: "" };
  }
}
