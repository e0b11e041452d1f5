// lethe in a hand-written loop on the `openai` package (Chat Completions), and on
// `@anthropic-ai/sdk` with the engine as it is: the real clients against the local fake servers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { createOpenAIAdapter } from "../../src/adapters/openai.ts";
import type { CompactionEvent } from "../../src/compaction/types.ts";
import { createEngine } from "../../src/engine/index.ts";
import { validate } from "../../src/messages/invariants.ts";
import { fromOpenAI } from "../../src/messages/openai.ts";
import type { Message } from "../../src/messages/types.ts";
import { createAnthropicClient } from "../../src/model/anthropic.ts";
import { toModelError } from "../../src/model/errors.ts";
import { loadTranscript, messageEntries, openTranscript } from "../../src/session/transcript.ts";
import { anthropicInputTokens, startFakeAnthropic } from "../support/fakes/anthropic.ts";
import { startFakeOpenAI } from "../support/fakes/openai.ts";
import { bigOutput } from "../support/e2e.ts";
import { adapterEngine, isSummary, STEPS, stepScript } from "../support/adapters.ts";

const TOOLS = [{ type: "function" as const, function: { name: "lookup", description: "Look a file up.", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } } }];

for (const window of [16_000, 12_000] as const) {
  const reactive = window === 12_000;
  test(`openai package: a ${STEPS}-step loop ${reactive ? "on a server smaller than lethe was told (the reactive path)" : "at a 16k window crosses the threshold at least twice"}; every request fits and is valid; the transcript has every message`, async () => {
    const fake = await startFakeOpenAI({ script: stepScript(), contextWindow: window });
    const dir = mkdtempSync(join(tmpdir(), "lethe-oai-"));
    try {
      const events: CompactionEvent[] = [];
      const transcript = openTranscript(join(dir, "transcript.jsonl"), { header: { id: "oai", cwd: dir } });
      const engine = adapterEngine(fake, { window: reactive ? 40_000 : 16_000, events, dir, transcript });
      const lethe = createOpenAIAdapter({ engine, transcript, fixedTokens: 120 });
      const client = new OpenAI({ baseURL: fake.url, apiKey: "k", maxRetries: 0 });
      const messages: any[] = [{ role: "system", content: "You are a careful agent." }, { role: "user", content: "Read every data file." }];
      let text = "";
      for (let i = 0; i < STEPS + 5; i++) {
        const completion = await lethe.create<OpenAI.ChatCompletion>(client, { model: "gpt-4o", messages, tools: TOOLS, max_tokens: 2_000 });
        const reply = completion.choices[0]!.message;
        messages.push(reply);
        if (!reply.tool_calls?.length) {
          text = reply.content ?? "";
          break;
        }
        for (const c of reply.tool_calls) messages.push({ role: "tool", tool_call_id: c.id, content: bigOutput(JSON.parse((c as any).function.arguments).command, 700) });
      }
      transcript.close();
      assert.equal(text, `done after ${STEPS} steps`);
      if (reactive) {
        assert.ok(events.some((e) => e.kind === "reactive") && events.some((e) => e.kind === "window_learned"), events.map((e) => e.kind).join());
      } else {
        assert.ok(events.filter((e) => e.kind === "summarize").length >= 2);
        assert.equal(fake.served!.length, fake.requests.length, "no request was refused");
      }
      for (const body of fake.requests) {
        if (isSummary(body)) continue;
        assert.deepEqual(validate(fromOpenAI(body.messages).messages).filter((v) => v.kind !== "empty_content"), []);
      }
      assert.ok(Math.max(...fake.served!) <= window);
      const kept = JSON.stringify(messageEntries(loadTranscript(join(dir, "transcript.jsonl")).entries).map((e) => e.message));
      // Every tool result the loop produced (a refused request's call was never answered, so it is not one).
      const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content).split("\n")[0]!);
      assert.ok(results.length >= STEPS - 2);
      assert.deepEqual(results.filter((r) => !kept.includes(r)), []);
    } finally {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test(`@anthropic-ai/sdk: the engine fits a plain loop as it is (lethe's messages are Anthropic's): ${STEPS} steps at 16k`, async () => {
  const fake = await startFakeAnthropic({ script: stepScript(), contextWindow: 16_000 });
  try {
    const events: CompactionEvent[] = [];
    const engine = createEngine({ contextWindow: 16_000, maxOutputTokens: 2_000, summarizer: { client: createAnthropicClient({ baseURL: fake.url, apiKey: "k" }), model: "claude-sonnet-4-6" }, onEvent: (e) => events.push(e) });
    const client = new Anthropic({ baseURL: fake.url, apiKey: "k", maxRetries: 0 });
    const tools = [{ name: "lookup", description: "Look a file up.", input_schema: { type: "object" as const, properties: { command: { type: "string" } }, required: ["command"] } }];
    let history: Message[] = [{ role: "user", content: "Read every data file." }];
    let text = "";
    for (let i = 0; i < STEPS + 5; i++) {
      const ready = await engine.beforeRequest(history, { system: "You are a careful agent.", tools: tools as never, fixedTokens: 150 });
      let reply: Anthropic.Message;
      try {
        reply = await client.messages.create({ model: "claude-sonnet-4-6", max_tokens: 2_000, system: "You are a careful agent.", tools, messages: ready.history as never });
      } catch (e) {
        const error = toModelError(e);
        if (error.kind !== "prompt_too_long") throw e;
        const again = await engine.recover(ready.history, error);
        reply = await client.messages.create({ model: "claude-sonnet-4-6", max_tokens: 2_000, system: "You are a careful agent.", tools, messages: again.history as never });
      }
      engine.observe(ready.history, reply as never, reply.usage, { fixedTokens: 150 });
      history = [...ready.history, { role: "assistant", content: reply.content as never }];
      const calls = reply.content.filter((b) => b.type === "tool_use");
      if (calls.length === 0) {
        text = reply.content.map((b) => (b.type === "text" ? b.text : "")).join("");
        break;
      }
      history.push({ role: "user", content: calls.map((c: any) => ({ type: "tool_result", tool_use_id: c.id, content: bigOutput(c.input.command, 700) })) });
    }
    assert.equal(text, `done after ${STEPS} steps`);
    assert.ok(events.filter((e) => e.kind === "summarize").length >= 2);
    assert.ok(fake.requests.every((b) => anthropicInputTokens(b) <= 16_000));
  } finally {
    await fake.close();
  }
});

test("bad input through the openai adapter: not a list, a null message, a message without a role — a one-line LetheInputError", async () => {
  const { LetheInputError } = await import("../../src/messages/input.ts");
  const lethe = createOpenAIAdapter({ engine: createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000 }) });
  for (const bad of [null, "hi", [null], [{}], [{ role: "user", content: 5 }]]) {
    await assert.rejects(lethe.compact(bad as never), (e: Error) => e instanceof LetheInputError && !e.message.includes("\n"), JSON.stringify(bad));
  }
});

test("lethe/openai: fixedTokens is measured from the leading system messages and the tools create is handed (within 25% of the server's count); an explicit value wins", async () => {
  const { openaiInputTokens } = await import("../support/fakes/openai.ts");
  const fake = await startFakeOpenAI({ script: [{ text: "ok" }] });
  try {
    const client = new OpenAI({ baseURL: fake.url, apiKey: "k", maxRetries: 0 });
    const tools: OpenAI.Chat.ChatCompletionTool[] = Array.from({ length: 5 }, (_, i) => ({ type: "function", function: { name: `tool_${i}`, description: `Tool ${i} reads one file and reports its lines. `.repeat(3), parameters: { type: "object", properties: { path: { type: "string", description: "the file" }, lines: { type: "integer" } }, required: ["path"] } } }));
    const system = "You are a careful agent. ".repeat(50);
    const lethe = createOpenAIAdapter({ engine: createEngine({ contextWindow: 16_000, maxOutputTokens: 2_000 }) });
    await lethe.create(client, { model: "gpt-4o", messages: [{ role: "system", content: system }, { role: "user", content: "hi" }], tools });
    const body = fake.requests[0];
    const server = openaiInputTokens(body) - openaiInputTokens({ ...body, tools: undefined, messages: body.messages.filter((m: { role: string }) => m.role !== "system") });
    assert.ok(server > 400, `sizeable (${server})`);
    assert.ok(Math.abs(lethe.fixedTokens - server) <= 0.25 * server, `measured ${lethe.fixedTokens}, the server counts ${server}`);
    const explicit = createOpenAIAdapter({ engine: createEngine({ contextWindow: 16_000, maxOutputTokens: 2_000 }), fixedTokens: 77 });
    await explicit.create(client, { model: "gpt-4o", messages: [{ role: "system", content: system }, { role: "user", content: "hi" }], tools });
    assert.equal(explicit.fixedTokens, 77);
  } finally {
    await fake.close();
  }
});
