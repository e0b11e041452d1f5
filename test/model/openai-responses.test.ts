// lethe's Responses API client through the real `openai` SDK against the local fake Responses server.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import type { Message } from "../../src/messages/types.ts";
import { createOpenAIResponsesClient, type OpenAIResponsesClientOptions } from "../../src/model/openai-responses.ts";
import { ModelError, type ModelRequest, type StreamEvent } from "../../src/model/types.ts";
import { usageInput } from "../../src/tokens/meter.ts";
import { responsesInputTokens, startFakeResponses, type ResponsesFakeOptions, type ResponsesFakeServer } from "../support/fakes/responses.ts";

const servers: ResponsesFakeServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function setup(opts: ResponsesFakeOptions = {}, clientOpts: OpenAIResponsesClientOptions = {}) {
  const fake = await startFakeResponses(opts);
  servers.push(fake);
  return { fake, client: createOpenAIResponsesClient({ apiKey: "sk-test", baseURL: fake.url, ...clientOpts }) };
}

const tools = [{ name: "read_file", description: "Read a file", input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }];
const req = (messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest => ({ model: "gpt-5", system: "You are a careful coding agent.", messages, tools, maxTokens: 512, ...extra });
const reasoningItems = (body: any) => body.input.filter((i: any) => i.type === "reasoning");

test("a streamed reply with reasoning and a function call: assembled from the raw events, the reasoning item kept verbatim with its encrypted_content", async () => {
  const { fake, client } = await setup({ script: [{ thinking: "The file holds the answer; read it.", toolUses: [{ name: "read_file", input: { path: "a.txt" } }] }] });
  const events: StreamEvent[] = [];
  const r = await client.stream(req([{ role: "user", content: "What is in a.txt?" }]), (e) => events.push(e));
  const [thinking, call] = r.message.content as any[];
  assert.equal(thinking.type, "thinking");
  assert.equal(thinking.thinking, "The file holds the answer; read it.");
  const emitted = [...fake.book.emitted.values()][0]!.item;
  assert.ok(typeof emitted.encrypted_content === "string");
  assert.deepEqual(thinking.responses_item, emitted, "the reasoning item verbatim");
  assert.equal(call.type, "tool_use");
  assert.equal(call.name, "read_file");
  assert.deepEqual(call.input, { path: "a.txt" });
  assert.match(call.id, /^call_/);
  assert.match(call.responses_id, /^fc_/);
  assert.equal(r.stopReason, "tool_use");
  assert.equal(r.model, "gpt-5");
  assert.ok(events.filter((e) => e.type === "thinking").length > 1, "thinking streamed in pieces");
  assert.deepEqual(events.filter((e) => e.type === "tool_use"), [{ type: "tool_use", id: call.id, name: "read_file" }]);
  assert.equal(usageInput(r.usage), responsesInputTokens(fake.requests[0], fake.book));
  assert.ok(r.usage.output_tokens > 0);

  const body = fake.requests[0];
  assert.equal(body.stream, true);
  assert.equal(body.store, false);
  assert.deepEqual(body.include, ["reasoning.encrypted_content"]);
  assert.equal(body.instructions, "You are a careful coding agent.");
  assert.equal(body.max_output_tokens, 512);
  assert.deepEqual(body.tools, [{ type: "function", name: "read_file", description: "Read a file", parameters: tools[0]!.input_schema, strict: false }]);
  assert.deepEqual(body.input, [{ role: "user", content: [{ type: "input_text", text: "What is in a.txt?" }] }]);
  assert.equal(fake.log[0]!.headers.authorization, "Bearer sk-test");
});

test("the next request carries the reasoning item back byte-identical, before its function call, with the output paired by call_id; cached tokens become cache reads", async () => {
  const { fake, client } = await setup({ script: [{ thinking: "Read it first.", toolUses: [{ name: "read_file", input: { path: "a.txt" } }] }, { thinking: "Now answer.", text: "It says hello." }, { text: "You are welcome." }] });
  const history: Message[] = [{ role: "user", content: "What is in a.txt?" }];
  const first = await client.stream(req(history));
  const id = (first.message.content[1] as any).id;
  history.push(first.message, { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "hello" }] });
  const second = await client.stream(req(history));
  // The reply with text: its message item goes back with its id, after its reasoning item (else the real API answers 400).
  history.push(second.message, { role: "user", content: "Thanks." });
  const third = await client.stream(req(history));
  assert.deepEqual(third.message.content, [{ type: "text", text: "You are welcome.", responses_id: (third.message.content[0] as any).responses_id }]);
  assert.deepEqual(fake.itemErrors, []);
  const body = fake.requests[2];
  const sent = reasoningItems(body);
  assert.equal(sent.length, 2);
  for (const item of sent) assert.equal(JSON.stringify(item), JSON.stringify(fake.book.emitted.get(item.id)!.item), "byte-identical");
  const types = body.input.map((i: any) => i.type ?? "message");
  assert.deepEqual(types, ["message", "reasoning", "function_call", "function_call_output", "reasoning", "message", "message"]);
  assert.equal(body.input[3].call_id, body.input[2].call_id);
  assert.equal(body.input[5].id, fake.book.emitted.get(body.input[4].id)!.next);
  assert.ok((second.usage.cache_read_input_tokens ?? 0) > 0, "the first request's prefix was cached");
});

test("the fake checks what the real API checks: an edited reasoning item, an output without its call, a reasoning item without its following item", async () => {
  const { fake, client } = await setup({ script: [{ thinking: "Plan.", toolUses: [{ name: "read_file", input: { path: "a.txt" } }] }, { text: "ok" }] });
  const first = await client.stream(req([{ role: "user", content: "go" }]));
  const [thinking, call] = first.message.content as any[];
  const result: Message = { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "x" }] };
  const edited = { ...thinking, responses_item: { ...thinking.responses_item, encrypted_content: `${thinking.responses_item.encrypted_content}x` } };
  const cases: [Message[], RegExp][] = [
    [[{ role: "user", content: "go" }, { role: "assistant", content: [edited, call] }, result], /could not be verified/],
    [[{ role: "user", content: "go" }, { role: "assistant", content: [thinking] }, result], /without its required following item/],
    [[{ role: "user", content: "go" }, { role: "assistant", content: [thinking, { ...call, id: "call_other" }] }, result], /No tool call found for function call output with call_id/],
  ];
  for (const [messages, want] of cases) {
    await assert.rejects(client.stream(req(messages)), (e: unknown) => e instanceof ModelError && e.kind === "invalid_request" && want.test(e.message));
  }
  // Without its id, a function call needs no reasoning item (the real API pairs by id).
  const bare: Message[] = [{ role: "user", content: "go" }, { role: "assistant", content: [{ ...call, responses_id: undefined }] }, result];
  assert.equal((await client.stream(req(bare))).stopReason, "end_turn");
  assert.equal(fake.itemErrors.length, 3);
});

for (const overflow of ["status", "response.failed", "error"] as const) {
  test(`a context error ${overflow === "status" ? "as a 400 before the stream" : `as ${overflow === "error" ? "an error event" : "response.failed"} in it`} is a ModelError prompt_too_long`, async () => {
    const { client } = await setup({ contextWindow: 500, overflow, script: [{ text: "never" }] });
    const big: Message[] = [{ role: "user", content: "word ".repeat(2_000) }];
    await assert.rejects(client.stream(req(big)), (e: unknown) => {
      assert.ok(e instanceof ModelError, String(e));
      assert.equal(e.kind, "prompt_too_long", e.message);
      assert.match(e.message, /exceeds the context window/);
      return true;
    });
  });
}

test("a stream cut mid-way, ended without response.completed, or silent past the idle timeout is a retryable network error", async () => {
  for (const fault of ["cut", "end_early"] as const) {
    const { client } = await setup({ script: [{ fault, afterEvents: 6, turn: { thinking: "Thinking it over.", text: "A long answer that never completes." } }] });
    await assert.rejects(client.stream(req([{ role: "user", content: "hi" }])), (e: unknown) => e instanceof ModelError && e.kind === "network" && e.retryable, fault);
  }
  const { client } = await setup({ script: [{ fault: "stream_error", message: "The server had an error while processing your request." }] });
  await assert.rejects(client.stream(req([{ role: "user", content: "hi" }])), (e: unknown) => e instanceof ModelError && e.retryable);
  // A server that goes silent mid-stream: the idle watch gives up.
  const silent = await setup({ script: [{ fault: "stall", afterEvents: 3, turn: { text: "never finished" } }] }, { idleTimeoutMs: 200 });
  await assert.rejects(silent.client.stream(req([{ role: "user", content: "hi" }])), (e: unknown) => e instanceof ModelError && e.kind === "network" && /idle/.test(e.message));
});

test("stop reasons: a refusal part → refusal; incomplete at max_output_tokens → max_tokens (the partial text kept)", async () => {
  const { client } = await setup({ script: [{ refusal: "I can't help with that." } as never, { text: "Half an ans", stopReason: "max_output_tokens" }] });
  const refused = await client.stream(req([{ role: "user", content: "hi" }]));
  assert.equal(refused.stopReason, "refusal");
  assert.equal((refused.message.content[0] as any).text, "I can't help with that.");
  const cut = await client.stream(req([{ role: "user", content: "hi" }]));
  assert.equal(cut.stopReason, "max_tokens");
  assert.equal((cut.message.content[0] as any).text, "Half an ans");
});

test("a model without reasoning: encrypted content is asked for once, refused, and never again; gpt-4o is not asked at all", async () => {
  const { fake, client } = await setup({ reasoning: false, script: [{ text: "ok" }] });
  await client.stream(req([{ role: "user", content: "a" }], { model: "house-model" }));
  await client.stream(req([{ role: "user", content: "b" }], { model: "house-model" }));
  assert.deepEqual(fake.requests.map((b) => b.include ?? null), [["reasoning.encrypted_content"], null, null]);
  assert.equal(fake.itemErrors.length, 1);
  const other = await setup({ reasoning: false, script: [{ text: "ok" }] });
  await other.client.stream(req([{ role: "user", content: "a" }], { model: "gpt-4o" }));
  assert.equal(other.fake.requests[0].include, undefined);
  assert.ok(isDeepStrictEqual(other.fake.itemErrors, []));
});
