// The Anthropic client through the real @anthropic-ai/sdk against the local fake server.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createAnthropicClient } from "../../src/model/anthropic.ts";
import { withRetry } from "../../src/model/retry.ts";
import { ModelError, type ModelRequest, type StreamEvent } from "../../src/model/types.ts";
import type { Message } from "../../src/messages/types.ts";
import { usageInput } from "../../src/tokens/meter.ts";
import { anthropicInputTokens, startFakeAnthropic, type FakeOptions, type FakeServer } from "../support/fakes/anthropic.ts";
import { unitTokens } from "../support/fakes/common.ts";

const servers: FakeServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function setup(opts: FakeOptions = {}) {
  const fake = await startFakeAnthropic(opts);
  servers.push(fake);
  const client = createAnthropicClient({ apiKey: "test-key", baseURL: fake.url });
  return { fake, client };
}

const tools = [
  { name: "bash", description: "Run a shell command", input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
];

const req = (messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "claude-sonnet-4-6",
  system: "You are a careful coding agent.",
  messages,
  maxTokens: 1024,
  ...extra,
});

const recordSleep = () => {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
};

test("streams text; events, final message, stop reason and usage", async () => {
  const { fake, client } = await setup({ script: [{ text: "Hello there, how can I help you today?" }] });
  const events: StreamEvent[] = [];
  const r = await client.stream(req([{ role: "user", content: "hi" }]), (e) => events.push(e));
  assert.deepEqual(r.message, { role: "assistant", content: [{ type: "text", text: "Hello there, how can I help you today?" }] });
  assert.equal(r.stopReason, "end_turn");
  assert.equal(r.model, "claude-sonnet-4-6");
  const texts = events.filter((e) => e.type === "text");
  assert.ok(texts.length > 1, "text arrives in several deltas");
  assert.equal(texts.map((e) => (e as { text: string }).text).join(""), "Hello there, how can I help you today?");
  assert.equal(usageInput(r.usage), anthropicInputTokens(fake.requests[0]));
  assert.ok(r.usage.output_tokens > 0);

  // what went over the wire
  const body = fake.requests[0];
  assert.equal(body.stream, true);
  assert.equal(body.max_tokens, 1024);
  assert.deepEqual(body.system, [{ type: "text", text: "You are a careful coding agent.", cache_control: { type: "ephemeral" } }]);
  assert.deepEqual(body.messages, [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }]);
  assert.equal(body.tool_choice, undefined);
  const headers = fake.log[0]!.headers;
  assert.equal(headers["anthropic-version"], "2026-10-21");
  assert.equal(headers.authorization, "Bearer test-key", "SDK 1.x sends the API key as a bearer token");
});

test("tool_use with input split over chunks, thinking with signature, redacted thinking", async () => {
  const input = { command: "grep -rn 'TODO' src | head -50", note: "日本語も" };
  const { fake, client } = await setup({
    script: [{ redactedThinking: "EqQBCgIYAh", thinking: "The user wants TODOs. I will grep.", signature: "sig-abc", text: "Searching.", toolUses: [{ name: "bash", input, id: "toolu_1" }] }],
  });
  const events: StreamEvent[] = [];
  const r = await client.stream(req([{ role: "user", content: "find TODOs" }], { tools }), (e) => events.push(e));
  assert.deepEqual(r.message.content, [
    { type: "redacted_thinking", data: "EqQBCgIYAh" },
    { type: "thinking", thinking: "The user wants TODOs. I will grep.", signature: "sig-abc" },
    { type: "text", text: "Searching." },
    { type: "tool_use", id: "toolu_1", name: "bash", input },
  ]);
  assert.equal(r.stopReason, "tool_use");
  assert.ok(events.some((e) => e.type === "thinking"));
  assert.deepEqual(events.find((e) => e.type === "tool_use"), { type: "tool_use", id: "toolu_1", name: "bash" });
  assert.deepEqual(fake.requests[0].tools, tools);
});

test("tool input that is not valid JSON is kept raw", async () => {
  const { client } = await setup({ script: [{ toolUses: [{ name: "bash", input: null, rawArguments: '{"command": "ls", oops' }] }] });
  const r = await client.stream(req([{ role: "user", content: "go" }], { tools }));
  const block = (r.message.content as { type: string; input?: unknown }[]).find((b) => b.type === "tool_use");
  assert.deepEqual(block?.input, { _raw: '{"command": "ls", oops' });
});

test("prompt cache: the next turn reads the previous prefix; breakpoints move to the new last block", async () => {
  const { fake, client } = await setup({ script: [{ text: "first answer" }, { text: "second answer" }] });
  const history: Message[] = [{ role: "user", content: "Explain the build in detail. ".repeat(40) }];
  const r1 = await client.stream(req(history, { tools }));
  assert.equal(r1.usage.cache_read_input_tokens, 0);
  assert.equal(r1.usage.input_tokens, 0, "everything up to the breakpoint on the last block is cacheable");
  assert.equal(r1.usage.cache_creation_input_tokens, anthropicInputTokens(fake.requests[0]));

  history.push(r1.message, { role: "user", content: [{ type: "text", text: "And the tests?" }] });
  const r2 = await client.stream(req(history, { tools }));
  assert.equal(r2.usage.cache_read_input_tokens, anthropicInputTokens(fake.requests[0]), "the whole first request is read from cache");
  assert.equal(usageInput(r2.usage), anthropicInputTokens(fake.requests[1]));
  assert.ok((r2.usage.cache_creation_input_tokens ?? 0) > 0);
  // only the last block carries a breakpoint; the earlier string message went back to a string
  const sent = fake.requests[1].messages;
  assert.equal(sent[0].content, history[0]!.content);
  assert.equal(sent[1].content[0].cache_control, undefined);
  assert.deepEqual(sent[2].content[0].cache_control, { type: "ephemeral" });
  assert.equal((history[2]!.content as { cache_control?: unknown }[])[0]!.cache_control, undefined, "the caller's history is not mutated");
});

test("countTokens uses /v1/messages/count_tokens", async () => {
  const { fake, client } = await setup();
  const messages: Message[] = [{ role: "user", content: "count me, please: 一二三" }];
  const n = await client.countTokens({ model: "claude-haiku-4-5", system: "sys", messages, tools });
  const entry = fake.log.find((l) => l.path === "/v1/messages/count_tokens")!;
  assert.equal(n, anthropicInputTokens(entry.body));
  assert.equal(entry.body.system, "sys");
  assert.equal(entry.body.messages[0].content, "count me, please: 一二三");
  assert.equal(fake.requests.length, 0, "no generation request");
});

test("prompt too long → ModelError with the actual and limit tokens, never retried", async () => {
  const { fake, client } = await setup({ contextWindow: 500 });
  const { sleep, waits } = recordSleep();
  const messages: Message[] = [{ role: "user", content: "lorem ipsum dolor sit amet ".repeat(200) }];
  const err = await withRetry(() => client.stream(req(messages)), { sleep }).then(
    () => assert.fail("expected an error"),
    (e: unknown) => e as ModelError,
  );
  assert.ok(err instanceof ModelError);
  assert.equal(err.kind, "prompt_too_long");
  assert.equal(err.status, 400);
  assert.equal(err.limitTokens, 500);
  assert.equal(err.actualTokens, anthropicInputTokens(fake.requests[0]));
  assert.ok(err.actualTokens! > 500);
  assert.equal(fake.requests.length, 1);
  assert.deepEqual(waits, []);
});

test("input + max_tokens over the window is prompt_too_long too", async () => {
  const { fake, client } = await setup({ contextWindow: 2000, checkMaxTokens: true });
  const err = await client.stream(req([{ role: "user", content: "short" }], { maxTokens: 1990 })).catch((e: unknown) => e as ModelError);
  assert.ok(err instanceof ModelError);
  assert.equal(err.kind, "prompt_too_long");
  assert.equal(err.actualTokens, anthropicInputTokens(fake.requests[0]) + 1990);
  assert.equal(err.limitTokens, 2000);
});

test("429 with retry-after is honoured by withRetry", async () => {
  const { fake, client } = await setup({ script: [{ fault: "rate_limit", retryAfter: 3 }, { text: "after the wait" }] });
  const { sleep, waits } = recordSleep();
  const kinds: string[] = [];
  const r = await withRetry(() => client.stream(req([{ role: "user", content: "hi" }])), {
    sleep,
    random: () => 0.2,
    onRetry: ({ error }) => kinds.push(`${error.kind}:${error.status}:${error.retryAfterMs}`),
  });
  assert.deepEqual(r.message.content, [{ type: "text", text: "after the wait" }]);
  assert.equal(fake.requests.length, 2);
  assert.deepEqual(kinds, ["rate_limited:429:3000"]);
  assert.equal(waits.length, 1);
  assert.ok(waits[0]! >= 3000, `waited ${waits[0]} ms`);
});

test("529 overloaded and 500 are retried, then success", async () => {
  const { fake, client } = await setup({
    script: [{ fault: "overloaded" }, { fault: "server_error" }, { text: "finally" }],
  });
  const { sleep, waits } = recordSleep();
  const kinds: string[] = [];
  const r = await withRetry(() => client.stream(req([{ role: "user", content: "hi" }])), {
    sleep,
    onRetry: ({ error }) => kinds.push(`${error.kind}:${error.status}`),
  });
  assert.deepEqual(r.message.content, [{ type: "text", text: "finally" }]);
  assert.deepEqual(kinds, ["overloaded:529", "server:500"]);
  assert.equal(waits.length, 2);
  assert.equal(fake.requests.length, 3);
});

test("a stream cut mid-way is a network error; withRetry re-sends and nothing is duplicated", async () => {
  const reply = { text: "The whole answer, streamed in pieces.", toolUses: [{ name: "bash", input: { command: "ls -la" }, id: "toolu_cut" }] };
  const { fake, client } = await setup({ script: [{ fault: "cut", afterEvents: 5, turn: reply }, reply] });
  // a bare call surfaces the cut
  const first = await client.stream(req([{ role: "user", content: "go" }], { tools })).catch((e: unknown) => e as ModelError);
  assert.ok(first instanceof ModelError);
  assert.equal(first.kind, "network", first.message);
  assert.equal(first.retryable, true);

  // through withRetry: the caller appends only the complete reply
  const { fake: fake2, client: client2 } = await setup({ script: [{ fault: "cut", afterEvents: 5, turn: reply }, reply] });
  const history: Message[] = [{ role: "user", content: "go" }];
  const { sleep } = recordSleep();
  const seen: string[] = [];
  const r = await withRetry(() => client2.stream(req(history, { tools }), (e) => e.type === "text" && seen.push(e.text)), { sleep });
  history.push(r.message);
  assert.equal(fake2.requests.length, 2);
  assert.deepEqual(fake2.requests[1].messages, fake2.requests[0].messages, "the retry sends the same request");
  assert.equal(history.length, 2);
  assert.deepEqual(r.message.content, [
    { type: "text", text: reply.text },
    { type: "tool_use", id: "toolu_cut", name: "bash", input: { command: "ls -la" } },
  ]);
  assert.ok(seen.join("").endsWith(reply.text), "live events of the failed attempt are only progress");
  assert.equal(fake.requests.length, 1);
});

test("a stream that ends cleanly but early (no message_stop) is a network error", async () => {
  const { client } = await setup({ script: [{ fault: "end_early", afterEvents: 4, turn: { text: "cut short by a proxy" } }] });
  const err = await client.stream(req([{ role: "user", content: "hi" }])).catch((e: unknown) => e as ModelError);
  assert.ok(err instanceof ModelError);
  assert.equal(err.kind, "network");
  assert.match(err.message, /before message_stop/);
});

test("malformed SSE → a clear server error", async () => {
  const { client } = await setup({ script: [{ fault: "malformed", afterEvents: 3 }] });
  const err = await client.stream(req([{ role: "user", content: "hi" }])).catch((e: unknown) => e as ModelError);
  assert.ok(err instanceof ModelError);
  assert.equal(err.kind, "server");
  assert.match(err.message, /malformed response/);
});

test("an error event mid-stream (overloaded_error) → overloaded", async () => {
  const { client } = await setup({ script: [{ fault: "stream_error", afterEvents: 4 }] });
  const err = await client.stream(req([{ role: "user", content: "hi" }])).catch((e: unknown) => e as ModelError);
  assert.ok(err instanceof ModelError);
  assert.equal(err.kind, "overloaded", err.message);
  assert.equal(err.status, undefined);
});

test("tool_choice none is sent as {type: none} (with the tools kept for the cache)", async () => {
  const { fake, client } = await setup();
  await client.stream(req([{ role: "user", content: "summarise" }], { tools, toolChoice: "none" }));
  assert.deepEqual(fake.requests[0].tool_choice, { type: "none" });
  assert.deepEqual(fake.requests[0].tools, tools);
  await client.stream(req([{ role: "user", content: "summarise" }], { toolChoice: "none" }));
  assert.equal(fake.requests[1].tool_choice, undefined, "no tools, no tool_choice");
});

test("abort mid-stream → aborted; a wrong key → auth", async () => {
  const { client } = await setup({ script: [{ text: "a long answer that we will not wait for" }], eventDelayMs: 5 });
  const ac = new AbortController();
  const err = await client
    .stream(req([{ role: "user", content: "hi" }], { signal: ac.signal }), (e) => e.type === "text" && ac.abort())
    .catch((e: unknown) => e as ModelError);
  assert.ok(err instanceof ModelError);
  assert.equal(err.kind, "aborted");

  const { fake } = await setup({ apiKey: "right" });
  const wrong = createAnthropicClient({ apiKey: "wrong", baseURL: fake.url });
  const auth = await wrong.stream(req([{ role: "user", content: "hi" }])).catch((e: unknown) => e as ModelError);
  assert.ok(auth instanceof ModelError);
  assert.equal(auth.kind, "auth");
  assert.equal(auth.retryable, false);
});

test("fake server: units count exactly what was sent", async () => {
  const { fake, client } = await setup();
  await client.stream(req([{ role: "user", content: "abc" }]));
  const body = fake.requests[0];
  const expected =
    unitTokens({ system: "You are a careful coding agent.", tools: [] }) +
    unitTokens({ role: "user", content: [{ type: "text", text: "abc" }] });
  assert.equal(anthropicInputTokens(body), expected);
});

test("client options: thinking is sent (and temperature dropped with it); promptCache off sends no breakpoints", async () => {
  const fake = await startFakeAnthropic();
  servers.push(fake);
  const thinking = createAnthropicClient({ apiKey: "k", baseURL: fake.url, thinking: { type: "enabled", budget_tokens: 2048 } });
  await thinking.stream(req([{ role: "user", content: "hi" }], { temperature: 0.2 }));
  assert.deepEqual(fake.requests[0].thinking, { type: "enabled", budget_tokens: 2048 });
  assert.equal(fake.requests[0].temperature, undefined);
  const plain = createAnthropicClient({ apiKey: "k", baseURL: fake.url, promptCache: false });
  const r = await plain.stream(req([{ role: "user", content: "hi" }], { temperature: 0.2 }));
  assert.equal(fake.requests[1].temperature, 0.2);
  assert.equal(fake.requests[1].system[0].cache_control, undefined);
  assert.equal(fake.requests[1].messages[0].content, "hi");
  assert.equal(r.usage.cache_creation_input_tokens, 0, "no breakpoint, no cache write");
  assert.equal(r.usage.input_tokens, anthropicInputTokens(fake.requests[1]));
});
