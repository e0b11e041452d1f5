// lethe as langchain v1 agent middleware: the real `langchain` createAgent with the real
// ChatOpenAI and tools from @langchain/core, and LangGraph's MemorySaver, against the local fake
// OpenAI server that counts with o200k and refuses over its limit with a real error body.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createAgent } from "langchain";
import { MemorySaver } from "@langchain/langgraph";
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { z } from "zod";
import { createLetheMiddleware } from "../../src/adapters/langchain.ts";
import type { CompactionEvent } from "../../src/compaction/types.ts";
import { validate } from "../../src/messages/invariants.ts";
import { fromOpenAI } from "../../src/messages/openai.ts";
import { openaiInputTokens, startFakeOpenAI } from "../support/fakes/openai.ts";
import { bigOutput } from "../support/e2e.ts";
import { isSummary } from "../support/adapters.ts";
import { SUMMARY_TEXT } from "../support/e2e.ts";

const STEPS = 45;
const SERVER = 12_000;

/**
 * STEPS bash calls, then the answer; then the follow-up question is answered without tools. The
 * step is read from the request (the file the newest result is of), not counted: the fake plays
 * its script for a request it then refuses too.
 */
function script() {
  return (body: any) => {
    if (isSummary(body)) return { text: SUMMARY_TEXT };
    const last = JSON.stringify(body.messages.at(-1));
    if (/What was the last file/.test(last)) return { text: `the last file was data/file${STEPS}.txt` };
    const n = Number(/data\/file(\d+)\.txt/.exec(last)?.[1] ?? 0) + 1;
    if (n > STEPS) return { text: `done after ${STEPS} steps` };
    return { toolUses: [{ name: "bash", input: { command: `cat data/file${n}.txt` } }] };
  };
}

const ran: string[] = [];
const bash = tool(async ({ command }: { command: string }) => (ran.push(command), bigOutput(command, 700)), { name: "bash", description: "Run a shell command.", schema: z.object({ command: z.string() }) });

test(`createAgent + createLetheMiddleware: a ${STEPS}-step tool session, lethe told 16k on a 12k server: every step done, at most one refused request, none invalid; resumed from a MemorySaver checkpoint by a fresh middleware with no extra summary`, async () => {
  const fake = await startFakeOpenAI({ script: script(), contextWindow: SERVER });
  try {
    const events: CompactionEvent[] = [];
    const model = new ChatOpenAI({ model: "gpt-4o", apiKey: "k", configuration: { baseURL: fake.url }, maxRetries: 0, maxTokens: 1_000 });
    const checkpointer = new MemorySaver();
    const make = () =>
      createAgent({
        model,
        tools: [bash],
        systemPrompt: "You are a careful agent.",
        checkpointer,
        // micro off: it would keep this session under the 12k server's limit, and the test is about recovering from its refusal.
        middleware: [createLetheMiddleware({ contextWindow: 16_000, maxOutputTokens: 1_000, config: { micro: { enabled: false } }, onEvent: (e) => events.push(e) })],
      });
    const config = { configurable: { thread_id: "thread-1" }, recursionLimit: 4 * STEPS };
    const result = await make().invoke({ messages: [new HumanMessage("Read every data file.")] }, config);
    assert.equal(String(result.messages.at(-1)!.content), `done after ${STEPS} steps`);
    const refused = fake.requests.length - fake.served!.length;
    assert.ok(refused <= 1, `${refused} requests refused`);
    for (const body of fake.requests) {
      if (isSummary(body)) continue;
      assert.deepEqual(validate(fromOpenAI(body.messages).messages).filter((v) => v.kind !== "empty_content"), [], "pairing and alternation");
    }
    assert.equal(fake.requests.filter((b) => openaiInputTokens(b) > SERVER).length, refused, "the only requests over the server's limit are the refused one");
    assert.ok(events.some((e) => e.kind === "reactive") && events.some((e) => e.kind === "window_learned"), "the refusal was recovered from, and the server's limit learned");
    assert.deepEqual(ran, Array.from({ length: STEPS }, (_, i) => `cat data/file${i + 1}.txt`), "every step's tool ran, once, in order");
    const summaries = events.filter((e) => e.kind === "summarize" || e.kind === "reactive").length;
    assert.ok(summaries >= 1, "the session was compacted");
    assert.ok(result.messages.length < 2 * STEPS, `the agent's state holds lethe's history (${result.messages.length} messages), not every step`);

    // A fresh middleware (as in a new process) on the checkpointed thread: it goes on from the compacted state.
    const before = fake.requests.length;
    const summariesBefore = fake.requests.filter(isSummary).length;
    const again = await make().invoke({ messages: [new HumanMessage("What was the last file?")] }, config);
    assert.match(String(again.messages.at(-1)!.content), new RegExp(`data/file${STEPS}\\.txt`));
    assert.equal(fake.requests.filter(isSummary).length, summariesBefore, "no second summary");
    const resumed = fake.requests.slice(before).filter((b) => !isSummary(b));
    assert.equal(resumed.length, 1);
    assert.ok(openaiInputTokens(resumed[0]) <= SERVER);
    assert.equal(fake.served!.length, fake.requests.length - refused, "the resumed request was not refused");
  } finally {
    await fake.close();
  }
});

test("createLetheMiddleware with a PostgreSQL store: each thread a conversation with every message recorded once; resumed from the checkpoint by a fresh middleware (a new process's engines) with no second summary", async () => {
  const { startPostgres } = await import("../../scripts/pg-cluster.ts");
  const { createPostgresStore } = await import("../../src/store/postgres.ts");
  const cluster = await startPostgres();
  const fake = await startFakeOpenAI({ script: script(), contextWindow: SERVER });
  const stores: Awaited<ReturnType<typeof createPostgresStore>>[] = [];
  try {
    ran.length = 0;
    const model = new ChatOpenAI({ model: "gpt-4o", apiKey: "k", configuration: { baseURL: fake.url }, maxRetries: 0, maxTokens: 1_000 });
    const checkpointer = new MemorySaver();
    const make = async () => {
      const store = await createPostgresStore(cluster.url);
      stores.push(store);
      return createAgent({ model, tools: [bash], systemPrompt: "You are a careful agent.", checkpointer, middleware: [createLetheMiddleware({ contextWindow: 16_000, maxOutputTokens: 1_000, config: { micro: { enabled: false } }, store })] });
    };
    const config = { configurable: { thread_id: "pg-thread" }, recursionLimit: 4 * STEPS };
    const result = await (await make()).invoke({ messages: [new HumanMessage("Read every data file.")] }, config);
    assert.equal(String(result.messages.at(-1)!.content), `done after ${STEPS} steps`);
    const summaries = fake.requests.filter(isSummary).length;
    assert.ok(summaries >= 1, "compacted");
    const again = await (await make()).invoke({ messages: [new HumanMessage("What was the last file?")] }, config);
    assert.match(String(again.messages.at(-1)!.content), /file45/);
    assert.equal(fake.requests.filter(isSummary).length, summaries, "no second summary");
    const c = await stores[0]!.conversation("pg-thread");
    const lines = await c.lines();
    const messages = lines.filter((l) => l.type === "message") as unknown as { seq: number; message: { role: string; content: unknown } }[];
    assert.deepEqual(messages.map((m) => m.seq), messages.map((_, i) => i), "each message once, in order");
    // The prompt, 45 calls and results, the answer, the question (the last answer is recorded with the next call).
    assert.equal(messages.length, 1 + 2 * STEPS + 1 + 1);
    assert.match(JSON.stringify(messages.at(-1)!.message), /What was the last file/);
    assert.ok(lines.some((l) => l.type === "boundary"), "boundaries recorded");
    assert.ok((await c.state()) !== null, "lethe's state is stored");
  } finally {
    await Promise.all(stores.map((s) => s.close()));
    await fake.close();
    await cluster.stop();
  }
});
