// The fake servers themselves, through the SDKs' plain (non-streaming) calls.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { anthropicInputTokens, startFakeAnthropic } from "../support/fakes/anthropic.ts";
import { openaiInputTokens, startFakeOpenAI } from "../support/fakes/openai.ts";
import type { FakeServer } from "../support/fakes/common.ts";

const servers: FakeServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

test("Anthropic fake: non-streaming message, script sees body and index, usage override", async () => {
  const seen: [string, number][] = [];
  const fake = await startFakeAnthropic({
    latencyMs: 1,
    script: (body, i) => {
      seen.push([body.messages.at(-1).content, i]);
      return i === 0 ? { thinking: "t", text: "plain JSON reply" } : { toolUses: [{ name: "bash", input: { command: "pwd" } }], usage: { output_tokens: 42 } };
    },
  });
  servers.push(fake);
  const sdk = new Anthropic({ apiKey: "k", baseURL: fake.url, maxRetries: 0 });
  const m1 = await sdk.messages.create({ model: "claude-haiku-4-5", max_tokens: 100, messages: [{ role: "user", content: "one" }] });
  assert.equal(m1.stop_reason, "end_turn");
  assert.deepEqual(m1.content.map((b) => b.type), ["thinking", "text"]);
  assert.equal(m1.usage.input_tokens, anthropicInputTokens(fake.requests[0]), "no breakpoint: nothing cached");
  assert.equal(m1.usage.cache_read_input_tokens, 0);
  const m2 = await sdk.messages.create({ model: "claude-haiku-4-5", max_tokens: 100, messages: [{ role: "user", content: "two" }] });
  assert.equal(m2.stop_reason, "tool_use");
  assert.deepEqual(m2.content[0], { type: "tool_use", id: "toolu_fake_2_0", name: "bash", input: { command: "pwd" } });
  assert.equal(m2.usage.output_tokens, 42);
  assert.deepEqual(seen, [["one", 0], ["two", 1]]);

  // the SDK's own stream helper assembles the fake's events too
  const final = await sdk.messages
    .stream({ model: "claude-haiku-4-5", max_tokens: 100, messages: [{ role: "user", content: "three" }] })
    .finalMessage();
  assert.equal(final.content[0]?.type, "tool_use");
  assert.deepEqual((final.content[0] as { input: unknown }).input, { command: "pwd" });
});

test("OpenAI fake: non-streaming completion with tool_calls and usage", async () => {
  const fake = await startFakeOpenAI({
    script: [{ text: "calling", toolUses: [{ name: "read_file", input: { path: "a" } }] }],
  });
  servers.push(fake);
  const sdk = new OpenAI({ apiKey: "k", baseURL: fake.url, maxRetries: 0 });
  const c = await sdk.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
  assert.equal(c.choices[0]!.finish_reason, "tool_calls");
  assert.equal(c.choices[0]!.message.content, "calling");
  assert.deepEqual(c.choices[0]!.message.tool_calls, [{ id: "call_fake_1_0", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } }]);
  assert.equal(c.usage?.prompt_tokens, openaiInputTokens(fake.requests[0]));
  assert.equal(c.usage?.prompt_tokens_details?.cached_tokens, 0);

  // the SDK's own stream helper: tool_call argument fragments reassemble
  const s = sdk.chat.completions.stream({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
  const done = await s.finalChatCompletion();
  assert.equal(done.choices[0]!.message.tool_calls?.[0]?.type, "function");
  assert.equal((done.choices[0]!.message.tool_calls?.[0] as { function: { arguments: string } }).function.arguments, '{"path":"a"}');
});

test("unknown paths are 404 with the provider's error shape", async () => {
  const a = await startFakeAnthropic();
  const o = await startFakeOpenAI();
  servers.push(a, o);
  const ra = await fetch(`${a.url}/v1/complete`, { method: "POST", body: "{}" });
  assert.equal(ra.status, 404);
  assert.equal(((await ra.json()) as { type: string }).type, "error");
  const ro = await fetch(`${o.url}/embeddings`, { method: "POST", body: "{}" });
  assert.equal(ro.status, 404);
  assert.ok(((await ro.json()) as { error: unknown }).error);
});
