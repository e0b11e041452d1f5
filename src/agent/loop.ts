// The agent loop: prepare → streamed call → tools → append, until the model stops
// calling tools. Every message is written to the transcript before it is sent
// (write-ahead), so a killed process loses nothing that reached the model.
import { toolUsesOf } from "../messages/blocks.ts";
import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from "../messages/types.ts";
import type { Engine } from "../engine.ts";
import type { CompactionEvent } from "../compaction/types.ts";
import { type ModelClient, ModelError, type ModelResponse, type StreamEvent, type ToolDefinition } from "../model/types.ts";
import { type RetryOptions, withRetry } from "../model/retry.ts";
import type { TranscriptWriter } from "../session/transcript.ts";
import type { Usage } from "../tokens/meter.ts";

export interface ToolOutcome {
  content: ToolResultBlock["content"];
  isError?: boolean;
}

export interface AgentOptions {
  engine: Engine;
  client: ModelClient;
  model: string;
  system?: string;
  tools?: ToolDefinition[];
  /** Runs one tool call. Throwing is reported to the model as an error result. */
  runTool?: (use: ToolUseBlock, signal?: AbortSignal) => Promise<ToolOutcome>;
  transcript?: TranscriptWriter;
  maxTurns?: number;
  maxOutputTokens: number;
  signal?: AbortSignal;
  onEvent?: (e: AgentEvent) => void;
  /** Retry options for transient provider errors (tests inject sleep). */
  retry?: RetryOptions;
}

export type AgentEvent =
  | { type: "stream"; event: StreamEvent }
  | { type: "compaction"; event: CompactionEvent }
  | { type: "response"; usage: Usage; stopReason: ModelResponse["stopReason"] }
  | { type: "tool"; use: ToolUseBlock }
  | { type: "retry"; error: ModelError; attempt: number; delayMs: number };

export interface AgentResult {
  history: Message[];
  /** Text of the final assistant message. */
  text: string;
  turns: number;
  usage: Required<Usage>;
  compactions: { kind: string; tokens_before: number; tokens_after: number }[];
}

function textOf(m: Message | undefined): string {
  if (!m || typeof m.content === "string") return typeof m?.content === "string" ? m.content : "";
  return m.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("");
}

/** Fixed tokens of every request: the system prompt and the tool definitions. */
export function fixedTokensOf(engine: Engine, system: string | undefined, tools: readonly ToolDefinition[] | undefined): number {
  return engine.counter.text(system ?? "") + engine.counter.text(JSON.stringify(tools ?? []));
}

export async function runAgent(start: readonly Message[], prompt: string | undefined, opts: AgentOptions): Promise<AgentResult> {
  const { engine, client, transcript } = opts;
  let history = start.slice();
  const usage: Required<Usage> = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const compactions: AgentResult["compactions"] = [];
  const emit = opts.onEvent ?? (() => {});
  const shape = { system: opts.system, tools: opts.tools, fixedTokens: fixedTokensOf(engine, opts.system, opts.tools), signal: opts.signal };
  const note = (events: CompactionEvent[]) => {
    for (const e of events) {
      emit({ type: "compaction", event: e });
      if ("tokensBefore" in e) compactions.push({ kind: e.kind, tokens_before: e.tokensBefore, tokens_after: e.tokensAfter });
      else if ("freedTokens" in e && e.freedTokens > 0) compactions.push({ kind: e.kind, tokens_before: -1, tokens_after: -1 });
    }
  };
  const append = (m: Message) => {
    transcript?.appendMessage(m);
    history.push(m);
  };

  if (prompt !== undefined) append({ role: "user", content: [{ type: "text", text: prompt }] });

  let turns = 0;
  const maxTurns = opts.maxTurns ?? Infinity;
  while (turns < maxTurns) {
    const ready = await engine.beforeRequest(history, shape);
    note(ready.events);
    history = ready.history;

    let reply: ModelResponse;
    let sent = history;
    const call = () =>
      withRetry(() => client.stream({ model: opts.model, system: opts.system, tools: opts.tools, messages: sent, maxTokens: opts.maxOutputTokens, signal: opts.signal }, (e) => emit({ type: "stream", event: e })), {
        ...opts.retry,
        signal: opts.signal,
        onRetry: ({ error, attempt, delayMs }) => emit({ type: "retry", error, attempt, delayMs }),
      });
    try {
      reply = await call();
    } catch (e) {
      if (!(e instanceof ModelError) || e.kind !== "prompt_too_long") throw e;
      // Reactive path: shrink harder, then retry once.
      const recovered = await engine.recover(history, e, shape);
      note(recovered.events);
      history = recovered.history;
      sent = history;
      reply = await call();
    }
    turns++;
    for (const k of Object.keys(usage) as (keyof Usage)[]) usage[k] += reply.usage[k] ?? 0;
    emit({ type: "response", usage: reply.usage, stopReason: reply.stopReason });
    engine.observe(sent, reply.message, reply.usage, shape);
    append(reply.message);

    const uses = toolUsesOf(reply.message);
    if (uses.length === 0) break;
    const results: ContentBlock[] = await Promise.all(
      uses.map(async (use): Promise<ContentBlock> => {
        emit({ type: "tool", use });
        try {
          const out = opts.runTool ? await opts.runTool(use, opts.signal) : { content: `no tool runner for ${use.name}`, isError: true };
          return { type: "tool_result", tool_use_id: use.id, content: out.content, ...(out.isError ? { is_error: true } : {}) };
        } catch (err) {
          return { type: "tool_result", tool_use_id: use.id, content: `Error: ${err instanceof Error ? err.message : String(err)}`, is_error: true };
        }
      }),
    );
    append({ role: "user", content: results });
  }
  return { history, text: textOf(history[history.length - 1]), turns, usage, compactions };
}
