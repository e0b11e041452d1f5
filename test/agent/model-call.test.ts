// One model call (src/agent/model-call.ts) through the real SDK clients against the fake
// servers: what it sends, the stream events it relays, retries, and the fallback model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { type AgentEvent } from "../../src/agent/types.ts";
import { createModelCaller, type ModelCallerOptions } from "../../src/agent/model-call.ts";
import type { Message } from "../../src/messages/types.ts";
import { createAnthropicClient } from "../../src/model/anthropic.ts";
import { createOpenAIClient } from "../../src/model/openai.ts";
import { ModelError, type ToolDefinition } from "../../src/model/types.ts";
import type { RetryInfo } from "../../src/model/retry.ts";
import { startFakeAnthropic } from "../support/fakes/anthropic.ts";
import { startFakeOpenAI } from "../support/fakes/openai.ts";
import type { FakeOptions, FakeServer, Step } from "../support/fakes/common.ts";

const HI: Message[] = [{ role: "user", content: [{ type: "text", text: "hi" }] }];
const TOOLS: ToolDefinition[] = [{ name: "look", description: "Look at something.", input_schema: { type: "object", properties: { what: { type: "string" } }, required: ["what"] } }];
const noSleep = { sleep: async () => {} };

/** A caller against a fake server; the events it emitted and the server's requests. */
async function withCaller(
  provider: "anthropic" | "openai",
  fake: FakeOptions,
  opts: Partial<ModelCallerOptions>,
  body: (c: ReturnType<typeof createModelCaller>, events: AgentEvent[], server: FakeServer) => Promise<void>,
) {
  const server = provider === "anthropic" ? await startFakeAnthropic(fake) : await startFakeOpenAI(fake);
  const client = provider === "anthropic" ? createAnthropicClient({ baseURL: server.url, apiKey: "test-key" }) : createOpenAIClient({ baseURL: server.url, apiKey: "test-key" });
  const events: AgentEvent[] = [];
  try {
    const caller = createModelCaller({ client, model: "main-model", maxOutputTokens: 1_000, retry: noSleep, emit: (e) => events.push(e), ...opts });
    await body(caller, events, server);
  } finally {
    await server.close();
  }
}

const kinds = (events: AgentEvent[]) => events.map((e) => e.type);

test("a call sends the model, system, tools and output limit, relays the stream as it comes, and returns the complete reply", async () => {
  await withCaller("anthropic", { script: [{ text: "Hello there, friend.", toolUses: [{ name: "look", input: { what: "sky" } }] }] }, { system: "SYSTEM TEXT", tools: TOOLS, maxOutputTokens: 1_234 }, async (caller, events, server) => {
    const r = await caller.call(HI);
    assert.equal(caller.model(), "main-model");
    const body = server.requests[0];
    assert.equal(body.model, "main-model");
    assert.equal(body.max_tokens, 1_234);
    assert.match(JSON.stringify(body.system), /SYSTEM TEXT/);
    assert.deepEqual(body.tools.map((t: { name: string }) => t.name), ["look"]);
    assert.equal(body.stream, true);
    // The stream's text deltas, relayed as they arrived, add up to the reply's text.
    const streamed = events.flatMap((e) => (e.type === "stream" && e.event.type === "text" ? [e.event.text] : [])).join("");
    assert.equal(streamed, "Hello there, friend.");
    assert.ok(events.some((e) => e.type === "stream" && e.event.type === "tool_use" && e.event.name === "look"));
    assert.equal(r.stopReason, "tool_use");
    const blocks = r.message.content as { type: string; text?: string; input?: unknown }[];
    assert.equal(blocks.find((b) => b.type === "text")?.text, "Hello there, friend.");
    assert.deepEqual(blocks.find((b) => b.type === "tool_use")?.input, { what: "sky" });
  });
});

test("transient errors are retried (retry events, the caller's onRetry too); a stream cut mid-way is sent again as a whole new request", async () => {
  const script: Step[] = [{ fault: "rate_limit", retryAfter: 0 }, { fault: "cut", afterEvents: 4, turn: { text: "partial partial partial" } }, { text: "whole reply" }];
  const seen: RetryInfo[] = [];
  await withCaller("anthropic", { script }, { retry: { ...noSleep, onRetry: (i) => seen.push(i) } }, async (caller, events, server) => {
    const r = await caller.call(HI);
    assert.equal((r.message.content as { text: string }[])[0]!.text, "whole reply");
    assert.equal(server.requests.length, 3);
    const retries = events.filter((e) => e.type === "retry");
    assert.deepEqual(retries.map((e) => e.type === "retry" && e.error.kind), ["rate_limited", "network"]);
    assert.deepEqual(seen.map((i) => i.attempt), [1, 2]);
    assert.ok(!kinds(events).includes("fallback"));
  });
});

test("after `fallbackAfter` overloaded / 5xx errors in a row, the fallback model takes over, for later calls too", async () => {
  const script = (body: any): Step => (body.model === "main-model" ? { fault: "overloaded", retryAfter: 0 } : { text: `from ${body.model}` });
  await withCaller("anthropic", { script }, { fallbackModel: "backup-model", fallbackAfter: 2 }, async (caller, events, server) => {
    const r = await caller.call(HI);
    assert.equal((r.message.content as { text: string }[])[0]!.text, "from backup-model");
    assert.equal(caller.model(), "backup-model");
    const fallbacks = events.filter((e) => e.type === "fallback");
    assert.equal(fallbacks.length, 1);
    const fb = fallbacks[0]!;
    assert.ok(fb.type === "fallback" && fb.from === "main-model" && fb.to === "backup-model" && fb.error.kind === "overloaded");
    await caller.call(HI);
    assert.deepEqual(server.requests.map((b) => b.model), ["main-model", "main-model", "backup-model", "backup-model"]);
  });
});

test("the overload streak: another kind of error in between, or a success, starts it again", async () => {
  // Per call: overloaded, rate limited, overloaded, then an answer. With fallbackAfter 2 the
  // streak never reaches 2, neither within a call nor across the two calls.
  const perCall: Step[] = [{ fault: "overloaded", retryAfter: 0 }, { fault: "rate_limit", retryAfter: 0 }, { fault: "overloaded", retryAfter: 0 }, { text: "answer" }];
  const script = (_body: any, i: number): Step => perCall[i % perCall.length]!;
  await withCaller("anthropic", { script }, { fallbackModel: "backup-model", fallbackAfter: 2 }, async (caller, events, server) => {
    await caller.call(HI);
    await caller.call(HI);
    assert.equal(server.requests.length, 8);
    assert.ok(server.requests.every((b) => b.model === "main-model"));
    assert.ok(!kinds(events).includes("fallback"));
    assert.equal(caller.model(), "main-model");
  });
});

test("retries running out while the main model is overloaded: one more round on the fallback; without one, the error is thrown", async () => {
  const script = (body: any): Step => (body.model === "main-model" ? { fault: "server_error" } : { text: "backup answers" });
  await withCaller("openai", { script }, { fallbackModel: "backup-model", fallbackAfter: 10, retry: { ...noSleep, maxAttempts: 2 } }, async (caller, events, server) => {
    const r = await caller.call(HI);
    assert.equal((r.message.content as { text: string }[])[0]!.text, "backup answers");
    assert.deepEqual(server.requests.map((b) => b.model), ["main-model", "main-model", "backup-model"]);
    assert.equal(events.filter((e) => e.type === "fallback").length, 1);
  });
  await withCaller("openai", { script }, { retry: { ...noSleep, maxAttempts: 2 } }, async (caller, _events, server) => {
    await assert.rejects(caller.call(HI), (e: unknown) => e instanceof ModelError && e.kind === "server");
    assert.equal(server.requests.length, 2);
    assert.equal(caller.model(), "main-model");
  });
});

test("an error a retry cannot fix is thrown at once: no retry, no fallback", async () => {
  const bad: Step = { fault: "status", status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "messages: bad shape" } } };
  await withCaller("anthropic", { script: [bad] }, { fallbackModel: "backup-model", fallbackAfter: 1 }, async (caller, events, server) => {
    await assert.rejects(caller.call(HI), (e: unknown) => e instanceof ModelError && e.kind === "invalid_request");
    assert.equal(server.requests.length, 1);
    assert.ok(!kinds(events).includes("retry") && !kinds(events).includes("fallback"));
  });
});

test("the signal aborts a call that is waiting for its reply", { timeout: 10_000 }, async () => {
  const controller = new AbortController();
  await withCaller("anthropic", { script: [{ text: "too late", delayMs: 5_000 }] }, { signal: controller.signal }, async (caller, events, server) => {
    const p = caller.call(HI);
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    await assert.rejects(p, (e: unknown) => e instanceof ModelError && e.kind === "aborted");
    assert.ok(!kinds(events).includes("retry"));
  });
});
