// ModelClient on OpenAI's Responses API (`client.responses.create`), through the official `openai`
// package.
//
// Stateless: every request carries the whole (compacted) history as input items with store:
// false, never a previous_response_id (the server would hold history lethe cannot compact).
// Reasoning items come back with their encrypted_content (include: ["reasoning.encrypted_content"])
// and travel in a thinking block, verbatim, to be sent back byte-identical (../messages/responses.ts).
// The reply is assembled from the raw stream events; its items are the final response's output.
//
// Usage: input_tokens includes cached tokens, as on Chat Completions, so they move to
// cache_read_input_tokens. SDK retries are off by default (retries are withRetry's).
import OpenAI from "openai";
import type { ResponseCreateParamsStreaming, ResponseInputItem, ResponseStreamEvent, FunctionTool } from "openai/resources/responses/responses";
import type { ContentBlock } from "../messages/types.ts";
import { fromResponses, toResponses } from "../messages/responses.ts";
import { countTokens } from "../tokens/exact.ts";
import type { Usage } from "../tokens/meter.ts";
import { toModelError } from "./errors.ts";
import { withErrorBodies } from "./error-fetch.ts";
import { DEFAULT_IDLE_TIMEOUT_MS, IdleWatch } from "./idle.ts";
import { isEncryptedUnsupported, responsesStopReason, responsesUsage, streamFailure, wantsEncryptedReasoning } from "./responses-wire.ts";
import type { OpenAIConnectionOptions } from "./openai.ts";
import { ModelError, type ModelClient, type ModelRequest, type ModelResponse, type StreamEvent } from "./types.ts";

/** Options of createOpenAIResponsesClient. */
export interface OpenAIResponsesClientOptions extends OpenAIConnectionOptions {
  /**
   * Ask for reasoning.encrypted_content. Default: every model but the known non-reasoning ones
   * (gpt-4…, gpt-3.5), which answer 400 to it; that 400 turns it off for the client too.
   */
  encryptedReasoning?: boolean;
  /** The request's `reasoning` (effort, summary). Not sent unless set: reasoning summaries need a verified organisation. */
  reasoning?: { effort?: "minimal" | "low" | "medium" | "high"; summary?: "auto" | "concise" | "detailed" };
  /** The SDK's log level; "off" by default because every error reaches the caller as a ModelError. */
  logLevel?: "off" | "error" | "warn" | "info" | "debug";
}

/** The Responses client: provider "openai" (its errors, usage and windows are OpenAI's). */
export interface OpenAIResponsesModelClient extends ModelClient {
  readonly provider: "openai";
  /** The underlying SDK client. */
  readonly sdk: OpenAI;
}

type Obj = Record<string, unknown>;

/** lethe's tool definitions as Responses function tools (not strict: lethe's schemas are not written for strict mode). */
export function toResponsesTools(tools: ModelRequest["tools"]): FunctionTool[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((t) => ({ type: "function", name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.input_schema, strict: false }));
}

/** Assembles one reply from the Responses stream's events; a failure event throws its ModelError. */
export class ResponsesAssembler {
  /** Events seen. */
  events = 0;
  model = "";
  /** What streamed, for the usage estimate when the server reports none. */
  streamed = "";
  private final: Obj | undefined;
  private readonly done = new Map<number, unknown>();

  constructor(private readonly onEvent?: (e: StreamEvent) => void) {}

  add(event: ResponseStreamEvent): void {
    this.events++;
    const failure = streamFailure(event);
    if (failure) throw failure;
    const e = event as unknown as Obj;
    const delta = typeof e.delta === "string" ? e.delta : "";
    switch (event.type) {
      case "response.created":
      case "response.in_progress":
        if (typeof event.response?.model === "string") this.model = event.response.model;
        break;
      case "response.output_item.added":
        if (event.item.type === "function_call") this.onEvent?.({ type: "tool_use", id: event.item.call_id, name: event.item.name });
        break;
      case "response.output_text.delta":
      case "response.refusal.delta":
        this.streamed += delta;
        if (delta) this.onEvent?.({ type: "text", text: delta });
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        this.streamed += delta;
        if (delta) this.onEvent?.({ type: "thinking", text: delta });
        break;
      case "response.function_call_arguments.delta":
        this.streamed += delta;
        break;
      case "response.output_item.done":
        this.done.set(event.output_index, event.item);
        break;
      case "response.completed":
      case "response.incomplete":
        this.final = event.response as unknown as Obj;
        break;
    }
  }

  /** The complete reply; a network ModelError when the stream ended before the response did. */
  finish(requestedModel: string, estimate: (streamed: string) => Usage): ModelResponse {
    if (!this.final && this.events === 0) {
      throw new ModelError("server", "openai: the server answered 200 but sent no stream events (not an event stream: check the base URL, or a proxy in between)");
    }
    if (!this.final) throw new ModelError("network", `openai: stream ended without response.completed after ${this.events} events (connection cut mid-stream)`);
    const listed = Array.isArray(this.final.output) ? (this.final.output as unknown[]) : [];
    // The final response lists every item; the items streamed one by one stand in if it does not.
    const output = listed.length > 0 ? listed : [...this.done.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
    let content: ContentBlock[];
    try {
      content = fromResponses(output).flatMap((m) => (typeof m.content === "string" ? [{ type: "text" as const, text: m.content }] : m.content));
    } catch (e) {
      throw new ModelError("server", `openai: the response's output cannot be read: ${(e as Error).message}`, { cause: e });
    }
    return {
      message: { role: "assistant", content },
      usage: responsesUsage(this.final.usage) ?? estimate(this.streamed),
      stopReason: responsesStopReason(this.final),
      model: (typeof this.final.model === "string" && this.final.model) || this.model || requestedModel,
    };
  }
}

/** A ModelClient on `responses.create`: stateless (store: false), reasoning carried back verbatim. */
export function createOpenAIResponsesClient(opts: OpenAIResponsesClientOptions = {}): OpenAIResponsesModelClient {
  const sdk = new OpenAI({
    fetch: withErrorBodies(),
    apiKey: opts.apiKey ?? process.env.OPENAI_API_KEY ?? "no-key",
    baseURL: opts.baseURL ?? process.env.OPENAI_BASE_URL ?? undefined,
    defaultHeaders: opts.defaultHeaders,
    maxRetries: opts.maxRetries ?? 0,
    ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
    logLevel: opts.logLevel ?? "off",
  });
  // Learned: the server said the model has no encrypted reasoning.
  let encryptedRefused = false;

  async function attempt(request: ModelRequest, include: boolean, onEvent?: (e: StreamEvent) => void): Promise<ModelResponse> {
    const signal = request.signal;
    const idle = new IdleWatch(signal, opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
    try {
      if (signal?.aborted) throw new ModelError("aborted", "openai: request aborted");
      let input: ResponseInputItem[];
      try {
        input = toResponses(request.messages);
      } catch (e) {
        throw new ModelError("invalid_request", `openai: cannot convert the history: ${(e as Error).message}`, { cause: e });
      }
      const tools = toResponsesTools(request.tools);
      const params: ResponseCreateParamsStreaming = {
        model: request.model,
        input,
        stream: true,
        store: false,
        max_output_tokens: request.maxTokens,
        ...(request.system ? { instructions: request.system } : {}),
        ...(include ? { include: ["reasoning.encrypted_content" as const] } : {}),
        ...(tools ? { tools } : {}),
        ...(tools && request.toolChoice === "none" ? { tool_choice: "none" as const } : {}),
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(opts.reasoning ? { reasoning: opts.reasoning } : {}),
      };
      const stream = await sdk.responses.create(params, { signal: idle.signal });
      idle.kick();
      const acc = new ResponsesAssembler(onEvent);
      for await (const event of stream) {
        idle.kick();
        acc.add(event);
      }
      if (signal?.aborted) throw new ModelError("aborted", "openai: request aborted");
      if (idle.fired) throw new ModelError("network", idle.message("openai"));
      return acc.finish(request.model, (streamed) => ({ input_tokens: countTokens(JSON.stringify({ instructions: request.system, input, tools })), output_tokens: countTokens(streamed) }));
    } catch (e) {
      if (idle.fired && !signal?.aborted) throw new ModelError("network", idle.message("openai"), { cause: e });
      throw toModelError(e, { signal, provider: "openai" });
    } finally {
      idle.done();
    }
  }

  return {
    provider: "openai",
    sdk,
    async stream(request, onEvent) {
      const include = !encryptedRefused && (opts.encryptedReasoning ?? wantsEncryptedReasoning(request.model));
      try {
        return await attempt(request, include, onEvent);
      } catch (e) {
        if (!include || !(e instanceof ModelError) || e.kind !== "invalid_request" || !isEncryptedUnsupported(e.message)) throw e;
        // A model without reasoning: ask again without encrypted content, and from now on.
        encryptedRefused = true;
        return attempt(request, false, onEvent);
      }
    },
  };
}
