// One interface for every model provider. The engine and the agent speak lethe's
// Anthropic-shape messages; each client converts at its edge.
import { LetheError } from "../errors.ts";
import type { Message } from "../messages/types.ts";
import type { Usage } from "../tokens/meter.ts";

/** A tool as the model sees it: name, description, JSON Schema of its input. */
export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the input object. */
  input_schema: Record<string, unknown>;
}

/** One model call: model, system, messages, tools, limits. */
export interface ModelRequest {
  model: string;
  system?: string;
  messages: readonly Message[];
  tools?: readonly ToolDefinition[];
  maxTokens: number;
  /** "none" forbids tool use (summary requests); providers without it get no tools instead. */
  toolChoice?: "auto" | "none";
  temperature?: number;
  signal?: AbortSignal;
  /**
   * Ask the server to compact the conversation itself (Anthropic's `compaction` request): the
   * reply holds one `compaction` block. Only clients with `serverCompaction` take it.
   */
  compaction?: { instructions?: string };
}

/** Why a reply ended. */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "pause_turn" | "context_window" | "other";

export interface ModelResponse {
  /** The assistant message, complete (text, thinking, tool_use blocks). */
  message: Message;
  usage: Usage;
  stopReason: StopReason;
  model: string;
}

/** Streaming progress, for spinners and live text. */
export type StreamEvent =
  | { type: "text"; text: string }
  | { type: "thinking"; text: string }
  | { type: "tool_use"; id: string; name: string };

/** What kind of failure a ModelError is (prompt_too_long is the one to recover from). */
export type ModelErrorKind =
  | "prompt_too_long"
  | "rate_limited"
  | "overloaded"
  | "server"
  | "network"
  | "auth"
  | "invalid_request"
  | "aborted";

/** Errors from any provider, normalised. */
export class ModelError extends LetheError {
  readonly kind: ModelErrorKind;
  readonly status?: number;
  /** prompt_too_long: tokens the provider counted, and its limit, when it said them. */
  readonly actualTokens?: number;
  readonly limitTokens?: number;
  /** prompt_too_long: the limit is the request's size in bytes (HTTP 413), not tokens; its value when stated. */
  readonly overBytes?: boolean;
  readonly limitBytes?: number;
  /** rate_limited / overloaded: how long the provider asked us to wait. */
  readonly retryAfterMs?: number;

  constructor(
    kind: ModelErrorKind,
    message: string,
    extra: { status?: number; actualTokens?: number; limitTokens?: number; overBytes?: boolean; limitBytes?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super("model", message, extra.cause !== undefined ? { cause: extra.cause } : undefined);
    this.kind = kind;
    this.status = extra.status;
    this.actualTokens = extra.actualTokens;
    this.limitTokens = extra.limitTokens;
    if (extra.overBytes) this.overBytes = true;
    if (extra.limitBytes !== undefined) this.limitBytes = extra.limitBytes;
    this.retryAfterMs = extra.retryAfterMs;
  }

  /** Worth retrying the same request after a pause. */
  get retryable(): boolean {
    return this.kind === "rate_limited" || this.kind === "overloaded" || this.kind === "server" || this.kind === "network";
  }
}

/** A model provider behind one interface (lethe/clients has the Anthropic and OpenAI-compatible ones). */
export interface ModelClient {
  readonly provider: "anthropic" | "openai";
  /** One streamed call; resolves with the whole reply, rejects with a ModelError. */
  stream(request: ModelRequest, onEvent?: (e: StreamEvent) => void): Promise<ModelResponse>;
  /** The server can summarise a conversation into a compaction block (request.compaction). */
  readonly serverCompaction?: boolean;
  /** Exact input tokens where the provider can count them (Anthropic count_tokens). */
  countTokens?(request: Omit<ModelRequest, "maxTokens">): Promise<number>;
}

/** A model's context window and reply limit. */
export interface ModelInfo {
  contextWindow: number;
  maxOutputTokens: number;
}
