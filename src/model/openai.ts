// ModelClient on the official `openai` package, for OpenAI and any OpenAI-compatible
// server (Ollama, llama.cpp, vLLM, LM Studio, OpenRouter, DeepSeek, …).
//
// One streamed chat.completions.create (stream: true, stream_options.include_usage). The
// history goes through toOpenAI (strict unless the server accepts our extensions); the reply
// comes back as one Anthropic-shape assistant message: reasoning_content → thinking, content
// → text, tool_calls → tool_use (arguments parsed; kept raw as {"_raw": text} when they are
// not a JSON object, as the converters do).
//
// Usage: prompt_tokens includes cached tokens on OpenAI, so input_tokens = prompt_tokens −
// cached_tokens and cache_read_input_tokens = cached_tokens. A server that reports no usage
// gets an o200k count of what was sent and received instead.
//
// SDK retries are off by default (maxRetries 0): retries are withRetry's (./retry.ts).
import OpenAI from "openai";
import { withErrorBodies } from "./error-fetch.ts";
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import type { ContentBlock } from "../messages/types.ts";
import { toOpenAI } from "../messages/openai.ts";
import { countTokens } from "../tokens/exact.ts";
import type { Usage } from "../tokens/meter.ts";
import { toModelError } from "./errors.ts";
import { parseToolInput } from "./tool-input.ts";
import { DEFAULT_IDLE_TIMEOUT_MS, IdleWatch } from "./idle.ts";
import { ModelError, type ModelClient, type ModelRequest, type ModelResponse, type StopReason, type StreamEvent } from "./types.ts";

/** How to reach an OpenAI(-compatible) server: what both OpenAI clients take. */
export interface OpenAIConnectionOptions {
  /** Defaults to OPENAI_API_KEY; local servers that need none get a placeholder. */
  apiKey?: string;
  /** Defaults to OPENAI_BASE_URL, else https://api.openai.com/v1. */
  baseURL?: string;
  defaultHeaders?: Record<string, string>;
  /** SDK-level retries; 0 unless set (retries are withRetry's). */
  maxRetries?: number;
  /** No byte from the server for this long (ms) → abort and retry (default 120 s; 0 disables). */
  idleTimeoutMs?: number;
  /** Per-request timeout in ms. */
  timeoutMs?: number;
}

export interface OpenAIClientOptions extends OpenAIConnectionOptions {
  /**
   * The server accepts non-standard message fields (`reasoning_content`, lethe's `lethe`
   * extension), so the conversion can be lossless. Default false: strict OpenAI messages.
   */
  extensions?: boolean;
  /** Ask for a final usage chunk (stream_options.include_usage). Default true. */
  includeUsage?: boolean;
  /**
   * Which field carries maxTokens. Default: max_completion_tokens for OpenAI's reasoning
   * models (o1, o3, o4, gpt-5…), which refuse max_tokens; max_tokens otherwise (local servers).
   */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
  /**
   * Which assistant messages carry their reasoning back as `reasoning_content` (strict mode):
   * "auto" (default) is "tool-turns" for DeepSeek (model name or api.deepseek.com), whose thinking
   * mode answers 400 without it, and "never" elsewhere. A 400 that names reasoning_content
   * switches to the other shape once (and the client keeps it); see reasoningShapeError.
   */
  reasoningContent?: "auto" | "never" | "tool-turns" | "always";
  /** The SDK's log level; "off" by default because every error reaches the caller as a ModelError. */
  logLevel?: "off" | "error" | "warn" | "info" | "debug";
}

export interface OpenAIModelClient extends ModelClient {
  readonly provider: "openai";
  /** The underlying SDK client. */
  readonly sdk: OpenAI;
}

export function mapOpenAIFinishReason(reason: string | null | undefined, hasToolCalls: boolean): StopReason {
  if (hasToolCalls && (reason === "stop" || reason === "tool_calls" || reason === "function_call" || !reason)) return "tool_use";
  switch (reason) {
    case "stop":
      return "end_turn";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    default:
      return "other";
  }
}

/** OpenAI usage → lethe Usage (cached tokens moved out of input_tokens). */
export function mapOpenAIUsage(u: CompletionUsage): Usage {
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  const usage: Usage = {
    input_tokens: Math.max(0, (u.prompt_tokens ?? 0) - cached),
    output_tokens: u.completion_tokens ?? 0,
  };
  if (cached > 0) usage.cache_read_input_tokens = cached;
  return usage;
}

const REASONING_MODEL = /^(?:o\d|gpt-5)/i;

type ReasoningShape = "none" | "tool-turns" | "all";

/** The reasoning shape a server wants, before it has said otherwise. */
export function defaultReasoningShape(model: string, baseURL: string | undefined, setting: OpenAIClientOptions["reasoningContent"] = "auto"): ReasoningShape {
  if (setting === "never") return "none";
  if (setting === "tool-turns") return "tool-turns";
  if (setting === "always") return "all";
  return /deepseek/i.test(model) || /(^|[./])deepseek\.com\b/i.test(baseURL ?? "") ? "tool-turns" : "none";
}

/**
 * A 400 about reasoning_content, and the shape that would answer it: "tool-turns" when the server
 * wants it back (DeepSeek: "Missing `reasoning_content` field…", "The `reasoning_content` in the
 * thinking mode must be passed back"), "none" when it refuses it (deepseek-reasoner's old rule,
 * servers that validate fields). undefined: not about reasoning_content.
 */
export function reasoningShapeError(message: string): ReasoningShape | undefined {
  if (!/reasoning_content/i.test(message)) return undefined;
  if (/missing|must be passed|required|pass(?:ed)? back/i.test(message)) return "tool-turns";
  if (/extra|unknown|not (?:be )?(?:permitted|allowed|supported|expected)|unrecognized|unexpected|should not|remove/i.test(message)) return "none";
  return undefined;
}

interface ToolCallAcc {
  id?: string;
  name: string;
  args: string;
  announced: boolean;
}

/** Assembles one reply from chat.completion.chunk objects. */
export class OpenAIAssembler {
  text = "";
  reasoning = "";
  refusal = "";
  readonly calls = new Map<number, ToolCallAcc>();
  finishReason: string | null = null;
  usage: CompletionUsage | undefined;
  model = "";
  chunks = 0;

  constructor(private readonly onEvent?: (e: StreamEvent) => void) {}

  /**
   * Servers that omit `index` on tool-call chunks (some OpenAI-compatible ones): a chunk with a new
   * id starts a call; one with a known id, or with no id, continues that call / the last one.
   */
  private indexWithout(id: string | undefined): number {
    if (id) {
      for (const [i, acc] of this.calls) if (acc.id === id) return i;
      return this.calls.size === 0 ? 0 : Math.max(...this.calls.keys()) + 1;
    }
    return this.calls.size === 0 ? 0 : Math.max(...this.calls.keys());
  }

  add(chunk: ChatCompletionChunk): void {
    this.chunks++;
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = (choice.delta ?? {}) as ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null; reasoning?: string | null };
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") {
      this.reasoning += reasoning;
      this.onEvent?.({ type: "thinking", text: reasoning });
    }
    if (typeof delta.content === "string" && delta.content !== "") {
      this.text += delta.content;
      this.onEvent?.({ type: "text", text: delta.content });
    }
    if (typeof delta.refusal === "string") this.refusal += delta.refusal;
    for (const tc of delta.tool_calls ?? []) {
      const index = typeof tc.index === "number" ? tc.index : this.indexWithout(tc.id);
      let acc = this.calls.get(index);
      if (!acc) this.calls.set(index, (acc = { name: "", args: "", announced: false }));
      if (tc.id) acc.id = tc.id;
      if (tc.function?.name && !acc.name) acc.name = tc.function.name;
      if (tc.function?.arguments) acc.args += tc.function.arguments;
      if (!acc.announced && acc.name) {
        acc.announced = true;
        this.onEvent?.({ type: "tool_use", id: acc.id ?? `call_${index}`, name: acc.name });
      }
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  /** The complete reply; throws a network ModelError when the stream ended early. */
  finish(requestedModel: string, estimate: () => Usage): ModelResponse {
    if (this.finishReason === null && this.chunks === 0) {
      // A 200 that is not an event stream (a proxy's page, a non-streaming endpoint), not a cut connection.
      throw new ModelError("server", "openai: the server answered 200 but sent no stream chunks (not an event stream: check the base URL, or a proxy in between)");
    }
    if (this.finishReason === null) {
      throw new ModelError("network", `openai: stream ended without a finish_reason after ${this.chunks} chunks (connection cut mid-stream)`);
    }
    const content: ContentBlock[] = [];
    if (this.reasoning) content.push({ type: "thinking", thinking: this.reasoning });
    if (this.text) content.push({ type: "text", text: this.text });
    else if (this.refusal) content.push({ type: "text", text: this.refusal });
    const calls = [...this.calls.entries()].sort(([a], [b]) => a - b);
    for (const [index, c] of calls) {
      content.push({ type: "tool_use", id: c.id ?? `call_${index}_${Date.now().toString(36)}`, name: c.name, input: parseToolInput(c.args) });
    }
    return {
      message: { role: "assistant", content },
      usage: this.usage ? mapOpenAIUsage(this.usage) : estimate(),
      stopReason: mapOpenAIFinishReason(this.finishReason, calls.length > 0),
      model: this.model || requestedModel,
    };
  }
}

export function toOpenAITools(tools: ModelRequest["tools"]): ChatCompletionTool[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.input_schema } }));
}

export function createOpenAIClient(opts: OpenAIClientOptions = {}): OpenAIModelClient {
  const sdk = new OpenAI({
    // vLLM, TensorRT-LLM and FastChat put their error at the top level ({"object":"error",
    // "message":…}); the SDK reads only `error` and would report "status code (no body)".
    fetch: withErrorBodies(),
    apiKey: opts.apiKey ?? process.env.OPENAI_API_KEY ?? "no-key",
    baseURL: opts.baseURL ?? process.env.OPENAI_BASE_URL ?? undefined,
    defaultHeaders: opts.defaultHeaders,
    maxRetries: opts.maxRetries ?? 0,
    ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
    logLevel: opts.logLevel ?? "off",
  });
  const strict = opts.extensions !== true;
  // Learned from the server's answers; undefined until the first request picks the default.
  let shape: ReasoningShape | undefined;
  const includeUsage = opts.includeUsage ?? true;

  return {
    provider: "openai",
    sdk,

    async stream(request, onEvent) {
      const signal = request.signal;
      shape ??= defaultReasoningShape(request.model, opts.baseURL ?? process.env.OPENAI_BASE_URL, opts.reasoningContent);
      const convert = (reasoning: ReasoningShape): ChatCompletionMessageParam[] => {
        try {
          return toOpenAI(request.messages, {
            ...(request.system !== undefined && request.system !== "" ? { system: request.system } : {}),
            strict,
            reasoning,
          }) as ChatCompletionMessageParam[];
        } catch (e) {
          throw new ModelError("invalid_request", `openai: cannot convert the history: ${(e as Error).message}`, { cause: e });
        }
      };
      const tried: ReasoningShape[] = [];
      for (;;) {
        const used: ReasoningShape = shape;
        tried.push(used);
        try {
          return await attempt(convert(used));
        } catch (e) {
          const want = e instanceof ModelError && e.kind === "invalid_request" && strict ? reasoningShapeError(e.message) : undefined;
          if (want === undefined || want === used) throw e;
          if (tried.includes(want)) {
            throw new ModelError("invalid_request", `${(e as Error).message} — the server refused the history both with and without reasoning_content; set "reasoningContent" ("never", "tool-turns" or "always") in settings for this server`, { cause: e });
          }
          // The server told us which shape it wants: use it from now on, and resend this request.
          shape = want;
        }
      }

      async function attempt(messages: ChatCompletionMessageParam[]): Promise<ModelResponse> {
      const idle = new IdleWatch(signal, opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
      try {
        if (signal?.aborted) throw new ModelError("aborted", "openai: request aborted");
        const tools = toOpenAITools(request.tools);
        const field = opts.maxTokensField ?? (REASONING_MODEL.test(request.model) ? "max_completion_tokens" : "max_tokens");
        const params: ChatCompletionCreateParamsStreaming = {
          model: request.model,
          messages,
          stream: true,
          [field]: request.maxTokens,
          ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
          ...(tools ? { tools } : {}),
          ...(tools && request.toolChoice === "none" ? { tool_choice: "none" as const } : {}),
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        };
        const stream = await sdk.chat.completions.create(params, { signal: idle.signal });
        idle.kick();
        const acc = new OpenAIAssembler(onEvent);
        for await (const chunk of stream) {
          idle.kick();
          acc.add(chunk);
        }
        if (signal?.aborted) throw new ModelError("aborted", "openai: request aborted");
        if (idle.fired) throw new ModelError("network", idle.message("openai"));
        return acc.finish(request.model, () => ({
          input_tokens: countTokens(JSON.stringify({ messages, tools })),
          output_tokens: countTokens(acc.reasoning + acc.text + [...acc.calls.values()].map((c) => c.name + c.args).join("")),
        }));
      } catch (e) {
        if (idle.fired && !signal?.aborted) throw new ModelError("network", idle.message("openai"), { cause: e });
        throw toModelError(e, { signal, provider: "openai" });
      } finally {
        idle.done();
      }
      }
    },
  };
}
