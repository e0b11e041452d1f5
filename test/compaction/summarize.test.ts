import { test } from "node:test";
import assert from "node:assert/strict";
import { dropOldestRounds, parseSummary, summarize, summaryInstruction, summaryRequest } from "../../src/compaction/summary/summarize.ts";
import { ModelError } from "../../src/model/types.ts";
import { validate } from "../../src/messages/invariants.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { bashSession, said, user } from "../support/build.ts";
import { SUMMARY_REPLY, scriptedClient } from "../support/scripted-client.ts";

const counter = createTokenCounter();

test("the summary request reuses the conversation as the prefix and forbids tools", () => {
  const h = bashSession(3, 100);
  const tools = [{ name: "bash", description: "run", input_schema: { type: "object" } }];
  const req = summaryRequest({ model: "m", system: "SYS", tools, history: h, instruction: "SUM", maxTokens: 1000 });
  assert.equal(req.toolChoice, "none");
  assert.equal(req.system, "SYS");
  assert.equal(req.tools, tools);
  for (let i = 0; i < h.length - 1; i++) assert.equal(req.messages[i], h[i], "prefix unchanged (prompt cache)");
  assert.deepEqual(validate(req.messages), []);
  assert.match(JSON.stringify(req.messages.at(-1)), /SUM/);
  // After an assistant reply the instruction is a new user message.
  const r2 = summaryRequest({ model: "m", history: [...h, said("done")], instruction: "SUM", maxTokens: 1 });
  assert.equal(r2.messages.length, h.length + 2);
  assert.deepEqual(validate(r2.messages), []);
});

test("the instruction asks for analysis then the sections, folds the previous summary, adds a focus", () => {
  const t = summaryInstruction({ hasPrevious: true, focus: "keep the API names", maxTokens: 20_000 });
  for (const s of ["<analysis>", "<summary>", "Goal", "Files", "Errors and fixes", "The user's messages", "Pending tasks", "Current work", "Next step", "fold", "keep the API names", "no tool calls"]) {
    assert.ok(t.includes(s), s);
  }
});

test("parseSummary strips the analysis, keeps the summary body, rejects tool calls", () => {
  const reply = (text: string, extra: object[] = []) => ({ message: { role: "assistant" as const, content: [{ type: "text" as const, text }, ...extra] as never }, usage: { input_tokens: 1, output_tokens: 1 }, stopReason: "end_turn" as const, model: "m" });
  assert.equal(parseSummary(reply(SUMMARY_REPLY)), "1. Goal — fix the failing build in src/app.ts.\n8. Current work — editing src/app.ts.");
  assert.throws(() => parseSummary(reply(SUMMARY_REPLY, [{ type: "tool_use", id: "x", name: "bash", input: {} }])), /called a tool/);
  assert.throws(() => parseSummary(reply("<analysis>only thoughts</analysis>")), /empty/);
});

test("dropOldestRounds keeps the task and whole pairs", () => {
  const h = bashSession(20, 400);
  const out = dropOldestRounds(h, counter, counter.messages(h) * 0.3);
  assert.ok(out.length < h.length);
  assert.deepEqual(validate(out), []);
  assert.match(JSON.stringify(out[0]), /Fix the failing test/);
  assert.equal(out.at(-1), h.at(-1));
});

test("summary-request overflow: drops the oldest rounds and retries (at most 3 times)", async () => {
  const h = bashSession(30, 2_000);
  const tooLong = () => new ModelError("prompt_too_long", "prompt is too long: 50000 tokens > 40000 maximum", { actualTokens: 50_000, limitTokens: 40_000 });
  const client = scriptedClient([tooLong(), tooLong(), SUMMARY_REPLY]);
  const r = await summarize({ client, model: "m", history: h, counter, maxTokens: 2_000 });
  assert.equal(client.requests.length, 3);
  assert.ok(r.droppedForOverflow > 0);
  assert.ok(client.requests[2]!.messages.length < client.requests[0]!.messages.length);
  const always = scriptedClient([tooLong()]);
  const big = bashSession(60, 8_000);
  await assert.rejects(summarize({ client: always, model: "m", history: big, counter, maxTokens: 2_000 }), /prompt is too long/);
  assert.equal(always.requests.length, 4, "the first try and 3 retries");
  // When nothing more can be dropped it gives up at once.
  const small = scriptedClient([tooLong()]);
  await assert.rejects(summarize({ client: small, model: "m", history: bashSession(1, 100), counter, maxTokens: 2_000 }), /prompt is too long/);
  assert.equal(small.requests.length, 1);
});

test("a plain user message after the task is still answered in the right role order", () => {
  const h = [user("a"), said("b"), user("c")];
  const req = summaryRequest({ model: "m", history: h, instruction: "S", maxTokens: 5 });
  assert.deepEqual(validate(req.messages), []);
});
