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
// Layout: ./types.ts (options, events, result, compaction records), ./model-call.ts (one call
// with retries and the fallback model), ./tool-batch.ts (running one message's tool calls),
// ./subagent.ts (task); this file the turn loop itself.
import { REQUEST_EVENT, RETRACTED_EVENT } from "../session/transcript.ts";
import { toolUsesOf } from "../messages/blocks.ts";
import type { ContentBlock, Message, ToolUseBlock } from "../messages/types.ts";
import { type Engine, OverWindowError } from "../engine.ts";
import type { CompactionEvent } from "../compaction/types.ts";
import { ModelError, type ModelResponse, type ToolDefinition } from "../model/types.ts";
import { type Usage, usageInput } from "../tokens/meter.ts";
import type { ToolContext } from "../tools/types.ts";
import { toolDefinitions } from "../tools/index.ts";
import { createSubagentRunner } from "./subagent.ts";
import { createModelCaller } from "./model-call.ts";
import { createToolBatchRunner } from "./tool-batch.ts";
import { type AgentOptions, type AgentResult, type AgentStop, type CompactionRecord, reportCompactions } from "./types.ts";

export type { AgentEvent, AgentOptions, AgentResult, AgentStop, CompactionRecord, ToolOutcome } from "./types.ts";
export { reportCompactions } from "./types.ts";
export { compactionRecords } from "../compaction/records.ts";
export { INTERRUPTED_TEXT } from "./tool-batch.ts";

function textOf(m: Message | undefined): string {
  if (!m || typeof m.content === "string") return typeof m?.content === "string" ? m.content : "";
  return m.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("");
}

/** Fixed tokens of every request: the system prompt and the tool definitions. */
export function fixedTokensOf(engine: Engine, system: string | undefined, tools: readonly ToolDefinition[] | undefined): number {
  return engine.counter.text(system ?? "") + engine.counter.text(JSON.stringify(tools ?? []));
}

export const CONTINUE_TEXT =
  "[lethe] Your previous reply was cut off by the output token limit. Continue exactly where you stopped, without repeating anything you already wrote.";
export const TRUNCATED_CALL_TEXT = "[lethe] This tool call was cut off by the output token limit before its input was complete, so it was not run. Issue it again (smaller, if it was large).";

const AGENT_HISTORY = Symbol.for("lethe.agentHistory");

/** The history a failed runAgent had reached (attached to the error it threw), if any. */
export function historyAtFailure(e: unknown): Message[] | undefined {
  return e !== null && typeof e === "object" ? ((e as Record<symbol, unknown>)[AGENT_HISTORY] as Message[] | undefined) : undefined;
}

const isAborted = (e: unknown) => e instanceof ModelError && e.kind === "aborted";

/** A tool_use whose input did not parse (a call cut off by max_tokens) carries {_raw}. */
function truncatedInput(use: ToolUseBlock): boolean {
  const i = use.input as Record<string, unknown> | null;
  return i !== null && typeof i === "object" && "_raw" in i && Object.keys(i).length === 1;
}

function nonEmpty(m: Message): boolean {
  if (typeof m.content === "string") return m.content.trim() !== "";
  return m.content.some((b) => b.type !== "text" || (b as { text: string }).text.trim() !== "");
}

/** Runs lethe's agent loop from `start` (plus `prompt` as a new user message) until the model stops calling tools: compaction before every request, the reactive path, tools, retries, the transcript. */
export async function runAgent(start: readonly Message[], prompt: string | undefined, opts: AgentOptions): Promise<AgentResult> {
  const { engine, client, transcript } = opts;
  let history = start.slice();
  const usage: Required<Usage> = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const compactions: CompactionRecord[] = [];
  const emit = opts.onEvent ?? (() => {});
  const signal = opts.signal;
  const toolset = opts.toolset;
  const tools = opts.tools ?? (toolset ? (toolDefinitions(toolset) as ToolDefinition[]) : undefined);
  const shape = { system: opts.system, tools, fixedTokens: fixedTokensOf(engine, opts.system, tools), signal };
  const note = (events: readonly CompactionEvent[], tokensAfter: number) => void compactions.push(...reportCompactions(events, tokensAfter, emit));
  /** Transcript uuids of the messages this run appended (a refused turn is retracted by them). */
  const appended: string[] = [];
  const append = (m: Message) => {
    const entry = transcript?.appendMessage(m);
    if (entry) appended.push(entry.uuid);
    history.push(m);
    emit({ type: "message", message: m });
  };

  const caller = createModelCaller({
    client,
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

  // The tool context for this run: the caller's session state, with this run's signal.
  const ctx: ToolContext | undefined = toolset ? (opts.toolContext ?? { workspace: process.cwd(), readState: new Map(), todos: [] }) : opts.toolContext;
  if (ctx) {
    ctx.signal = signal;
    if (opts.subagents) {
      ctx.runSubagent = createSubagentRunner(opts.subagents, {
        run: runAgent,
        client,
        model: () => caller.model(),
        maxOutputTokens: opts.maxOutputTokens,
        retry: opts.retry,
        fallbackModel: opts.fallbackModel,
        askPermission: ctx.askPermission,
        ...(ctx.readDenied ? { readDenied: ctx.readDenied } : {}),
        ...(ctx.passEnv ? { passEnv: ctx.passEnv } : {}),
        workspace: ctx.workspace,
        parentTranscript: transcript,
        onEvent: emit,
        onCompaction: (r) => compactions.push(r),
      });
    }
  }

  let askedAtCrossing = false;
  /** beforeRequest, with the "ask" mode's question when the context is over the threshold. */
  const prepareRequest = async (): Promise<{ history: Message[]; tokens: number; threshold: number }> => {
    let ready;
    // Over the threshold already (before the cheap layers): a summary is likely; say so, it takes a while.
    if (opts.onEvent && engine.config.summary.auto === "on" && engine.meter.measure(history, shape.fixedTokens) > engine.threshold) {
      emit({ type: "compacting", kind: "summarize" });
    }
    try {
      ready = await engine.beforeRequest(history, shape);
    } catch (e) {
      if (!(e instanceof OverWindowError) || !opts.onCompactSuggested) throw e;
      // Ask mode, and the context no longer fits at all: compacting is the only way on.
      if (!(await opts.onCompactSuggested({ tokens: e.tokens, threshold: engine.threshold, full: true }))) throw e;
      return compactNow("summarize");
    }
    note(ready.events, ready.tokens);
    history = ready.history;
    const suggested = ready.events.some((e) => e.kind === "compact_suggested");
    if (!suggested) askedAtCrossing = false;
    if (suggested && opts.onCompactSuggested && !askedAtCrossing) {
      askedAtCrossing = true;
      if (await opts.onCompactSuggested({ tokens: ready.tokens, threshold: ready.threshold, full: false })) return compactNow("summarize");
    }
    return ready;
  };

  const compactNow = async (kind: "manual" | "summarize", focus?: string) => {
    emit({ type: "compacting", kind });
    // engine.compact's kind names who asked; an auto-compact the user approved is still "summarize".
    const r = await engine.compact(history, { ...shape, kind, ...(focus ? { focus } : {}) });
    note(r.events, r.tokens);
    history = r.history;
    askedAtCrossing = false;
    return r;
  };

  const runBatch = createToolBatchRunner({ toolset, ctx, runTool: opts.runTool, signal, emit });

  // Where this run's own messages start: a refusal takes everything from here out of the context.
  const runStart = history.length;
  if (prompt !== undefined) append({ role: "user", content: [{ type: "text", text: prompt }] });

  let turns = 0;
  let stop: AgentStop = "end_turn";
  let continuations = 0;
  let continued = "";
  let finalText = "";
  const maxTurns = opts.maxTurns ?? Infinity;
  const maxContinuations = opts.maxContinuations ?? 3;

  try {
    for (;;) {
      if (turns >= maxTurns) {
        stop = "max_turns";
        break;
      }
      if (signal?.aborted) {
        stop = "aborted";
        break;
      }
      const ready = await prepareRequest();
      emit({ type: "request", model: caller.model(), tokens: ready.tokens, threshold: ready.threshold });

      let reply: ModelResponse;
      let sent = history;
      let estimated = ready.tokens;
      let began = Date.now();
      try {
        reply = await caller.call(sent);
      } catch (e) {
        if (!(e instanceof ModelError) || e.kind !== "prompt_too_long") throw e;
        // Reactive path: shrink harder, then retry once.
        emit({ type: "compacting", kind: "reactive" });
        const recovered = await engine.recover(history, e, shape);
        note(recovered.events, recovered.tokens);
        history = recovered.history;
        sent = history;
        estimated = recovered.tokens;
        began = Date.now();
        reply = await caller.call(sent);
      }
      turns++;
      if (transcript) {
        // One line per model call: what the viewer and `lethe sessions` draw from.
        const u = reply.usage;
        const cost = opts.requestCost?.(caller.model(), u);
        transcript.append({
          type: "event",
          ts: new Date().toISOString(),
          name: REQUEST_EVENT,
          model: caller.model(),
          input_tokens: usageInput(u),
          input_tokens_estimated: estimated,
          cache_read_tokens: u.cache_read_input_tokens ?? 0,
          cache_write_tokens: u.cache_creation_input_tokens ?? 0,
          output_tokens: u.output_tokens ?? 0,
          ...(cost !== undefined ? { cost_usd: cost } : {}),
          latency_ms: Date.now() - began,
          stop_reason: reply.stopReason,
          // The lines a chart draws against.
          threshold: engine.threshold,
          context_window: engine.contextWindow,
        });
      }
      for (const k of Object.keys(usage) as (keyof Usage)[]) usage[k] += reply.usage[k] ?? 0;
      emit({ type: "response", usage: reply.usage, stopReason: reply.stopReason, model: caller.model() });
      engine.observe(sent, reply.message, reply.usage, shape);

      if (reply.stopReason === "refusal") {
        // The provider declined the request. Keeping the refused turn would make every later
        // request carry it (and likely be refused again): take this run's messages out of the
        // live context; the transcript keeps them, marked retracted, so a resume agrees.
        finalText = textOf(reply.message);
        transcript?.append({ type: "event", ts: new Date().toISOString(), name: RETRACTED_EVENT, uuids: appended.slice(), note: "the model declined this request (stop_reason refusal)" });
        history = history.slice(0, runStart);
        stop = "refusal";
        break;
      }
      if (reply.stopReason === "pause_turn") {
        // A long server-side turn paused (Anthropic server tools): send it back as it is to resume.
        if (nonEmpty(reply.message)) append(reply.message);
        emit({ type: "continuation", count: ++continuations });
        if (continuations > maxContinuations * 3) {
          stop = "max_tokens";
          break;
        }
        continue;
      }
      let message = reply.message;
      let truncatedCalls: ToolUseBlock[] = [];
      if (reply.stopReason === "max_tokens") {
        // A call whose input was cut off cannot run; drop it from the reply (it was never complete).
        truncatedCalls = toolUsesOf(message).filter(truncatedInput);
        if (truncatedCalls.length > 0 && typeof message.content !== "string") {
          message = { ...message, content: message.content.filter((b) => !(b.type === "tool_use" && truncatedCalls.includes(b as ToolUseBlock))) };
        }
        if (toolUsesOf(message).length === 0) {
          if (nonEmpty(message)) {
            append(message);
            continued += textOf(message);
          }
          if (continuations >= maxContinuations || !nonEmpty(message)) {
            stop = "max_tokens";
            finalText = continued;
            break;
          }
          continuations++;
          emit({ type: "continuation", count: continuations });
          const notice: ContentBlock[] = [{ type: "text", text: truncatedCalls.length > 0 ? `${CONTINUE_TEXT} ${TRUNCATED_CALL_TEXT}` : CONTINUE_TEXT }];
          append({ role: "user", content: notice });
          continue;
        }
      }
      if (!nonEmpty(message)) message = { role: "assistant", content: [{ type: "text", text: "(no reply)" }] };
      append(message);

      const uses = toolUsesOf(message);
      if (uses.length === 0) {
        finalText = continued + textOf(message);
        break;
      }
      continuations = 0;
      continued = "";
      const results = await runBatch(uses);
      const content: ContentBlock[] = results.map((r) => r.block);
      if (truncatedCalls.length > 0) content.push({ type: "text", text: TRUNCATED_CALL_TEXT });
      for (const text of opts.takeNotes?.() ?? []) content.push({ type: "text", text });
      append({ role: "user", content });
      if (signal?.aborted) {
        stop = "aborted";
        break;
      }
      // The compact tool: compact once the whole batch's results are in.
      const asks = results.map((r) => r.outcome?.compact).filter((c): c is { focus?: string } => c !== undefined);
      if (asks.length > 0) {
        const focus = asks.map((c) => c.focus?.trim()).filter((f): f is string => !!f).join("\n");
        await compactNow("manual", focus || undefined);
      }
    }
  } catch (e) {
    if (!isAborted(e) && !signal?.aborted) {
      // The caller may go on with the session: give it the history as it stood (it is valid at
      // every point where something can throw, and everything in it is in the transcript).
      if (e !== null && typeof e === "object") Object.defineProperty(e, AGENT_HISTORY, { value: history, configurable: true });
      throw e;
    }
    stop = "aborted";
  } finally {
    if (ctx) {
      ctx.signal = undefined;
      if (opts.subagents) ctx.runSubagent = undefined;
    }
  }
  if (stop === "max_turns" || stop === "aborted") {
    // What the model last said in this run, for the caller to show.
    for (let i = history.length - 1; i >= 0 && !finalText; i--) if (history[i]!.role === "assistant") finalText = textOf(history[i]);
  }
  return { history, text: finalText, turns, usage, compactions, stop, model: caller.model() };
}
