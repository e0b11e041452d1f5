// What the fake Anthropic and OpenAI servers share: the HTTP plumbing, scripted turns and
// faults, exact token counting with a simulated prompt cache, and SSE playback with
// injected cuts and garbage. Test support, not product.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { countTokens } from "../../../src/tokens/exact.ts";
import { withoutImages } from "./media-tokens.ts";

// ── scripts ───────────────────────────────────────────────────────────────────────

export interface ToolUseSpec {
  name: string;
  input: unknown;
  id?: string;
  /** Send these arguments verbatim instead of JSON.stringify(input) (e.g. invalid JSON). */
  rawArguments?: string;
}

export interface UsageOverride {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** One scripted model reply. */
export interface Turn {
  text?: string;
  thinking?: string;
  /** Signature of the thinking block (Anthropic); a fixed one by default. */
  signature?: string;
  /** An Anthropic redacted_thinking block's data. */
  redactedThinking?: string;
  toolUses?: ToolUseSpec[];
  /** Provider-native stop/finish reason; by default end_turn|tool_use (stop|tool_calls). */
  stopReason?: string;
  /** Extra wait before the response starts. */
  delayMs?: number;
  /** Set by the fake Anthropic server: the reply is only its compaction block. */
  compactionOnly?: boolean;
  usage?: UsageOverride;
}

/** Where a streamed fault strikes: after this many SSE events (default 3), playing `turn`. */
interface Midway {
  afterEvents?: number;
  turn?: Turn;
}

export type Fault =
  /** 429 with retry-after (seconds or an HTTP date) and/or retry-after-ms. */
  | { fault: "rate_limit"; retryAfter?: number | string; retryAfterMs?: number }
  /** Anthropic 529 overloaded_error; OpenAI 503. */
  | { fault: "overloaded"; retryAfter?: number | string }
  /** 500 with the provider's server-error body. */
  | { fault: "server_error" }
  /** Any status and body. */
  | { fault: "status"; status: number; body: unknown; headers?: Record<string, string> }
  /** Destroy the socket mid-stream. */
  | ({ fault: "cut" } & Midway)
  /** An SSE event whose data is not JSON, then the end of the response. */
  | ({ fault: "malformed" } & Midway)
  /** A mid-stream error event (Anthropic `event: error`, OpenAI `data: {"error":…}`). */
  | ({ fault: "stream_error"; errorType?: string; message?: string } & Midway)
  /** End the response cleanly but early (no message_stop / finish_reason / [DONE]). */
  | ({ fault: "end_early" } & Midway)
  /** Go silent after the first events: the connection stays open, nothing more is sent. */
  | ({ fault: "stall" } & Midway);

export type Step = Turn | Fault;

/** requestBody → what to do; `index` counts generation requests from 0 (faulted ones too). */
export type Script = (body: any, index: number) => Step | Promise<Step>;

export const isFault = (s: Step): s is Fault => typeof (s as Fault).fault === "string";

export interface FakeOptions {
  /** A function, or a list played in order (the last entry repeats). Default: text "ok". */
  script?: Script | Step[];
  /** Enforced on input tokens. Default 200 000 (Anthropic), 128 000 (OpenAI). */
  contextWindow?: number;
  /** Also reject input + max_tokens > window (the providers' other overflow wording). */
  checkMaxTokens?: boolean;
  /** Wait before every response (ms, or per request). */
  latencyMs?: number | ((body: any, index: number) => number);
  /** Wait between SSE events. */
  eventDelayMs?: number;
  /** Simulated prompt caching (default true). */
  promptCache?: boolean;
  /** When set, requests must carry it (x-api-key or Authorization: Bearer). */
  apiKey?: string;
  /**
   * OpenAI fake only: which real server to behave as (documented behaviours):
   * - "deepseek": thinking mode — every reply carries reasoning_content, and an assistant message
   *   with tool_calls sent back without reasoning_content is a 400 ("Missing `reasoning_content`…").
   * - "ollama": never refuses a long prompt; cuts it to numCtx (oldest messages first) and reports
   *   the truncated prompt_tokens; answers /api/ps, /api/show and /api/version.
   * - "vllm": context errors as {"object":"error",…} at the top level and {"error":{…}} in turn.
   * - "llamacpp": 400 exceed_context_size_error with n_prompt_tokens and n_ctx.
   * - "tgi": 422 "Input validation error: `inputs` tokens + `max_new_tokens` must be <= …".
   */
  flavor?: "openai" | "deepseek" | "ollama" | "vllm" | "llamacpp" | "tgi";
  /** Ollama: the context the runner really uses (default: contextWindow). */
  numCtx?: number;
  /** Ollama: /api/ps lists the model as loaded, with its context_length (default true). */
  ollamaLoaded?: boolean;
  /** Ollama: /api/show's parameters include num_ctx (default false: the Modelfile does not set it). */
  ollamaNumCtxParam?: boolean;
  /** Ollama: answers /api/ps, /api/show and /api/version (default true; false: an Ollama-compatible server that has none of them). */
  ollamaApi?: boolean;
  /**
   * A limit on the request body in bytes: over it, Anthropic answers 413 request_too_large
   * ("Request exceeds the maximum allowed number of bytes."); the OpenAI fake answers as nginx's
   * client_max_body_size does in front of a self-hosted server (413, an HTML page).
   */
  maxBodyBytes?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
}

export interface FakeServer {
  /** Base URL to hand the SDK (Anthropic: http://127.0.0.1:port; OpenAI: …/v1). */
  url: string;
  port: number;
  /** Bodies of the generation requests (/v1/messages, /v1/chat/completions), in order. */
  requests: any[];
  /** Every request, count_tokens included. */
  log: RecordedRequest[];
  /** Tokens the server really processed per generation request it answered (after any truncation). */
  served?: number[];
  /** Requests the server silently truncated (Ollama). */
  truncated?: number;
  /** Anthropic: the compaction blocks the server wrote (server-side compaction). */
  compactions?: { emitted: Set<string>; count: number };
  close(): Promise<void>;
}

export function scriptOf(script: FakeOptions["script"]): Script {
  if (typeof script === "function") return script;
  const steps = script && script.length > 0 ? script : [{ text: "ok" }];
  return (_body, i) => steps[Math.min(i, steps.length - 1)]!;
}

// ── tokens ────────────────────────────────────────────────────────────────────────

/** JSON with sorted keys and without cache_control: the same content always counts the same. */
export function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => stableStringify(x === undefined ? null : x)).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const keys = Object.keys(v as object).filter((k) => k !== "cache_control" && (v as any)[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify((v as any)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

const memo = new Map<string, number>();

/** o200k tokens of one unit, memoised (long scripted sessions resend the same history every turn). */
export function unitTokens(unit: unknown): number {
  const s = stableStringify(unit);
  let n = memo.get(s);
  if (n === undefined) {
    if (memo.size >= 10_000) memo.clear();
    // Images count by their dimensions, as the servers bill them; everything else as o200k of its JSON.
    const media = s.includes('"image') ? withoutImages(unit) : undefined;
    memo.set(s, (n = media ? countTokens(stableStringify(media.unit)) + media.tokens : countTokens(s)));
  }
  return n;
}

/**
 * Prompt cache by whole units (the system/tools header, then each message): a request
 * reads the longest prefix of units that an earlier request stored, per model.
 */
export class PrefixCache {
  private readonly stored = new Set<string>();

  private chain(model: string, units: readonly unknown[]): string[] {
    const out: string[] = [];
    let h = createHash("sha256").update(`model:${model}`).digest("hex");
    for (const u of units) {
      h = createHash("sha256").update(h).update(stableStringify(u)).digest("hex");
      out.push(h);
    }
    return out;
  }

  /** Tokens of the longest stored prefix among the first `upto` units, then store those units. */
  readAndStore(model: string, units: readonly unknown[], tokens: readonly number[], upto: number): number {
    const hashes = this.chain(model, units.slice(0, upto));
    let hit = 0;
    for (let i = 0; i < hashes.length; i++) if (this.stored.has(hashes[i]!)) hit = i + 1;
    for (const h of hashes) this.stored.add(h);
    let read = 0;
    for (let i = 0; i < hit; i++) read += tokens[i]!;
    return read;
  }
}

/** Output tokens of a turn: o200k of everything the model "wrote". */
export function outputTokens(turn: Turn): number {
  const parts = [turn.thinking ?? "", turn.text ?? "", ...(turn.toolUses ?? []).map((t) => t.name + argumentsOf(t))];
  return Math.max(1, countTokens(parts.join("")));
}

export const argumentsOf = (t: ToolUseSpec): string => t.rawArguments ?? JSON.stringify(t.input ?? {});

/** Split into about `n` pieces (at least one, never empty pieces unless s is empty). */
export function pieces(s: string, n = 3): string[] {
  if (s.length === 0) return [""];
  const size = Math.max(1, Math.ceil(s.length / n));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

// ── HTTP ──────────────────────────────────────────────────────────────────────────

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function readJson(req: IncomingMessage): Promise<({ ok: true; body: any } | { ok: false; text: string }) & { bytes: number }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  const text = raw.toString("utf8");
  if (text === "") return { ok: true, body: undefined, bytes: 0 };
  try {
    return { ok: true, body: JSON.parse(text), bytes: raw.length };
  } catch {
    return { ok: false, text, bytes: raw.length };
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data), ...headers });
  res.end(data);
}

export function authorized(req: IncomingMessage, apiKey: string | undefined): boolean {
  if (apiKey === undefined) return true;
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1];
  return req.headers["x-api-key"] === apiKey || bearer === apiKey;
}

export function retryAfterHeaders(f: { retryAfter?: number | string; retryAfterMs?: number }): Record<string, string> {
  const h: Record<string, string> = {};
  if (f.retryAfter !== undefined) h["retry-after"] = String(f.retryAfter);
  if ((f as { retryAfterMs?: number }).retryAfterMs !== undefined) h["retry-after-ms"] = String((f as { retryAfterMs?: number }).retryAfterMs);
  return h;
}

export async function latency(opts: FakeOptions, body: any, index: number, turn?: Turn): Promise<void> {
  const base = typeof opts.latencyMs === "function" ? opts.latencyMs(body, index) : (opts.latencyMs ?? 0);
  const ms = base + (turn?.delayMs ?? 0);
  if (ms > 0) await sleep(ms);
}

/** One SSE frame. */
export const frame = (data: unknown, event?: string): string =>
  `${event !== undefined ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;

export interface Playback {
  /** The whole, well-formed stream. */
  frames: string[];
  /** A broken SSE event (data that is not JSON). */
  malformed: string;
  /** A mid-stream error event. */
  streamError: (errorType?: string, message?: string) => string;
}

const write = (res: ServerResponse, s: string) => new Promise<void>((resolve) => res.write(s, () => resolve()));

/** Play `frames` as an SSE response, applying a streamed fault if there is one. */
export async function playSse(res: ServerResponse, p: Playback, fault: Fault | undefined, eventDelayMs = 0): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  const midway = fault && "afterEvents" in fault ? (fault.afterEvents ?? 3) : fault ? 3 : Infinity;
  const n = Math.min(midway, p.frames.length);
  for (let i = 0; i < n; i++) {
    if (eventDelayMs > 0 && i > 0) await sleep(eventDelayMs);
    await write(res, p.frames[i]!);
  }
  if (!fault) return void res.end();
  switch (fault.fault) {
    case "cut":
      // let the written events reach the client, then drop the connection without a proper end
      await sleep(5);
      res.socket?.destroy();
      return;
    case "malformed":
      await write(res, p.malformed);
      res.end();
      return;
    case "stream_error":
      await write(res, p.streamError(fault.errorType, fault.message));
      res.end();
      return;
    case "stall":
      // Silent until the client gives up (its socket closes) or the server is closed.
      await new Promise<void>((resolve) => res.on("close", () => resolve()));
      return;
    default: // end_early
      res.end();
  }
}

export async function listen(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    handler(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake server bug: ${(e as Error).message}` } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

export function closer(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
}
