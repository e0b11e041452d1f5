// Errors from any provider, SDK or network layer → ModelError. Pure functions, no I/O.
//
// Inputs we understand:
// - the Anthropic SDK's APIError: `status`, `headers`, `error` = the whole body
//   ({"type":"error","error":{"type","message"}}); mid-stream `event: error` has no status;
// - the OpenAI SDK's APIError: `status`, `headers`, `error` = the body's inner `error`
//   ({"message","type","param","code"}); a mid-stream `data: {"error":…}` has no status;
// - connection errors (APIConnectionError, undici's "terminated" / "fetch failed", ECONNRESET,
//   "socket hang up", premature close), timeouts and aborts;
// - a raw HTTP status + body, or just error text (logs, stderr, a proxy's HTML page).
//
// Context overflow is recognised by wording, whatever the status, because local servers
// report it as 400, 413, 422 or 500 alike.
import { isPromptTooLongText, parseByteLimit, parsePromptTooLong } from "./too-long.ts";
import { ModelError, type ModelErrorKind } from "./types.ts";

/** Response headers as the SDKs and fetch give them. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined> | null | undefined;

export interface NormalizeOptions {
  /** The caller's signal: when it is aborted, whatever was thrown counts as an abort. */
  signal?: AbortSignal;
  /** Prefix for messages ("anthropic", "openai"). */
  provider?: string;
  /** For HTTP-date retry-after values. */
  now?: number;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

// ── prompt too long: ./too-long.ts ───────────────────────────────────────────────

export { isPromptTooLongText, parseByteLimit, parsePromptTooLong, type TooLong } from "./too-long.ts";

// ── retry-after ───────────────────────────────────────────────────────────────────

/** One header's value, from a Headers object or a plain record. */
export function headerValue(headers: HeadersLike, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers as Obj)) {
    if (k.toLowerCase() !== lower) continue;
    if (Array.isArray(v)) return str(v[0]);
    return str(v);
  }
  return undefined;
}

/**
 * How long the server asked us to wait: `retry-after-ms` (milliseconds), else `retry-after`
 * in seconds (fractions allowed) or as an HTTP date. Undefined when absent or unparsable.
 */
export function parseRetryAfter(headers: HeadersLike, now: number = Date.now()): number | undefined {
  const ms = headerValue(headers, "retry-after-ms");
  if (ms !== undefined && ms.trim() !== "") {
    const v = Number(ms);
    if (Number.isFinite(v) && v >= 0) return Math.round(v);
  }
  const ra = headerValue(headers, "retry-after");
  if (ra === undefined || ra.trim() === "") return undefined;
  const secs = Number(ra);
  if (Number.isFinite(secs)) return secs >= 0 ? Math.round(secs * 1000) : undefined;
  const date = Date.parse(ra);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

// ── network errors ────────────────────────────────────────────────────────────────

const NETWORK_CODES = new Set([
  "ECONNRESET", "ECONNREFUSED", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN",
  "ENETUNREACH", "EHOSTUNREACH", "ENETDOWN", "ERR_STREAM_PREMATURE_CLOSE",
  "UND_ERR_SOCKET", "UND_ERR_CLOSED", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT", "UND_ERR_ABORTED", "UND_ERR_REQ_CONTENT_LENGTH_MISMATCH",
  "UND_ERR_RES_CONTENT_LENGTH_MISMATCH",
]);

const NETWORK_TEXT =
  /\bterminated\b|ECONNRESET|ECONNREFUSED|socket hang up|premature close|other side closed|fetch failed|connection (?:error|reset|refused|closed)|network error|timed? ?out|stream ended before|EPIPE|ETIMEDOUT|UND_ERR/i;

function* causeChain(err: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  let e: unknown = err;
  while (e !== undefined && e !== null && !seen.has(e) && seen.size < 8) {
    seen.add(e);
    yield e;
    e = isObj(e) || e instanceof Error ? (e as { cause?: unknown }).cause : undefined;
  }
}

function className(e: unknown): string {
  if (!isObj(e) && !(e instanceof Error)) return "";
  const name = str((e as { name?: unknown }).name) ?? "";
  const ctor = (e as { constructor?: { name?: string } }).constructor?.name ?? "";
  return `${name} ${ctor}`;
}

/** A transport failure: connection refused/reset, a stream cut mid-way, a timeout. */
export function isNetworkError(err: unknown): boolean {
  for (const e of causeChain(err)) {
    const code = isObj(e) || e instanceof Error ? str((e as { code?: unknown }).code) : undefined;
    if (code && NETWORK_CODES.has(code)) return true;
    if (/APIConnection(?:Timeout)?Error|SocketError|ConnectTimeoutError|HeadersTimeoutError|BodyTimeoutError/.test(className(e))) return true;
    const msg = e instanceof Error ? e.message : typeof e === "string" ? e : "";
    if (NETWORK_TEXT.test(msg)) return true;
  }
  return false;
}

/** An abort the caller asked for (AbortController, the SDKs' APIUserAbortError). */
export function isAbort(err: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) return true;
  for (const e of causeChain(err)) {
    if (/AbortError|APIUserAbortError/.test(className(e))) return true;
  }
  return false;
}

// ── HTTP errors ───────────────────────────────────────────────────────────────────

interface BodyInfo {
  message?: string;
  type?: string;
  code?: string;
  /** llama.cpp reports the counts as fields. */
  promptTokens?: number;
  contextSize?: number;
}

/** A proxy's HTML error page as one line of text (its title, else its text without tags). */
function plainText(body: string): string {
  const trimmed = body.trim();
  if (!/^<(?:!doctype|html|head|body|center|h1)\b/i.test(trimmed)) return trimmed;
  const title = /<title>([^<]{1,200})<\/title>/i.exec(trimmed)?.[1];
  const text = title ?? trimmed.slice(0, 4_000).replace(/<[^>]{0,200}>/g, " ");
  return text.replace(/\s+/g, " ").trim();
}

/** Message, type and code from any provider's error body (or its inner `error`). */
export function describeBody(body: unknown): BodyInfo {
  if (typeof body === "string") {
    try {
      return describeBody(JSON.parse(body));
    } catch {
      return { message: plainText(body) || undefined };
    }
  }
  if (!isObj(body)) return {};
  const inner = isObj(body.error) ? body.error : undefined;
  const src = inner ?? body;
  const message = str(src.message) ?? str(body.message) ?? str(body.error) ?? str(body.detail) ?? str(src.detail);
  const type = str(src.type) ?? (body.type !== "error" ? str(body.type) : undefined);
  const code = src.code !== undefined && src.code !== null ? String(src.code) : undefined;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
  return {
    message,
    type,
    code,
    promptTokens: n(src.n_prompt_tokens) ?? n(body.n_prompt_tokens),
    contextSize: n(src.n_ctx) ?? n(body.n_ctx),
  };
}

/** Decide the kind from a status (maybe none: a mid-stream error) and what the body says. */
function classify(status: number | undefined, info: BodyInfo): ModelErrorKind {
  const text = [info.message, info.type, info.code].filter(Boolean).join(" ");
  const type = (info.type ?? "").toLowerCase();
  const code = (info.code ?? "").toLowerCase();
  if (status === 429 || type === "rate_limit_error" || code === "rate_limit_exceeded") return "rate_limited";
  if (code === "context_length_exceeded" || type === "exceed_context_size_error" || isPromptTooLongText(text)) {
    return "prompt_too_long";
  }
  if (status === 413 || type === "request_too_large") return "prompt_too_long";
  if (status === 529 || type === "overloaded_error" || /\boverloaded\b/i.test(text)) return "overloaded";
  if (status === 401 || status === 403 || type === "authentication_error" || type === "permission_error" || code === "invalid_api_key") {
    return "auth";
  }
  if (status === 408 || status === 409) return "server"; // request timeout / lock conflict: worth a retry
  if (status !== undefined && status >= 500) return "server";
  if (type === "api_error" || type === "server_error" || type === "internal_server_error") return "server";
  if (type === "timeout_error") return "network";
  if (status !== undefined && status >= 400) return "invalid_request";
  return status === undefined && type === "" && code === "" ? "server" : "invalid_request";
}

/** An HTTP error response (status, body as JSON or text, headers) → ModelError. */
export function fromHttpError(
  status: number | undefined,
  body: unknown,
  headers?: HeadersLike,
  opts: NormalizeOptions & { cause?: unknown } = {},
): ModelError {
  const info = describeBody(body);
  const kind = classify(status, info);
  const parts = [opts.provider, status !== undefined ? `HTTP ${status}` : "stream error", info.type ?? info.code]
    .filter((p) => p !== undefined && p !== "")
    .join(" ");
  const detail = info.message ?? (typeof body === "string" ? body : undefined) ?? "no error message";
  const extra: ConstructorParameters<typeof ModelError>[2] = { cause: opts.cause };
  if (status !== undefined) extra.status = status;
  if (kind === "prompt_too_long") {
    const parsed = parsePromptTooLong(detail);
    extra.actualTokens = info.promptTokens ?? parsed.actualTokens;
    extra.limitTokens = info.contextSize ?? parsed.limitTokens;
    const bytes = parseByteLimit(status, info.type, `${detail} ${info.code ?? ""}`);
    if (bytes.overBytes) {
      extra.overBytes = true;
      if (bytes.limitBytes !== undefined) extra.limitBytes = bytes.limitBytes;
    }
  }
  const retryAfterMs = parseRetryAfter(headers, opts.now);
  if (retryAfterMs !== undefined && (kind === "rate_limited" || kind === "overloaded" || kind === "server")) {
    extra.retryAfterMs = retryAfterMs;
  }
  return new ModelError(kind, `${parts}: ${detail}`, extra);
}

/** Error text with no structure (a log line, stderr, a body that is not JSON). */
export function fromErrorText(text: string, status?: number, opts: NormalizeOptions = {}): ModelError {
  const trimmed = text.trim();
  if (status !== undefined) return fromHttpError(status, trimmed, undefined, opts);
  // a JSON body without its status
  if (/^[{[]/.test(trimmed)) {
    const info = describeBody(trimmed);
    if (info.message !== undefined || info.type !== undefined) return fromHttpError(undefined, trimmed, undefined, opts);
  }
  const prefix = opts.provider ? `${opts.provider}: ` : "";
  const m = /^(?:HTTP\s*)?([1-5]\d\d)\b/i.exec(trimmed);
  if (m) return fromHttpError(Number(m[1]), trimmed.slice(m[0].length).trim() || trimmed, undefined, opts);
  if (isPromptTooLongText(trimmed)) {
    const { actualTokens, limitTokens } = parsePromptTooLong(trimmed);
    return new ModelError("prompt_too_long", prefix + trimmed, { actualTokens, limitTokens });
  }
  if (/\b429\b|rate.?limit/i.test(trimmed)) return new ModelError("rate_limited", prefix + trimmed);
  if (/overloaded/i.test(trimmed)) return new ModelError("overloaded", prefix + trimmed);
  if (/\baborted\b|AbortError/i.test(trimmed)) return new ModelError("aborted", prefix + trimmed);
  if (NETWORK_TEXT.test(trimmed)) return new ModelError("network", prefix + trimmed);
  if (/unauthori[sz]ed|invalid (?:x-)?api.?key|authentication|permission denied|forbidden/i.test(trimmed)) {
    return new ModelError("auth", prefix + trimmed);
  }
  return new ModelError("server", prefix + trimmed);
}

/** Whether `err` looks like either SDK's APIError (or any object carrying an HTTP status). */
function httpShape(err: unknown): { status: number | undefined; body: unknown; headers: HeadersLike } | undefined {
  if (!(err instanceof Error) && !isObj(err)) return undefined;
  const e = err as { status?: unknown; headers?: unknown; error?: unknown; message?: unknown };
  const status = typeof e.status === "number" ? e.status : undefined;
  const hasBody = "error" in e && e.error !== undefined && e.error !== null;
  if (status === undefined && !hasBody) return undefined;
  // the OpenAI SDK keeps the inner error, Anthropic's the whole body; describeBody reads both
  let body: unknown = hasBody ? e.error : undefined;
  if (body === undefined && typeof e.message === "string") body = e.message.replace(/^\d{3}\s+/, "");
  return { status, body, headers: e.headers as HeadersLike };
}

/**
 * Anything thrown by an SDK, fetch or our own stream assembly → ModelError.
 * A ModelError passes through unchanged (unless the caller's signal says it was an abort).
 */
export function toModelError(err: unknown, opts: NormalizeOptions = {}): ModelError {
  if (err instanceof ModelError) {
    if (err.kind !== "aborted" && opts.signal?.aborted) return aborted(err, opts);
    return err;
  }
  if (isAbort(err, opts.signal)) return aborted(err, opts);
  const prefix = opts.provider ? `${opts.provider}: ` : "";
  const http = httpShape(err);
  if (http && (http.status !== undefined || !isNetworkError(err))) {
    return fromHttpError(http.status, http.body, http.headers, { ...opts, cause: err });
  }
  if (isNetworkError(err)) {
    const msg = err instanceof Error ? describeChain(err) : String(err);
    return new ModelError("network", `${prefix}connection failed: ${msg}`, { cause: err });
  }
  if (err instanceof SyntaxError) {
    return new ModelError("server", `${prefix}malformed response from the server (invalid JSON in the event stream): ${err.message}`, {
      cause: err,
    });
  }
  if (err instanceof Error) return withCause(fromErrorText(err.message, undefined, opts), err);
  return fromErrorText(String(err), undefined, opts);
}

function aborted(err: unknown, opts: NormalizeOptions): ModelError {
  const prefix = opts.provider ? `${opts.provider}: ` : "";
  return new ModelError("aborted", `${prefix}request aborted`, { cause: err });
}

function withCause(e: ModelError, cause: unknown): ModelError {
  return new ModelError(e.kind, e.message, {
    status: e.status,
    actualTokens: e.actualTokens,
    limitTokens: e.limitTokens,
    retryAfterMs: e.retryAfterMs,
    cause,
  });
}

/** "terminated (other side closed)" rather than a bare "terminated". */
function describeChain(err: Error): string {
  const parts: string[] = [];
  for (const e of causeChain(err)) {
    // "Connection error." + ": " would read "Connection error.: fetch failed".
    const m = e instanceof Error ? e.message.trim().replace(/[.\s]+$/, "") : undefined;
    if (m && !parts.includes(m)) parts.push(m);
  }
  return parts.join(": ") || err.name;
}
