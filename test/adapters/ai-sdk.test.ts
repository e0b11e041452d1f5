// lethe inside the Vercel AI SDK: the real `ai` package (6.x, and 5.x under the alias ai-v5) with
// the real OpenAI-compatible provider, against the local fake OpenAI server at a 16k window.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ai6 from "ai";
import * as ai5 from "ai-v5";
import { createOpenAICompatible as compat6 } from "@ai-sdk/openai-compatible";
import { createOpenAICompatible as compat5 } from "@ai-sdk/openai-compatible-v1";
import { z } from "zod";
import { createAISDKAdapter, fromModelMessages, toModelMessages, type AIModelMessage } from "../../src/adapters/ai-sdk.ts";
import type { CompactionEvent } from "../../src/compaction/types.ts";
import { createEngine } from "../../src/engine/index.ts";
import { validate } from "../../src/messages/invariants.ts";
import { fromOpenAI } from "../../src/messages/openai.ts";
import { LetheInputError } from "../../src/messages/input.ts";
import { loadTranscript, messageEntries, openTranscript } from "../../src/session/transcript.ts";
import { openaiInputTokens, startFakeOpenAI } from "../support/fakes/openai.ts";
import { bigOutput } from "../support/e2e.ts";
import { adapterEngine, isSummary, STEPS, stepScript } from "../support/adapters.ts";
import { createOpenAIClient } from "../../src/model/openai.ts";

const WINDOW = 16_000;

const versions = [
  { name: "ai@6", ai: ai6 as any, compat: compat6 as any },
  { name: "ai@5", ai: ai5 as any, compat: compat5 as any },
];

for (const v of versions) {
  test(`${v.name}: a ${STEPS}-step tool run at a 16k window crosses the threshold at least twice; every request fits and is valid; the transcript has every message`, async () => {
    // Results micro may not clear, so the context really grows to the threshold.
    const fake = await startFakeOpenAI({ script: stepScript("lookup"), contextWindow: WINDOW });
    const dir = mkdtempSync(join(tmpdir(), "lethe-aisdk-"));
    try {
      const events: CompactionEvent[] = [];
      const transcript = openTranscript(join(dir, "transcript.jsonl"), { header: { id: "aisdk", cwd: dir } });
      const engine = adapterEngine(fake, { window: WINDOW, events, dir, transcript });
      const lethe = createAISDKAdapter({ engine, transcript, fixedTokens: 300 });
      const provider = v.compat({ name: "fake", baseURL: fake.url, apiKey: "k" });
      // The caller's own hooks: lethe composes with them, never drops them.
      const theirs = { prepared: 0, finished: 0, longest: 0 };
      const result: any = await lethe.generate(v.ai.generateText, {
        model: provider.chatModel("gpt-4o"),
        system: "You are a careful agent.",
        prepareStep: ({ messages, stepNumber }: { messages: unknown[]; stepNumber: number }) => {
          assert.equal(stepNumber, theirs.prepared, "called on every step, in order");
          theirs.prepared++;
          theirs.longest = Math.max(theirs.longest, messages.length);
          return { system: `You are a careful agent. Step ${stepNumber}.` };
        },
        onStepFinish: () => void theirs.finished++,
        prompt: "Read every data file.",
        tools: {
          lookup: v.ai.tool({
            description: "Look a file up.",
            inputSchema: z.object({ command: z.string() }),
            execute: async ({ command }: { command: string }) => bigOutput(command, 700),
          }),
        },
        stopWhen: v.ai.stepCountIs(STEPS + 5),
        maxOutputTokens: 2_000,
      });
      transcript.close();
      assert.equal(result.text, `done after ${STEPS} steps`);
      assert.equal(theirs.prepared, STEPS + 1, "the caller's prepareStep ran on every step");
      assert.equal(theirs.finished, STEPS + 1, "and its onStepFinish");
      assert.ok(theirs.longest < 2 * STEPS, `it was given lethe's compacted messages (at most ${theirs.longest}, not the SDK's ${2 * STEPS + 1})`);
      const steps = fake.requests.filter((b) => !isSummary(b));
      assert.ok(steps.every((b, i) => JSON.stringify(b.messages[0]).includes(`Step ${i}.`)), "what it returned (the system prompt) was sent");
      const summaries = events.filter((e) => e.kind === "summarize");
      assert.ok(summaries.length >= 2, `summaries: ${summaries.length} (${events.map((e) => e.kind).join(",")})`);
      // The server answered every request: none over its window, each a valid history.
      assert.equal(fake.served!.length, fake.requests.length, "no request was refused");
      for (const body of fake.requests) {
        assert.ok(openaiInputTokens(body) <= WINDOW);
        if (isSummary(body)) continue;
        assert.deepEqual(validate(fromOpenAI(body.messages).messages), [], "pairing and alternation");
      }
      // Every message: the prompt, each tool call and its result, the final answer.
      const kept = JSON.stringify(messageEntries(loadTranscript(join(dir, "transcript.jsonl")).entries).map((e) => e.message));
      assert.match(kept, /Read every data file\./);
      const missing = Array.from({ length: STEPS }, (_, i) => i + 1).filter((i) => !kept.includes(`cat data/file${i}.txt row 0:`));
      assert.deepEqual(missing, [], "every step's result");
      assert.match(kept, new RegExp(`done after ${STEPS} steps`));
    } finally {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("ai@6: the reactive path — a server smaller than lethe was told refuses; the adapter compacts and the run goes on once", async () => {
  const fake = await startFakeOpenAI({ script: stepScript("bash"), contextWindow: 12_000 });
  const dir = mkdtempSync(join(tmpdir(), "lethe-aisdk-"));
  try {
    const events: CompactionEvent[] = [];
    const engine = adapterEngine(fake, { window: 40_000, events, dir });
    const lethe = createAISDKAdapter({ engine });
    const provider = compat6({ name: "fake", baseURL: fake.url, apiKey: "k" });
    const result = await lethe.generate(ai6.generateText as any, {
      model: provider.chatModel("gpt-4o"),
      prompt: "Read every data file.",
      tools: { bash: ai6.tool({ description: "Run a shell command.", inputSchema: z.object({ command: z.string() }), execute: async ({ command }) => bigOutput(command, 700) }) },
      stopWhen: ai6.stepCountIs(STEPS + 5),
      maxRetries: 0,
    } as any);
    assert.equal((result as any).text, `done after ${STEPS} steps`);
    assert.ok(events.some((e) => e.kind === "reactive"), events.map((e) => e.kind).join());
    assert.ok(events.some((e) => e.kind === "window_learned"), "the limit in the error became the window");
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("conversion both ways keeps what the SDK carries: reasoning with its signature, json and error outputs, images, PDFs, providerOptions", () => {
  const png = Buffer.from("89504e470d0a1a0a0000000d49484452000000100000000808020000", "hex");
  const messages: AIModelMessage[] = [
    { role: "system", content: "Be brief." },
    { role: "user", content: [{ type: "text", text: "Look", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } }, { type: "image", image: png, mediaType: "image/png" }, { type: "file", data: Buffer.from("%PDF-1.4 x").toString("base64"), mediaType: "application/pdf", filename: "spec.pdf" }] },
    { role: "assistant", content: [{ type: "reasoning", text: "thinking it over", providerOptions: { anthropic: { signature: "sig-123" } } }, { type: "text", text: "Reading." }, { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a" } }, { type: "tool-call", toolCallId: "c2", toolName: "stat", input: {} }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "json", value: { lines: 3 } } }, { type: "tool-result", toolCallId: "c2", toolName: "stat", output: { type: "error-text", value: "ENOENT" } }] },
    { role: "user", content: [{ type: "text", text: "Thanks." }] },
  ];
  const { system, history } = fromModelMessages(messages);
  assert.deepEqual(system, [messages[0]]);
  assert.deepEqual(validate(history), []);
  const thinking = (history[1]!.content as any[])[0];
  assert.equal(thinking.type, "thinking");
  assert.equal(thinking.signature, "sig-123");
  assert.equal((history[2]!.content as any[])[1].is_error, true);
  const back = toModelMessages(history);
  const expected = JSON.parse(JSON.stringify(messages.slice(1)));
  // The image comes back as base64 (the SDK accepts either); everything else exactly.
  (expected[0].content[1] as any).image = png.toString("base64");
  assert.deepEqual(JSON.parse(JSON.stringify(back)), expected);
  // A string content comes back as one text part (the same message to the SDK).
  assert.deepEqual(toModelMessages(fromModelMessages([{ role: "user", content: "hi" }]).history), [{ role: "user", content: [{ type: "text", text: "hi" }] }]);
  // A result a layer rewrote goes back as text.
  (history[2]!.content as any[])[0] = { ...(history[2]!.content as any[])[0], content: "[lethe: old tool result cleared]" };
  assert.deepEqual((toModelMessages(history)[2]!.content as any[])[0].output, { type: "text", value: "[lethe: old tool result cleared]" });
});

test("bad input through the adapter: an unknown message role, a part without a type, a tool result without its call — a one-line error or a repaired history", async () => {
  assert.throws(() => fromModelMessages([{ role: "robot", content: "x" } as any]), (e: Error) => e instanceof LetheInputError && /messages\[0\]\.role/.test(e.message));
  assert.throws(() => fromModelMessages([{ role: "user", content: [{ text: "no type" }] } as any]), LetheInputError);
  assert.throws(() => fromModelMessages(null as any), LetheInputError);
  // An orphan tool result (its call is not in the history): the engine repairs it away.
  const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000 });
  const lethe = createAISDKAdapter({ engine });
  const r = await lethe.prepareStep({
    messages: [
      { role: "user", content: "hi" },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "ghost", toolName: "bash", output: { type: "text", value: "?" } }] },
      { role: "user", content: "go on" },
    ],
  });
  assert.deepEqual(JSON.parse(JSON.stringify(r.messages)), [{ role: "user", content: [{ type: "text", text: "hi" }, { type: "text", text: "go on" }] }]);
});

test("ai@6 streamText: the same hooks (prepareStep, onStepFinish) compact a streamed multi-step run", async () => {
  const fake = await startFakeOpenAI({ script: stepScript("lookup"), contextWindow: WINDOW });
  try {
    const events: CompactionEvent[] = [];
    const engine = adapterEngine(fake, { window: WINDOW, events });
    const lethe = createAISDKAdapter({ engine, fixedTokens: 300 });
    const provider = compat6({ name: "fake", baseURL: fake.url, apiKey: "k", includeUsage: true });
    const r = ai6.streamText({
      model: provider.chatModel("gpt-4o"),
      prompt: "Read every data file.",
      tools: { lookup: ai6.tool({ description: "Look a file up.", inputSchema: z.object({ command: z.string() }), execute: async ({ command }) => bigOutput(command, 700) }) },
      stopWhen: ai6.stepCountIs(STEPS + 5),
      prepareStep: lethe.prepareStep as never,
      onStepFinish: lethe.onStepFinish as never,
    });
    assert.equal(await r.text, `done after ${STEPS} steps`);
    assert.ok(events.filter((e) => e.kind === "summarize").length >= 2);
    assert.equal(fake.served!.length, fake.requests.length, "no request was refused");
    assert.ok(fake.requests.every((b) => openaiInputTokens(b) <= WINDOW));
  } finally {
    await fake.close();
  }
});

test("ai@6 ToolLoopAgent: lethe.agent(settings) composes with the agent's own prepareStep; told 16k on a 12k server, the run recovers once and every step is done", async () => {
  const fake = await startFakeOpenAI({ script: stepScript("bash"), contextWindow: 12_000 });
  const dir = mkdtempSync(join(tmpdir(), "lethe-aisdk-"));
  try {
    const events: CompactionEvent[] = [];
    const engine = adapterEngine(fake, { window: 16_000, events, dir });
    const lethe = createAISDKAdapter({ engine, fixedTokens: 300 });
    const provider = compat6({ name: "fake", baseURL: fake.url, apiKey: "k" });
    let theirs = 0;
    const agent = new ai6.ToolLoopAgent(
      lethe.agent({
        model: provider.chatModel("gpt-4o"),
        instructions: "You are a careful agent.",
        tools: { bash: ai6.tool({ description: "Run a shell command.", inputSchema: z.object({ command: z.string() }), execute: async ({ command }) => bigOutput(command, 700) }) },
        stopWhen: ai6.stepCountIs(STEPS + 5),
        maxRetries: 0,
        prepareStep: () => void theirs++,
      }) as any,
    );
    const result: any = await lethe.generate((o: any) => agent.generate(o), { prompt: "Read every data file." });
    assert.equal(result.text, `done after ${STEPS} steps`);
    assert.ok(theirs >= STEPS / 2, `the agent's own prepareStep ran (${theirs} times)`);
    const refused = fake.requests.length - fake.served!.length;
    assert.ok(refused <= 1, `${refused} requests refused`);
    for (const body of fake.requests.filter((b) => !isSummary(b))) assert.deepEqual(validate(fromOpenAI(body.messages).messages), []);
    assert.equal(refused, events.filter((e) => e.kind === "reactive").length, "a refusal is recovered from by the reactive path");
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("ai@6: fixedTokens is measured from the system prompt and the tool schemas generate is handed (within 25% of the server's own count); an explicit value wins", async () => {
  const fake = await startFakeOpenAI({ script: [{ text: "ok" }] });
  try {
    const provider = compat6({ name: "fake", baseURL: fake.url, apiKey: "k" });
    const system = "You are a careful agent. ".repeat(40);
    const tools = Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [
        `tool_${i}`,
        ai6.tool({ description: `Tool ${i}: does one precise thing with the files it is given. `.repeat(3), inputSchema: z.object({ path: z.string().describe("the file"), lines: z.number().int().optional(), mode: z.enum(["read", "write", "append"]) }), execute: async () => "ok" }),
      ]),
    );
    const lethe = createAISDKAdapter({ engine: createEngine({ contextWindow: 16_000, maxOutputTokens: 2_000 }) });
    await lethe.generate(ai6.generateText as any, { model: provider.chatModel("gpt-4o"), system, prompt: "hi", tools } as any);
    const body = fake.requests[0];
    const server = openaiInputTokens(body) - openaiInputTokens({ ...body, tools: undefined, messages: body.messages.filter((m: any) => m.role !== "system") });
    assert.ok(server > 500, `the fixed part is sizeable (${server})`);
    assert.ok(Math.abs(lethe.fixedTokens - server) <= 0.25 * server, `measured ${lethe.fixedTokens}, the server counts ${server}`);
    const explicit = createAISDKAdapter({ engine: createEngine({ contextWindow: 16_000, maxOutputTokens: 2_000 }), fixedTokens: 123 });
    explicit.hooks({ system, tools } as any);
    assert.equal(explicit.fixedTokens, 123);
  } finally {
    await fake.close();
  }
});

/** A PNG of `w`×`h` px padded with random bytes to ~`bytes` (what the fake's counter reads is the IHDR). */
function screenshot(bytes: number, w = 1280, h = 800): string {
  const head = Buffer.alloc(33);
  head.writeUInt32BE(0x89504e47, 0);
  head.writeUInt32BE(0x0d0a1a0a, 4);
  head.writeUInt32BE(13, 8);
  head.write("IHDR", 12, "latin1");
  head.writeUInt32BE(w, 16);
  head.writeUInt32BE(h, 20);
  const body = Buffer.alloc(bytes - head.length);
  for (let i = 0; i < body.length; i++) body[i] = (i * 2654435761) >>> 24;
  return Buffer.concat([head, body]).toString("base64");
}

for (const v of versions) {
  test(`${v.name}: a 360 KB screenshot tool result every fifth step through @ai-sdk/openai-compatible at 16k: goes to the model as an image, never as base64 text; 45 steps, every request under the window`, async () => {
    const png = screenshot(360_000);
    let n = 0;
    const fake = await startFakeOpenAI({
      contextWindow: WINDOW,
      script: (body: any) => {
        if (isSummary(body)) return { text: "<summary>\n1. Goal — look at the pages.\n</summary>" };
        n++;
        if (n > 45) return { text: "done after 45 steps" };
        return { toolUses: [n % 5 === 0 ? { name: "screenshot", input: { page: `page ${n}` } } : { name: "lookup", input: { command: `cat data/file${n}.txt` } }] };
      },
    });
    const dir = mkdtempSync(join(tmpdir(), "lethe-aisdk-"));
    try {
      const events: CompactionEvent[] = [];
      const lethe = createAISDKAdapter({ engine: adapterEngine(fake, { window: WINDOW, events, dir }) });
      const provider = v.compat({ name: "fake", baseURL: fake.url, apiKey: "k" });
      const content = (page: string) => ({ type: "content", value: [{ type: "text", text: `screenshot of ${page}` }, { type: v.name === "ai@6" ? "image-data" : "media", data: png, mediaType: "image/png" }] });
      const shots = v.ai.tool({
        description: "Take a screenshot of a page.",
        inputSchema: z.object({ page: z.string() }),
        execute: async ({ page }: { page: string }) => ({ page }),
        toModelOutput: v.name === "ai@6" ? ({ output }: { output: { page: string } }) => content(output.page) : (output: { page: string }) => content(output.page),
      });
      const lookup = v.ai.tool({ description: "Look a file up.", inputSchema: z.object({ command: z.string() }), execute: async ({ command }: { command: string }) => bigOutput(command, 200) });
      const result: any = await lethe.generate(v.ai.generateText, { model: provider.chatModel("gpt-4o"), prompt: "Look at every page.", tools: { screenshot: shots, lookup }, stopWhen: v.ai.stepCountIs(60), maxRetries: 0 });
      assert.equal(result.text, "done after 45 steps");
      assert.equal(fake.served!.length, fake.requests.length, "no request was refused");
      for (const body of fake.requests) assert.ok(openaiInputTokens(body) <= WINDOW, `${openaiInputTokens(body)} tokens`);
      const sent = fake.requests.filter((b) => !isSummary(b)).map((b) => JSON.stringify(b.messages));
      assert.ok(sent.every((t) => !t.includes(png.slice(1_000, 1_100)) || t.includes("image_url")), "the image goes as an image");
      assert.ok(sent.some((t) => /"image_url"/.test(t)), "the model saw a screenshot as an image");
      assert.ok(fake.requests.every((b) => b.messages.filter((m: any) => m.role === "tool").every((m: any) => !String(m.content).includes(png.slice(1_000, 1_100)))), "never as base64 text in a tool message");
    } finally {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** 45 lookups, the step read from the request (the fake plays its script for a request it then refuses too), then the answer. */
function readSteps(steps: number) {
  return (body: any) => {
    if (isSummary(body)) return { text: "<summary>\n1. Goal — read every data file.\n</summary>" };
    const n = Number(/data\/file(\d+)\.txt/.exec(JSON.stringify(body.messages.at(-1)))?.[1] ?? 0) + 1;
    return n > steps ? { text: `done after ${steps} steps` } : { toolUses: [{ name: "lookup", input: { command: `cat data/file${n}.txt` } }] };
  };
}

for (const v of versions) {
  test(`${v.name} streamText through lethe.stream, told 16k on a 10k server (lethe's threshold is 12.4k, so it is refused): a refused step is compacted and sent again inside the stream (no error part), 45 steps, the text streamed to the end`, async () => {
    const fake = await startFakeOpenAI({ script: readSteps(45), contextWindow: 10_000 });
    try {
      const events: CompactionEvent[] = [];
      // No background summary: it would race the step to the refusal (two refused requests for one discovery).
      const engine = createEngine({ contextWindow: 16_000, maxOutputTokens: 2_000, config: { summary: { presummaryShare: 0 } }, summarizer: { client: createOpenAIClient({ baseURL: fake.url, apiKey: "k" }), model: "gpt-4o" }, onEvent: (e) => events.push(e) });
      const lethe = createAISDKAdapter({ engine });
      const provider = v.compat({ name: "fake", baseURL: fake.url, apiKey: "k", includeUsage: true });
      const ran: string[] = [];
      const r: any = lethe.stream(v.ai.streamText, {
        model: provider.chatModel("gpt-4o"),
        prompt: "Read every data file.",
        tools: { lookup: v.ai.tool({ description: "Look a file up.", inputSchema: z.object({ command: z.string() }), execute: async ({ command }: { command: string }) => (ran.push(command), bigOutput(command, 700)) }) },
        stopWhen: v.ai.stepCountIs(60),
        maxRetries: 0,
      });
      let text = "";
      const kinds = new Set<string>();
      for await (const part of r.fullStream) {
        kinds.add(part.type);
        if (part.type === "text-delta") text += part.text ?? part.textDelta ?? part.delta ?? "";
      }
      assert.ok(!kinds.has("error"), `no error part (${[...kinds].join(",")})`);
      assert.equal(text, "done after 45 steps");
      assert.deepEqual(ran, Array.from({ length: 45 }, (_, i) => `cat data/file${i + 1}.txt`), "every step, once, in order");
      const refused = fake.requests.length - fake.served!.length;
      assert.ok(refused >= 1 && refused <= 1, `${refused} refused`);
      assert.ok(events.some((e) => e.kind === "reactive") && events.some((e) => e.kind === "window_learned"));
      for (const body of fake.requests.filter((b) => !isSummary(b))) assert.deepEqual(validate(fromOpenAI(body.messages).messages).filter((x) => x.kind !== "empty_content"), []);
    } finally {
      await fake.close();
    }
  });
}
