// ModelClient on the official @anthropic-ai/sdk.
//
// One streamed POST /v1/messages (messages.create with stream: true). We assemble the reply
// from the raw events ourselves rather than through MessageStream, so that:
// - a stream that ends without message_stop (a cut the SDK did not notice) is an error,
//   never a half reply;
// - tool input that is not valid JSON is kept raw ({"_raw": text}, as the OpenAI converters
//   do), where MessageStream's lenient parser would fail the whole stream or invent a value.
//
// Prompt caching: a cache_control breakpoint on the system prompt (it covers the tools,
// which come first) and on the last block of the last message, so the next request reads
// the whole previous prefix. Breakpoints already in the history are dropped (the API
// allows 4 per request).
//
// SDK retries are off by default (maxRetries 0): retries are withRetry's (./retry.ts).
import Anthropic from "@anthropic-ai/sdk";
import type {
  MessageCreateParamsStreaming,
  MessageParam,
  RawMessageStreamEvent,
  TextBlockParam,
  ThinkingConfigParam,
  Tool,
} from "@anthropic-ai/sdk/resources/messages";
import type { ContentBlock, Message } from "../messages/types.ts";
import type { Usage } from "../tokens/meter.ts";
import { toModelError } from "./errors.ts";
import { parseToolInput } from "./tool-input.ts";
import { DEFAULT_IDLE_TIMEOUT_MS, IdleWatch } from "./idle.ts";
import {
  ModelError,
  type ModelClient,
  type ModelRequest,
  type ModelResponse,
  type StopReason,
  type StreamEvent,
} from "./types.ts";

export interface AnthropicClientOptions {
  /** Defaults to ANTHROPIC_API_KEY. */
  apiKey?: string;
  /** A bearer token instead of a key; defaults to ANTHROPIC_AUTH_TOKEN. */
  authToken?: string;
  /** Defaults to ANTHROPIC_BASE_URL, else the SDK's default. */
  baseURL?: string;
  defaultHeaders?: Record<string, string>;
  /** SDK-level retries; 0 unless set (retries are withRetry's). */
  maxRetries?: number;
  /** No byte from the server for this long (ms) → abort and retry (default 120 s; 0 disables). */
  idleTimeoutMs?: number;
  /** Per-request timeout in ms (SDK default: 10 minutes). */
  timeoutMs?: number;
  /** Sent with every request, e.g. {type: "adaptive"} or {type: "enabled", budget_tokens}. */
  thinking?: ThinkingConfigParam;
  /** Prompt-cache breakpoints (default true). */
  promptCache?: boolean;
  /** The SDK's log level; "off" by default because every error reaches the caller as a ModelError. */
  logLevel?: "off" | "error" | "warn" | "info" | "debug";
  /**
   * The API's own context management, sent with every request (beta): `compact_20260112`
   * (server-side compaction), `clear_tool_uses_20250919`, `clear_thinking_20251015`. lethe carries
   * the compaction blocks it returns verbatim and counts what the server keeps.
   */
  contextManagement?: { edits: Record<string, unknown>[] };
  /** Extra `anthropic-beta` flags (the ones contextManagement needs are added for you). */
  betas?: string[];
}

/** The beta flags a request needs for the context management it uses. */
const COMPACT_BETA = "compact-2026-01-12";
const CONTEXT_BETA = "context-management-2025-06-27";
function betasFor(opts: AnthropicClientOptions, compaction: boolean): string[] {
  const out = new Set(opts.betas ?? []);
  const edits = compaction ? [] : (opts.contextManagement?.edits ?? []);
  if (compaction || edits.some((e) => e.type === "compact_20260112")) out.add(COMPACT_BETA);
  if (edits.some((e) => e.type !== "compact_20260112")) out.add(CONTEXT_BETA);
  return [...out];
}

export interface AnthropicModelClient extends ModelClient {
  readonly provider: "anthropic";
  countTokens(request: Omit<ModelRequest, "maxTokens">): Promise<number>;
  /** The underlying SDK client. */
  readonly sdk: Anthropic;
}

type Obj = Record<string, unknown>;
const EPHEMERAL = { type: "ephemeral" } as const;

/** Blocks a breakpoint may not sit on. */
const UNCACHEABLE = new Set(["thinking", "redacted_thinking"]);

function withoutCacheControl(b: ContentBlock): ContentBlock {
  // A server compaction block goes back exactly as it came (its breakpoint included).
  if (!("cache_control" in b) || b.type === "compaction") return b;
  const { cache_control: _drop, ...rest } = b;
  return rest as ContentBlock;
}

/** The history as the API takes it, with one breakpoint on the last cacheable block. */
export function toAnthropicMessages(messages: readonly Message[], cache: boolean): MessageParam[] {
  const out = messages.map((m): Obj => ({
    role: m.role,
    content: typeof m.content === "string" ? m.content : m.content.map(withoutCacheControl),
  }));
  const last = out.at(-1);
  if (cache && last) {
    if (typeof last.content === "string") {
      if (last.content !== "") last.content = [{ type: "text", text: last.content, cache_control: EPHEMERAL }];
    } else {
      const blocks = [...(last.content as ContentBlock[])];
      for (let i = blocks.length - 1; i >= 0; i--) {
        const b = blocks[i]!;
        if (UNCACHEABLE.has(b.type) || (b.type === "text" && b.text === "")) continue;
        blocks[i] = { ...b, cache_control: EPHEMERAL };
        break;
      }
      last.content = blocks;
    }
  }
  return out as unknown as MessageParam[];
}

function systemParam(system: string | undefined, cache: boolean): TextBlockParam[] | undefined {
  if (system === undefined || system === "") return undefined;
  return [cache ? { type: "text", text: system, cache_control: EPHEMERAL } : { type: "text", text: system }];
}

function toolsParam(request: Omit<ModelRequest, "maxTokens">): Tool[] | undefined {
  if (!request.tools || request.tools.length === 0) return undefined;
  return request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema as Tool["input_schema"] }));
}

export function mapAnthropicStopReason(reason: string | null | undefined): StopReason {
  switch (reason) {
    case "end_turn":
    case "tool_use":
    case "max_tokens":
    case "stop_sequence":
    case "refusal":
    case "pause_turn":
      return reason;
    case "compaction": // paused after a server-side compaction (pause_after_compaction): send it back to go on
      return "pause_turn";
    case "model_context_window_exceeded": // output cut because the context window filled up: compact, then go on
      return "context_window";
    default:
      return "other";
  }
}

/** Drop null-valued extras the API adds to blocks (citations: null, …). */
function cleanBlock(b: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(b)) if (v !== null) out[k] = v;
  return out;
}

/** Assembles one reply from raw stream events. */
export class AnthropicAssembler {
  readonly blocks: Obj[] = [];
  private readonly json = new Map<number, string>();
  usage: Usage = { input_tokens: 0, output_tokens: 0 };
  stopReason: string | null = null;
  model = "";
  started = false;
  stopped = false;
  /** Events seen (any type, pings included). */
  events = 0;

  constructor(private readonly onEvent?: (e: StreamEvent) => void) {}

  add(event: RawMessageStreamEvent): void {
    this.events++;
    switch (event.type) {
      case "message_start": {
        this.started = true;
        this.model = event.message.model;
        const u = event.message.usage;
        this.usage = {
          input_tokens: u.input_tokens ?? 0,
          output_tokens: u.output_tokens ?? 0,
          cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
          cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
        };
        for (const b of event.message.content ?? []) this.blocks.push(cleanBlock({ ...b }));
        return;
      }
      case "content_block_start": {
        // A compaction block is sent back verbatim: its nulls stay.
        const raw = event.content_block as unknown as Obj;
        const b = raw.type === "compaction" ? { ...raw } : cleanBlock({ ...raw });
        this.blocks[event.index] = b;
        if (b.type === "tool_use" || b.type === "server_tool_use") {
          this.json.set(event.index, "");
          this.onEvent?.({ type: "tool_use", id: String(b.id), name: String(b.name) });
        }
        return;
      }
      case "content_block_delta": {
        const b = this.blocks[event.index];
        if (!b) throw new ModelError("server", `anthropic: content_block_delta for unknown block ${event.index}`);
        const d = event.delta;
        if (d.type === "text_delta") {
          b.text = String(b.text ?? "") + d.text;
          this.onEvent?.({ type: "text", text: d.text });
        } else if (d.type === "thinking_delta") {
          b.thinking = String(b.thinking ?? "") + d.thinking;
          this.onEvent?.({ type: "thinking", text: d.thinking });
        } else if (d.type === "signature_delta") {
          b.signature = d.signature;
        } else if (d.type === "input_json_delta") {
          this.json.set(event.index, (this.json.get(event.index) ?? "") + d.partial_json);
        } else if (d.type === "citations_delta") {
          b.citations = [...((b.citations as unknown[] | undefined) ?? []), d.citation];
        } else if ((d as Obj).type === "compaction_delta") {
          // The delta carries the block's final content (and encrypted content), not a piece of it.
          const c = d as unknown as Obj;
          b.content = c.content ?? null;
          if ("encrypted_content" in c) b.encrypted_content = c.encrypted_content;
        }
        return;
      }
      case "content_block_stop": {
        const json = this.json.get(event.index);
        const b = this.blocks[event.index];
        if (json !== undefined && b) {
          b.input = parseToolInput(json);
          this.json.delete(event.index);
        }
        return;
      }
      case "message_delta": {
        this.stopReason = event.delta.stop_reason ?? this.stopReason;
        const u = event.usage;
        this.usage.output_tokens = u.output_tokens ?? this.usage.output_tokens;
        if (u.input_tokens != null) this.usage.input_tokens = u.input_tokens;
        if (u.cache_creation_input_tokens != null) this.usage.cache_creation_input_tokens = u.cache_creation_input_tokens;
        if (u.cache_read_input_tokens != null) this.usage.cache_read_input_tokens = u.cache_read_input_tokens;
        // What the server's context editing cleared before counting (compared with what was sent).
        const edits = ((event as unknown as Obj).context_management as { applied_edits?: { cleared_input_tokens?: unknown }[] } | null | undefined)?.applied_edits;
        if (Array.isArray(edits)) {
          const cleared = edits.reduce((n, e) => n + (typeof e?.cleared_input_tokens === "number" ? e.cleared_input_tokens : 0), 0);
          if (cleared > 0) this.usage.cleared_input_tokens = cleared;
        }
        return;
      }
      case "message_stop":
        this.stopped = true;
        return;
      default:
        return; // ping and future event types
    }
  }

  /** The complete reply; throws a network ModelError when the stream ended early. */
  finish(requestedModel: string): ModelResponse {
    if (!this.started && this.events === 0) {
      // A 200 that is not an event stream (a proxy's page, a non-streaming endpoint), not a cut connection.
      throw new ModelError("server", "anthropic: the server answered 200 but sent no stream events (not an event stream: check the base URL, or a proxy in between)");
    }
    if (!this.started || !this.stopped) {
      const what = this.started ? "before message_stop" : "before message_start";
      throw new ModelError("network", `anthropic: stream ended ${what} (connection cut mid-stream)`);
    }
    // unterminated tool blocks (no content_block_stop) still get their input
    for (const [i, json] of this.json) if (this.blocks[i]) this.blocks[i]!.input = parseToolInput(json);
    const content = this.blocks.filter((b) => b !== undefined) as ContentBlock[];
    return {
      message: { role: "assistant", content },
      usage: this.usage,
      stopReason: mapAnthropicStopReason(this.stopReason),
      model: this.model || requestedModel,
    };
  }
}

export function createAnthropicClient(opts: AnthropicClientOptions = {}): AnthropicModelClient {
  const sdk = new Anthropic({
    // undefined: the SDK reads ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL (and its other credential sources)
    apiKey: opts.apiKey,
    ...(opts.authToken !== undefined ? { authToken: opts.authToken } : {}),
    baseURL: opts.baseURL,
    defaultHeaders: opts.defaultHeaders,
    maxRetries: opts.maxRetries ?? 0,
    ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
    logLevel: opts.logLevel ?? "off",
  });
  const cache = opts.promptCache ?? true;
  const thinkingOn = opts.thinking !== undefined && opts.thinking.type !== "disabled";

  const baseParams = (request: Omit<ModelRequest, "maxTokens">) => {
    const tools = toolsParam(request);
    return {
      model: request.model,
      messages: toAnthropicMessages(request.messages, cache),
      ...(request.system ? { system: systemParam(request.system, cache) } : {}),
      ...(tools ? { tools } : {}),
      ...(tools && request.toolChoice === "none" ? { tool_choice: { type: "none" as const } } : {}),
    };
  };

  return {
    provider: "anthropic",
    sdk,
    serverCompaction: true,

    async stream(request, onEvent) {
      const params: MessageCreateParamsStreaming = {
        ...baseParams(request),
        max_tokens: request.maxTokens,
        stream: true,
        // the API refuses a temperature other than 1 while thinking is on
        ...(request.temperature !== undefined && !thinkingOn ? { temperature: request.temperature } : {}),
        ...(opts.thinking ? { thinking: opts.thinking } : {}),
      };
      // The API's context management (beta body fields): a compaction request cannot carry it.
      const extra: Obj = request.compaction
        ? { compaction: { type: "summarize", ...(request.compaction.instructions?.trim() ? { instructions: request.compaction.instructions } : {}) } }
        : opts.contextManagement ? { context_management: opts.contextManagement } : {};
      Object.assign(params, extra);
      const betas = betasFor(opts, request.compaction !== undefined);
      const signal = request.signal;
      const idle = new IdleWatch(signal, opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
      try {
        if (signal?.aborted) throw new ModelError("aborted", "anthropic: request aborted");
        const stream = await sdk.messages.create(params, { signal: idle.signal, ...(betas.length ? { headers: { "anthropic-beta": betas.join(",") } } : {}) });
        idle.kick();
        const acc = new AnthropicAssembler(onEvent);
        for await (const event of stream) {
          idle.kick();
          acc.add(event);
        }
        // the SDK ends an aborted stream quietly
        if (signal?.aborted) throw new ModelError("aborted", "anthropic: request aborted");
        if (idle.fired) throw new ModelError("network", idle.message("anthropic"));
        return acc.finish(request.model);
      } catch (e) {
        if (idle.fired && !signal?.aborted) throw new ModelError("network", idle.message("anthropic"), { cause: e });
        throw toModelError(e, { signal, provider: "anthropic" });
      } finally {
        idle.done();
      }
    },

    async countTokens(request) {
      try {
        const r = await sdk.messages.countTokens(
          { ...baseParams(request), messages: toAnthropicMessages(request.messages, false), ...(request.system ? { system: request.system } : {}) },
          request.signal ? { signal: request.signal } : undefined,
        );
        return r.input_tokens;
      } catch (e) {
        throw toModelError(e, { signal: request.signal, provider: "anthropic" });
      }
    },
  };
}
