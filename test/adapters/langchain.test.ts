// lethe inside LangChain.js: the real @langchain/core messages and the real ChatOpenAI, against the
// local fake OpenAI server at a 16k window, in the agent loop a LangChain user writes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { createLangChainAdapter, fromLangChain, toLangChain } from "../../src/adapters/langchain.ts";
import type { CompactionEvent } from "../../src/compaction/types.ts";
import { createEngine } from "../../src/engine/index.ts";
import { validate } from "../../src/messages/invariants.ts";
import { LetheInputError } from "../../src/messages/input.ts";
import { fromOpenAI } from "../../src/messages/openai.ts";
import { loadTranscript, messageEntries, openTranscript } from "../../src/session/transcript.ts";
import { openaiInputTokens, startFakeOpenAI } from "../support/fakes/openai.ts";
import { bigOutput } from "../support/e2e.ts";
import { adapterEngine, isSummary, STEPS, stepScript } from "../support/adapters.ts";


const lookupTool = { type: "function" as const, function: { name: "lookup", description: "Look a file up.", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } } };

/** The loop a LangChain user writes: invoke, run each tool call, push the messages, until no calls. */
async function agent(lethe: ReturnType<typeof createLangChainAdapter>, model: ChatOpenAI, start: BaseMessage[]) {
  const messages = start.slice();
  const bound = model.bindTools([lookupTool]);
  for (let i = 0; i < STEPS + 5; i++) {
    const reply = (await lethe.invoke(bound as never, messages)) as AIMessage;
    messages.push(reply);
    if (!reply.tool_calls?.length) return { reply, messages };
    for (const c of reply.tool_calls) messages.push(new ToolMessage({ content: bigOutput(String(c.args.command), 700), tool_call_id: c.id! }));
  }
  throw new Error("the loop did not end");
}

test(`LangChain: a ${STEPS}-step tool loop at a 16k window crosses the threshold at least twice; every request fits and is valid; the transcript has every message`, async () => {
  const fake = await startFakeOpenAI({ script: stepScript("lookup"), contextWindow: 16_000 });
  const dir = mkdtempSync(join(tmpdir(), "lethe-lc-"));
  try {
    const events: CompactionEvent[] = [];
    const transcript = openTranscript(join(dir, "transcript.jsonl"), { header: { id: "lc", cwd: dir } });
    const engine = adapterEngine(fake, { window: 16_000, events, dir, transcript });
    const lethe = createLangChainAdapter({ engine, transcript, fixedTokens: 300 });
    const model = new ChatOpenAI({ model: "gpt-4o", apiKey: "k", configuration: { baseURL: fake.url }, maxRetries: 0, maxTokens: 2_000 });
    const { reply, messages } = await agent(lethe, model, [new SystemMessage("You are a careful agent."), new HumanMessage("Read every data file.")]);
    transcript.close();
    assert.equal(reply.content, `done after ${STEPS} steps`);
    assert.equal(messages.length, 2 + 2 * STEPS + 1, "the caller's own list is whole");
    const summaries = events.filter((e) => e.kind === "summarize");
    assert.ok(summaries.length >= 2, `summaries: ${summaries.length}`);
    assert.equal(fake.served!.length, fake.requests.length, "no request was refused");
    for (const body of fake.requests) {
      assert.ok(openaiInputTokens(body) <= 16_000);
      // Pairing and alternation; ChatOpenAI writes "no text" beside tool calls as content "", which
      // reads back as an empty text block (not a structural fault).
      if (!isSummary(body)) assert.deepEqual(validate(fromOpenAI(body.messages).messages).filter((v) => v.kind !== "empty_content"), []);
    }
    assert.ok(fake.requests.filter((b) => !isSummary(b)).every((b) => b.messages[0].role === "system" && /careful agent/.test(b.messages[0].content)), "the system message stays first");
    const kept = JSON.stringify(messageEntries(loadTranscript(join(dir, "transcript.jsonl")).entries).map((e) => e.message));
    const missing = Array.from({ length: STEPS }, (_, i) => i + 1).filter((i) => !kept.includes(`cat data/file${i}.txt row 0:`));
    assert.deepEqual(missing, []);
    assert.match(kept, /Read every data file\./);
    assert.match(kept, new RegExp(`done after ${STEPS} steps`));
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("LangChain: the reactive path — the server refuses (smaller than lethe was told); compacted and retried once", async () => {
  const fake = await startFakeOpenAI({ script: stepScript("lookup"), contextWindow: 12_000 });
  const dir = mkdtempSync(join(tmpdir(), "lethe-lc-"));
  try {
    const events: CompactionEvent[] = [];
    const engine = adapterEngine(fake, { window: 40_000, events, dir });
    const lethe = createLangChainAdapter({ engine });
    const model = new ChatOpenAI({ model: "gpt-4o", apiKey: "k", configuration: { baseURL: fake.url }, maxRetries: 0, maxTokens: 2_000 });
    const { reply } = await agent(lethe, model, [new HumanMessage("Read every data file.")]);
    assert.equal(reply.content, `done after ${STEPS} steps`);
    assert.ok(events.some((e) => e.kind === "reactive"), events.map((e) => e.kind).join());
    assert.ok(events.some((e) => e.kind === "window_learned"));
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("LangChain conversion both ways: tool calls and results (errors too), images, reasoning, ids and kwargs", () => {
  const messages: BaseMessage[] = [
    new SystemMessage("Be brief."),
    new HumanMessage({ content: [{ type: "text", text: "Look" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }] }),
    new AIMessage({ content: "Reading.", tool_calls: [{ id: "c1", name: "read", args: { path: "a" } }, { id: "c2", name: "stat", args: {} }], id: "msg-1", additional_kwargs: { refusal: null } }),
    new ToolMessage({ content: "3 lines", tool_call_id: "c1" }),
    new ToolMessage({ content: "ENOENT", tool_call_id: "c2", status: "error" }),
    new HumanMessage("Thanks."),
  ];
  const { system, history } = fromLangChain(messages);
  assert.equal(system.length, 1);
  assert.deepEqual(validate(history), []);
  assert.equal(history.length, 3, "the tool results and the next human message are one lethe user message");
  const back = toLangChain(history);
  const shape = (ms: BaseMessage[]) =>
    ms.map((m: any) => ({ type: m.type, content: m.content, tool_calls: m.tool_calls?.map((c: any) => ({ id: c.id, name: c.name, args: c.args })) ?? [], tool_call_id: m.tool_call_id, status: m.status === "error" ? "error" : undefined, id: m.id }));
  assert.deepEqual(shape(back), shape(messages.slice(1)));
});

test("bad input through the LangChain adapter: an unknown message, a block without a type, a tool message without its call id — one line, or a repaired history", async () => {
  assert.throws(() => fromLangChain([{ type: "robot", content: "x" } as never]), (e: Error) => e instanceof LetheInputError && /messages\[0\]\.type/.test(e.message));
  assert.throws(() => fromLangChain([new HumanMessage({ content: [{ text: "no type" } as never] })]), LetheInputError);
  assert.throws(() => fromLangChain([{ type: "tool", content: "x" } as never]), /tool_call_id/);
  const lethe = createLangChainAdapter({ engine: createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000 }) });
  // A tool result whose call is not in the list: repaired away, not a crash in the engine.
  const out = await lethe.compact([new HumanMessage("hi"), new ToolMessage({ content: "?", tool_call_id: "ghost" }), new HumanMessage("go on")]);
  assert.deepEqual(out.map((m: any) => [m.type, m.content]), [["human", [{ type: "text", text: "hi" }, { type: "text", text: "go on" }]]]);
});

test("LangChain on a restored checkpoint: a fresh engine and adapter per step, the messages deserialised as a checkpointer does, summarise no more often than one long-lived adapter; every request fits", async () => {
  const { mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages } = await import("@langchain/core/messages");
  const { connectStore } = await import("../../src/store/connect.ts");
  const run = async (restored: boolean) => {
    const fake = await startFakeOpenAI({ script: stepScript("lookup"), contextWindow: 16_000 });
    const dir = mkdtempSync(join(tmpdir(), "lethe-lc-store-"));
    try {
      const store = await connectStore(join(dir, "store"));
      const model = new ChatOpenAI({ model: "gpt-4o", apiKey: "k", configuration: { baseURL: fake.url }, maxRetries: 0, maxTokens: 2_000 });
      const bound = model.bindTools([lookupTool]);
      const events: CompactionEvent[] = [];
      const long = createLangChainAdapter({ engine: adapterEngine(fake, { window: 16_000, events }), fixedTokens: 300 });
      let messages: BaseMessage[] = [new SystemMessage("You are a careful agent."), new HumanMessage("Read every data file.")];
      for (let i = 0; i < STEPS + 5; i++) {
        let lethe = long;
        if (restored) {
          // The graph's state as a checkpointer restores it: new message objects, every step.
          messages = mapStoredMessagesToChatMessages(JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(messages))));
          const engine = createEngine({ contextWindow: 16_000, maxOutputTokens: 2_000, summarizer: { client: (await import("../../src/model/openai.ts")).createOpenAIClient({ baseURL: fake.url, apiKey: "k" }), model: "gpt-4o" }, store, conversationId: "thread-1" });
          lethe = createLangChainAdapter({ engine, fixedTokens: 300 });
        }
        const reply = (await lethe.invoke(bound as never, messages)) as AIMessage;
        messages.push(reply);
        if (!reply.tool_calls?.length) break;
        for (const c of reply.tool_calls) messages.push(new ToolMessage({ content: bigOutput(String(c.args.command), 700), tool_call_id: c.id! }));
      }
      assert.equal(fake.served!.length, fake.requests.length, "no request was refused");
      assert.ok(fake.requests.every((b) => openaiInputTokens(b) <= 16_000));
      assert.equal(messages.at(-1)!.content, `done after ${STEPS} steps`);
      return fake.requests.filter(isSummary).length;
    } finally {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const long = await run(false);
  const restored = await run(true);
  assert.ok(long >= 2, `the scenario summarises (${long})`);
  assert.ok(restored <= long, `${restored} summaries restored every step, ${long} with one adapter`);
});

test("LangChain: fixedTokens is measured from the leading system messages and the tools the model is bound to (within 25% of the server's count)", async () => {
  const fake = await startFakeOpenAI({ script: [{ text: "ok" }] });
  try {
    const tools = Array.from({ length: 5 }, (_, i) => ({ type: "function" as const, function: { name: `tool_${i}`, description: `Tool ${i} reads one file and reports its lines. `.repeat(3), parameters: { type: "object", properties: { path: { type: "string", description: "the file" } }, required: ["path"] } } }));
    const model = new ChatOpenAI({ model: "gpt-4o", apiKey: "k", configuration: { baseURL: fake.url }, maxRetries: 0 }).bindTools(tools);
    const lethe = createLangChainAdapter({ engine: createEngine({ contextWindow: 16_000, maxOutputTokens: 2_000 }) });
    await lethe.invoke(model, [new SystemMessage("You are a careful agent. ".repeat(50)), new HumanMessage("hi")]);
    const body = fake.requests[0];
    const server = openaiInputTokens(body) - openaiInputTokens({ ...body, tools: undefined, messages: body.messages.filter((m: { role: string }) => m.role !== "system") });
    assert.ok(server > 400, `sizeable (${server})`);
    assert.ok(Math.abs(lethe.fixedTokens - server) <= 0.25 * server, `measured ${lethe.fixedTokens}, the server counts ${server}`);
  } finally {
    await fake.close();
  }
});
