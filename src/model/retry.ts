// Retries for model calls: exponential backoff with full jitter, at least what the server
// asked for (retry-after), never for errors a retry cannot fix.
//
// The SDKs' own retries are off (maxRetries 0) in our clients: they retry a refused request
// but surface a stream cut mid-way as a plain error. Here a cut stream is retried as a whole
// new request; the caller appends only complete replies, so nothing is duplicated.
import { toModelError } from "./errors.ts";
import { ModelError } from "./types.ts";

/** One retry about to happen (for a progress line). */
export interface RetryInfo {
  /** The attempt that failed, from 1. */
  attempt: number;
  error: ModelError;
  /** How long we wait before the next attempt. */
  delayMs: number;
}

/** How transient errors are retried (attempts, backoff, an injectable sleep). */
export interface RetryOptions {
  /** Attempts in all, the first included. Default 5. */
  maxAttempts?: number;
  /** Backoff base: attempt n waits up to baseMs·2^(n−1). Default 500. */
  baseMs?: number;
  /** Cap of the backoff (not of retry-after). Default 30 000. */
  maxMs?: number;
  /** A retry-after longer than this is not waited for: the error is thrown. Default 10 minutes. */
  maxRetryAfterMs?: number;
  signal?: AbortSignal;
  /** Injected for tests; the default honours `signal`. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Injected for tests; in [0, 1). */
  random?: () => number;
  onRetry?: (info: RetryInfo) => void;
}

/** setTimeout as a promise that rejects with an aborted ModelError when `signal` fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ModelError("aborted", "aborted while waiting to retry"));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ModelError("aborted", "aborted while waiting to retry"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The wait before attempt `attempt + 1`: full jitter over the capped exponential, at least retry-after. */
export function backoffDelay(
  attempt: number,
  error: ModelError,
  opts: Pick<RetryOptions, "baseMs" | "maxMs" | "random"> = {},
): number {
  const base = opts.baseMs ?? 500;
  const cap = opts.maxMs ?? 30_000;
  const random = opts.random ?? Math.random;
  const ceiling = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.floor(random() * ceiling);
  return Math.max(jittered, error.retryAfterMs ?? 0);
}

/**
 * Run `fn` until it succeeds, retrying retryable ModelErrors (rate_limited, overloaded,
 * server, network). Anything `fn` throws is normalised to a ModelError first. Throws the
 * last error when attempts run out, at once for prompt_too_long / auth / invalid_request,
 * and an aborted ModelError when `signal` fires (also during a wait).
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 5);
  const maxRetryAfter = opts.maxRetryAfterMs ?? 600_000;
  const wait = opts.sleep ?? sleep;
  for (let attempt = 1; ; attempt++) {
    if (opts.signal?.aborted) throw new ModelError("aborted", "request aborted");
    try {
      return await fn(attempt);
    } catch (e) {
      const error = toModelError(e, { signal: opts.signal });
      if (!error.retryable || attempt >= maxAttempts) throw error;
      if (error.retryAfterMs !== undefined && error.retryAfterMs > maxRetryAfter) throw error;
      const delayMs = backoffDelay(attempt, error, opts);
      opts.onRetry?.({ attempt, error, delayMs });
      await wait(delayMs, opts.signal);
      if (opts.signal?.aborted) throw new ModelError("aborted", "request aborted", { cause: error });
    }
  }
}
