// The OpenAI-compatible client through the real `openai` SDK against the local fake server.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createOpenAIClient, type OpenAIClientOptions } from "../../src/model/openai.ts";
import { withRetry } from "../../src/model/retry.ts";
import { ModelError, type ModelRequest, type StreamEvent } from "../../src/model/types.ts";
import type { Message } from "../../src/messages/types.ts";
import { usageInput } from "../../src/tokens/meter.ts";
import { openaiInputTokens, startFakeOpenAI, type FakeOptions, type FakeServer } from "../support/fakes/openai.ts";

const servers: FakeServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function setup(opts: FakeOptions = {}, clientOpts: OpenAIClientOptions = {}) {
  const fake = await startFakeOpenAI(opts);
  servers.push(fake);
  const client = createOpenAIClient({ apiKey: "sk-test", baseURL: fake.url, ...clientOpts });
  return { fake, client };
}

const tools = [
  { name: "read_file", description: "Read a file", input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
];

const req = (messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "qwen2.5-coder:7b",
  system: "You are a careful coding agent.",
  messages,
  maxTokens: 512,
  ...extra,
});

const recordSleep = () => {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
};

test("streams text; usage chunk requested and mapped", async () => {
  const { fake, client } = await setup({ script: [{ text: "Sure — here is the plan, step by step." }] });
  const events: StreamEvent[] = [];
  const r = await client.stream(req([{ role: "user", content: "plan?" }]), (e) => events.push(e));
  assert.deepEqual(r.message, { role: "assistant", content: [{ type: "text", text: "Sure — here is the plan, step by step." }] });
  assert.equal(r.stopReason, "end_turn");
  assert.ok(events.filter((e) => e.type === "text").length > 1);
  assert.equal(usageInput(r.usage), openaiInputTokens(fake.requests[0]));
  assert.equal(r.usage.cache_read_input_tokens, undefined);
  assert.ok(r.usage.output_tokens > 0);

  const body = fake.requests[0];
  assert.equal(body.stream, true);
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.equal(body.max_tokens, 512);
  assert.deepEqual(body.messages, [
    { role: "system", content: "You are a careful coding agent." },
    { role: "user", content: "plan?" },
  ]);
  assert.equal(fake.log[0]!.headers.authorization, "Bearer sk-test");
});

test("tool_calls deltas → tool_use blocks; reasoning_content → thinking; tools as functions", async () => {
  const { fake, client } = await setup({
    script: [
      {
        thinking: "Need to look at the config first.",
        text: "Reading both files.",
        toolUses: [
          { name: "read_file", input: { path: "src/config.ts" }, id: "call_a" },
          { name: "read_file", input: { path: "package.json", note: "ünïcödé" }, id: "call_b" },
        ],
      },
    ],
  });
  const events: StreamEvent[] = [];
  const r = await client.stream(req([{ role: "user", content: "check config" }], { tools }), (e) => events.push(e));
  assert.deepEqual(r.message.content, [
    { type: "thinking", thinking: "Need to look at the config first." },
    { type: "text", text: "Reading both files." },
    { type: "tool_use", id: "call_a", name: "read_file", input: { path: "src/config.ts" } },
    { type: "tool_use", id: "call_b", name: "read_file", input: { path: "package.json", note: "ünïcödé" } },
  ]);
  assert.equal(r.stopReason, "tool_use");
  assert.deepEqual(
    events.filter((e) => e.type === "tool_use"),
    [
      { type: "tool_use", id: "call_a", name: "read_file" },
      { type: "tool_use", id: "call_b", name: "read_file" },
    ],
  );
  assert.deepEqual(fake.requests[0].tools, [
    { type: "function", function: { name: "read_file", description: "Read a file", parameters: tools[0]!.input_schema } },
  ]);
  assert.equal(fake.requests[0].tool_choice, undefined);
});

test("arguments that are not a JSON object are kept raw", async () => {
  const { client } = await setup({ script: [{ toolUses: [{ name: "read_file", input: null, rawArguments: "{'path': src/a.ts}" }] }] });
  const r = await client.stream(req([{ role: "user", content: "go" }], { tools }));
  assert.deepEqual(r.message.content, [{ type: "tool_use", id: "call_fake_1_0", name: "read_file", input: { _raw: "{'path': src/a.ts}" } }]);
});

test("history with tool results goes through the converters (strict by default, extensions on request)", async () => {
  const history: Message[] = [
    { role: "user", content: "read it" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hmm", signature: "s" },
        { type: "tool_use", id: "call_1", name: "read_file", input: { path: "a.ts" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "export const a = 1;", is_error: true }] },
  ];
  const { fake, client } = await setup();
  await client.stream(req(history, { tools }));
  const sent = fake.requests[0].messages;
  assert.deepEqual(sent[2], {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a.ts"}' } }],
  });
  assert.deepEqual(sent[3], { role: "tool", tool_call_id: "call_1", content: "Error: export const a = 1;" });

  const { fake: fake2, client: ext } = await setup({}, { extensions: true });
  await ext.stream(req(history, { tools }));
  assert.equal(fake2.requests[0].messages[2].reasoning_content, "hmm");
  assert.ok(fake2.requests[0].messages[3].lethe, "lossless extension kept");
});

test("cached_tokens are moved out of input_tokens into cache_read_input_tokens", async () => {
  const { fake, client } = await setup({ script: [{ text: "one" }, { text: "two" }] });
  const history: Message[] = [{ role: "user", content: "Describe the repository layout. ".repeat(30) }];
  const r1 = await client.stream(req(history));
  assert.equal(r1.usage.cache_read_input_tokens, undefined);
  history.push(r1.message, { role: "user", content: "and the tests?" });
  const r2 = await client.stream(req(history));
  const cachedPrefix = openaiInputTokens(fake.requests[0]);
  assert.equal(r2.usage.cache_read_input_tokens, cachedPrefix);
  assert.equal(r2.usage.input_tokens, openaiInputTokens(fake.requests[1]) - cachedPrefix);
  assert.equal(usageInput(r2.usage), openaiInputTokens(fake.requests[1]));
});

test("context_length_exceeded → prompt_too_long with the actual and limit tokens", async () => {
  const { fake, client } = await setup({ contextWindow: 300 });
  const { sleep, waits } = recordSleep();
  const err = await withRetry(() => client.stream(req([{ role: "user", content: "word ".repeat(400) }])), { sleep }).catch(
    (e: unknown) => e as ModelError,
  );
  assert.ok(err instanceof ModelError);
  assert.equal(err.kind, "prompt_too_long");
  assert.equal(err.status, 400);
  assert.equal(err.limitTokens, 300);
  assert.equal(err.actualTokens, openaiInputTokens(fake.requests[0]));
  assert.match(err.message, /context_length_exceeded|invalid_request_error/);
  assert.equal(fake.requests.length, 1);
  assert.deepEqual(waits, []);
});

test("429 with retry-after is honoured; 503 and 500 are retried", async () => {
  const { fake, client } = await setup({
    script: [{ fault: "rate_limit", retryAfter: 2 }, { fault: "overloaded" }, { fault: "server_error" }, { text: "made it" }],
  });
  const { sleep, waits } = recordSleep();
  const kinds: string[] = [];
  const r = await withRetry(() => client.stream(req([{ role: "user", content: "hi" }])), {
    sleep,
    random: () => 0,
    onRetry: ({ error }) => kinds.push(`${error.kind}:${error.status}`),
  });
  assert.deepEqual(r.message.content, [{ type: "text", text: "made it" }]);
  assert.deepEqual(kinds, ["rate_limited:429", "overloaded:503", "server:500"]);
  assert.ok(waits[0]! >= 2000, `waited ${waits[0]} ms`);
  assert.equal(fake.requests.length, 4);
});

test("retry-after-ms is honoured too", async () => {
  const { client } = await setup({ script: [{ fault: "rate_limit", retryAfterMs: 1234 }, { text: "ok" }] });
  const { sleep, waits } = recordSleep();
  await withRetry(() => client.stream(req([{ role: "user", content: "hi" }])), { sleep, random: () => 0 });
  assert.deepEqual(waits, [1234]);
});

test("a cut stream → network error → withRetry succeeds without duplicated content", async () => {
  const reply = { text: "Complete reply text.", toolUses: [{ name: "read_file", input: { path: "x.ts" }, id: "call_x" }] };
  const { fake, client } = await setup({ script: [{ fault: "cut", afterEvents: 4, turn: reply }, reply] });
  const { sleep } = recordSleep();
  const errors: string[] = [];
  const history: Message[] = [{ role: "user", content: "go" }];
  const r = await withRetry(() => client.stream(req(history, { tools })), { sleep, onRetry: ({ error }) => errors.push(error.kind) });
  history.push(r.message);
  assert.deepEqual(errors, ["network"]);
  assert.equal(fake.requests.length, 2);
  assert.deepEqual(r.message.content, [
    { type: "text", text: "Complete reply text." },
    { type: "tool_use", id: "call_x", name: "read_file", input: { path: "x.ts" } },
  ]);
  assert.equal(history.length, 2);
});

test("malformed SSE → a clear server error; an error chunk mid-stream → server", async () => {
  const { client } = await setup({ script: [{ fault: "malformed", afterEvents: 2 }, { fault: "stream_error", afterEvents: 2 }] });
  const bad = await client.stream(req([{ role: "user", content: "hi" }])).catch((e: unknown) => e as ModelError);
  assert.ok(bad instanceof ModelError);
  assert.equal(bad.kind, "server");
  assert.match(bad.message, /malformed response/);
  const mid = await client.stream(req([{ role: "user", content: "hi" }])).catch((e: unknown) => e as ModelError);
  assert.ok(mid instanceof ModelError);
  assert.equal(mid.kind, "server");
  assert.match(mid.message, /server_error/);
});

test("a stream without finish_reason (closed early) is a network error", async () => {
  const { client } = await setup({ script: [{ fault: "end_early", afterEvents: 2 }] });
  const err = await client.stream(req([{ role: "user", content: "hi" }])).catch((e: unknown) => e as ModelError);
  assert.ok(err instanceof ModelError);
  assert.equal(err.kind, "network");
});

test('tool_choice "none" is sent as such', async () => {
  const { fake, client } = await setup();
  await client.stream(req([{ role: "user", content: "summarise" }], { tools, toolChoice: "none" }));
  assert.equal(fake.requests[0].tool_choice, "none");
  assert.equal(fake.requests[0].tools.length, 1);
});

test("max_completion_tokens for OpenAI reasoning models; finish_reason length → max_tokens", async () => {
  const { fake, client } = await setup({ script: [{ text: "trunc", stopReason: "length" }] });
  const r = await client.stream(req([{ role: "user", content: "hi" }], { model: "o4-mini" }));
  assert.equal(fake.requests[0].max_completion_tokens, 512);
  assert.equal(fake.requests[0].max_tokens, undefined);
  assert.equal(r.stopReason, "max_tokens");
});

test("a server that ignores include_usage still yields a usage estimate", async () => {
  const { client } = await setup({ script: [{ text: "no usage here" }] }, { includeUsage: false });
  const r = await client.stream(req([{ role: "user", content: "hi" }]));
  assert.ok(r.usage.input_tokens > 0);
  assert.ok(r.usage.output_tokens > 0);
});

test("wrong key → auth; conversion failure → invalid_request", async () => {
  const { fake } = await setup({ apiKey: "sk-right" });
  const wrong = createOpenAIClient({ apiKey: "sk-wrong", baseURL: fake.url });
  const auth = await wrong.stream(req([{ role: "user", content: "hi" }])).catch((e: unknown) => e as ModelError);
  assert.ok(auth instanceof ModelError);
  assert.equal(auth.kind, "auth");
  const orphan: Message[] = [{ role: "user", content: [{ type: "tool_result", tool_use_id: "nope", content: "x" }] }];
  const bad = await wrong.stream(req(orphan)).catch((e: unknown) => e as ModelError);
  assert.ok(bad instanceof ModelError);
  assert.equal(bad.kind, "invalid_request");
});
