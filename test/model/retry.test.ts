import { test } from "node:test";
import assert from "node:assert/strict";
import { backoffDelay, withRetry, type RetryInfo } from "../../src/model/retry.ts";
import { ModelError } from "../../src/model/types.ts";

function recorder() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

test("retries retryable errors with full-jitter exponential backoff", async () => {
  const { waits, sleep } = recorder();
  const retries: RetryInfo[] = [];
  let calls = 0;
  const result = await withRetry(
    async (attempt) => {
      calls++;
      assert.equal(attempt, calls);
      if (calls === 1) throw new ModelError("overloaded", "529");
      if (calls === 2) throw new ModelError("server", "500");
      if (calls === 3) throw new ModelError("network", "terminated");
      return "done";
    },
    { sleep, random: () => 0.5, baseMs: 100, maxMs: 1000, onRetry: (i) => retries.push(i) },
  );
  assert.equal(result, "done");
  assert.equal(calls, 4);
  assert.deepEqual(waits, [50, 100, 200]);
  assert.deepEqual(retries.map((r) => [r.attempt, r.error.kind, r.delayMs]), [
    [1, "overloaded", 50],
    [2, "server", 100],
    [3, "network", 200],
  ]);
});

test("the backoff is capped by maxMs, but retry-after is always honoured", () => {
  const e = new ModelError("server", "x");
  assert.equal(backoffDelay(10, e, { baseMs: 500, maxMs: 30_000, random: () => 0.999999 }), 29_999);
  assert.equal(backoffDelay(1, e, { random: () => 0 }), 0);
  const ra = new ModelError("rate_limited", "x", { retryAfterMs: 45_000 });
  assert.equal(backoffDelay(1, ra, { baseMs: 500, maxMs: 30_000, random: () => 0.1 }), 45_000);
  const small = new ModelError("rate_limited", "x", { retryAfterMs: 10 });
  assert.equal(backoffDelay(3, small, { baseMs: 500, random: () => 0.5 }), 1000, "the jitter may exceed a short retry-after");
});

test("never retries prompt_too_long, auth, invalid_request, aborted", async () => {
  for (const kind of ["prompt_too_long", "auth", "invalid_request", "aborted"] as const) {
    const { waits, sleep } = recorder();
    let calls = 0;
    await assert.rejects(
      withRetry(async () => {
        calls++;
        throw new ModelError(kind, kind);
      }, { sleep }),
      (e: unknown) => e instanceof ModelError && e.kind === kind,
    );
    assert.equal(calls, 1, kind);
    assert.deepEqual(waits, []);
  }
});

test("gives up after maxAttempts with the last error", async () => {
  const { waits, sleep } = recorder();
  let calls = 0;
  await assert.rejects(
    withRetry(async () => {
      calls++;
      throw new ModelError("server", `fail ${calls}`);
    }, { sleep, maxAttempts: 3, random: () => 0 }),
    /fail 3/,
  );
  assert.equal(calls, 3);
  assert.equal(waits.length, 2);
});

test("a retry-after beyond maxRetryAfterMs is not waited for", async () => {
  const { waits, sleep } = recorder();
  await assert.rejects(
    withRetry(async () => {
      throw new ModelError("rate_limited", "come back tomorrow", { retryAfterMs: 86_400_000 });
    }, { sleep, maxRetryAfterMs: 60_000 }),
    (e: unknown) => e instanceof ModelError && e.kind === "rate_limited",
  );
  assert.deepEqual(waits, []);
});

test("non-ModelErrors are normalised first (a cut stream is retried)", async () => {
  const { sleep } = recorder();
  let calls = 0;
  const r = await withRetry(async () => {
    if (++calls === 1) throw new TypeError("terminated", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) });
    return calls;
  }, { sleep });
  assert.equal(r, 2);
  await assert.rejects(withRetry(async () => {
    throw new Error("prompt is too long: 9 tokens > 8 maximum");
  }, { sleep }), (e: unknown) => e instanceof ModelError && e.kind === "prompt_too_long" && e.actualTokens === 9);
});

test("abort: before the first attempt, and during a wait with the real sleep", async () => {
  const ac = new AbortController();
  ac.abort();
  let calls = 0;
  await assert.rejects(withRetry(async () => ++calls, { signal: ac.signal }), (e: unknown) => e instanceof ModelError && e.kind === "aborted");
  assert.equal(calls, 0);

  const ac2 = new AbortController();
  const p = withRetry(
    async () => {
      throw new ModelError("rate_limited", "wait", { retryAfterMs: 60_000 });
    },
    { signal: ac2.signal, onRetry: () => queueMicrotask(() => ac2.abort()) },
  );
  await assert.rejects(p, (e: unknown) => e instanceof ModelError && e.kind === "aborted");
});
