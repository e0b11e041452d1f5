// lethe/openai on the Responses API: a hand-written loop on `new OpenAI().responses.create`
// through createResponsesAdapter, against the fake Responses server. Every step is a reasoning
// item and a function call; the server checks every item sent back as the real API does.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { createResponsesAdapter } from "../../src/adapters/openai.ts";
import type { CompactionEvent } from "../../src/compaction/types.ts";
import { createEngine } from "../../src/engine/index.ts";
import { LetheInputError } from "../../src/messages/input.ts";
import { createOpenAIResponsesClient } from "../../src/model/openai-responses.ts";
import { RESPONSES_TOO_LONG, responsesInputTokens, startFakeResponses, type ResponsesFakeServer } from "../support/fakes/responses.ts";
import { bigOutput, SUMMARY_TEXT } from "../support/e2e.ts";

const STEPS = 45;
const WINDOW = 16_000;
const isSummary = (body: any) => /is about to be compacted/.test(JSON.stringify(body.input?.at(-1) ?? ""));
/** The step read from the request (a refused request is played again after compaction). */
const script = (body: any) => {
  if (isSummary(body)) return { text: SUMMARY_TEXT };
  const n = Number(/data\/file(\d+)\.txt/.exec(JSON.stringify(body.input.at(-1)))?.[1] ?? 0) + 1;
  if (n > STEPS) return { thinking: "Every file is read.", text: `done after ${STEPS} steps` };
  return { thinking: `Step ${n}: file ${n - 1} is read, file ${n} is next.`, toolUses: [{ name: "lookup", input: { command: `cat data/file${n}.txt` } }] };
};
const lookup: OpenAI.Responses.FunctionTool = { type: "function", name: "lookup", description: "Look a file up.", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] }, strict: false };

function setup(fake: ResponsesFakeServer, events: CompactionEvent[]) {
  const engine = createEngine({
    contextWindow: WINDOW,
    maxOutputTokens: 1_000,
    summarizer: { client: createOpenAIResponsesClient({ baseURL: fake.url, apiKey: "k" }), model: "gpt-5" },
    onEvent: (e) => events.push(e),
  });
  return { lethe: createResponsesAdapter({ engine }), client: new OpenAI({ baseURL: fake.url, apiKey: "k", maxRetries: 0 }) };
}

/** One step's function calls answered: the output items pushed, then the results. */
function answer(input: any[], output: any[], ran: string[]): boolean {
  input.push(...output);
  const calls = output.filter((i) => i.type === "function_call");
  for (const c of calls) {
    const command = JSON.parse(c.arguments).command;
    ran.push(command);
    input.push({ type: "function_call_output", call_id: c.call_id, output: bigOutput(command, 700) });
  }
  return calls.length > 0;
}

function checkRun(fake: ResponsesFakeServer, ran: string[], events: CompactionEvent[], window: number) {
  assert.deepEqual(ran, Array.from({ length: STEPS }, (_, i) => `cat data/file${i + 1}.txt`), "every step once, in order");
  assert.ok(events.filter((e) => e.kind === "summarize").length >= 2, events.map((e) => e.kind).join());
  const refused = fake.itemErrors.filter((e) => e.message === RESPONSES_TOO_LONG);
  assert.ok(refused.filter((e) => !isSummary(fake.requests[e.index])).length <= (window < WINDOW ? 1 : 0), `${refused.length} refused`);
  assert.ok(refused.length <= (window < WINDOW ? 2 : 0), "a summary request made while recovering may be refused once too");
  assert.deepEqual(fake.itemErrors.filter((e) => e.message !== RESPONSES_TOO_LONG), [], "no item the real API would refuse");
  assert.ok(Math.max(...fake.served!) <= window);
  assert.deepEqual(fake.stored, []);
  let carried = 0;
  for (const body of fake.requests) {
    assert.equal(body.store, false);
    const calls = new Set<string>();
    for (const item of body.input) {
      if (item.type === "reasoning") {
        carried++;
        assert.equal(JSON.stringify(item), JSON.stringify(fake.book.emitted.get(item.id)?.item), "byte-identical to what the server emitted");
      }
      if (item.type === "function_call") calls.add(item.call_id);
      if (item.type === "function_call_output") assert.ok(calls.has(item.call_id), `output ${item.call_id} paired`);
    }
  }
  assert.ok(carried > STEPS, `${carried} reasoning items carried back`);
}

/** One step through lethe: the response's output items and its text. */
async function step(lethe: ReturnType<typeof createResponsesAdapter>, client: OpenAI, input: any[], streamed: boolean): Promise<{ output: any[]; text: string }> {
  const params = { model: "gpt-5", instructions: "You are a careful agent.", input, tools: [lookup], max_output_tokens: 1_000 };
  if (!streamed) {
    const response = await lethe.create(client, params);
    return { output: response.output, text: response.output_text };
  }
  let final: OpenAI.Responses.Response | undefined;
  let text = "";
  for await (const event of lethe.stream(client, params)) {
    if (event.type === "response.output_text.delta") text += event.delta;
    if (event.type === "response.completed") final = event.response;
  }
  assert.ok(final, "a completed response");
  return { output: final.output, text };
}

const RUNS = [
  { streamed: false, window: WINDOW, overflow: "status" },
  { streamed: true, window: WINDOW, overflow: "status" },
  { streamed: true, window: 13_000, overflow: "response.failed" },
] as const;

for (const { streamed, window, overflow } of RUNS) {
  const how = streamed ? "lethe.stream (the SDK's events; the final response observed)" : "lethe.create";
  const server = window === WINDOW ? `a ${window / 1000}k server` : `a ${window / 1000}k server that refuses in the stream (response.failed), lethe told ${WINDOW / 1000}k`;
  test(`new OpenAI().responses.create through ${how}: ${STEPS} steps of reasoning + a function call on ${server}; compacted, every request under the window, every reasoning item byte-identical, every output paired, store: false`, async () => {
    const fake = await startFakeResponses({ script, contextWindow: window, overflow });
    try {
      const events: CompactionEvent[] = [];
      const { lethe, client } = setup(fake, events);
      const input: any[] = [{ role: "user", content: "Read every data file." }];
      const ran: string[] = [];
      let text = "";
      for (let i = 0; i < STEPS + 5; i++) {
        const reply = await step(lethe, client, input, streamed);
        if (!answer(input, reply.output, ran)) {
          text = reply.text;
          break;
        }
      }
      assert.equal(text, `done after ${STEPS} steps`);
      checkRun(fake, ran, events, window);
      const main = fake.requests.filter((b) => !isSummary(b));
      assert.ok(main.every((b) => b.stream === streamed && b.include?.[0] === "reasoning.encrypted_content"));
    } finally {
      await fake.close();
    }
  });
}

for (const overflow of ["status", "response.failed", "error"] as const) {
  test(`a request the server refuses as too long (${overflow}): compacted and sent again once; the stream shows no sign of the refusal`, async () => {
    const fake = await startFakeResponses({ contextWindow: 6_000, overflow, script: [{ thinking: "Short.", text: "fits now" }] });
    try {
      // Snip waits for half the threshold here, so that the first request (~9k tokens) goes out too long for the server's real 6k.
      const engine = createEngine({ contextWindow: 40_000, maxOutputTokens: 1_000, summarizerMode: "digest", config: { snip: { minThresholdShare: 0.5 } } });
      const lethe = createResponsesAdapter({ engine });
      const client = new OpenAI({ baseURL: fake.url, apiKey: "k", maxRetries: 0 });
      const input: any[] = [{ role: "user", content: "Read the files." }];
      for (let i = 1; i <= 12; i++) {
        input.push({ type: "function_call", call_id: `call_${i}`, name: "lookup", arguments: JSON.stringify({ command: `cat f${i}` }) });
        input.push({ type: "function_call_output", call_id: `call_${i}`, output: bigOutput(`cat f${i}`, 700) });
      }
      const seen: string[] = [];
      for await (const event of lethe.stream(client, { model: "gpt-5", input, tools: [lookup] })) seen.push(event.type);
      assert.equal(fake.requests.length, 2);
      assert.ok(responsesInputTokens(fake.requests[0], fake.book) > 6_000 && fake.served![0]! <= 6_000);
      assert.deepEqual(seen.filter((t) => t === "response.created" || t === "response.failed" || t === "error"), ["response.created"]);
      assert.equal(seen.at(-1), "response.completed");
      // The non-streamed create recovers the same way.
      const again = await startFakeResponses({ contextWindow: 6_000, script: [{ text: "fits now" }] });
      try {
        const other = createResponsesAdapter({ engine: createEngine({ contextWindow: 40_000, maxOutputTokens: 1_000, summarizerMode: "digest", config: { snip: { minThresholdShare: 0.5 } } }) });
        const r = await other.create(new OpenAI({ baseURL: again.url, apiKey: "k", maxRetries: 0 }), { model: "gpt-5", input, tools: [lookup] });
        assert.equal(r.output_text, "fits now");
        assert.equal(again.requests.length, 2);
      } finally {
        await again.close();
      }
    } finally {
      await fake.close();
    }
  });
}

test("previous_response_id is refused in one line; store and include the caller set are kept; encrypted reasoning dropped for a model that refuses it; fixedTokens is measured from instructions and tools; bad input is one line", async () => {
  const fake = await startFakeResponses({ script: [{ text: "ok" }] });
  try {
    const client = new OpenAI({ baseURL: fake.url, apiKey: "k", maxRetries: 0 });
    const lethe = createResponsesAdapter({ engine: createEngine({ contextWindow: 16_000, maxOutputTokens: 1_000 }) });
    await assert.rejects(lethe.create(client, { model: "gpt-5", input: "hi", previous_response_id: "resp_1" }), (e: Error) => e instanceof LetheInputError && /store: false/.test(e.message) && !e.message.includes("\n"));
    const instructions = "You are a careful agent. ".repeat(40);
    await lethe.create(client, { model: "gpt-5", instructions, input: "hi", tools: [lookup], store: true, include: [] });
    const body = fake.requests[0];
    assert.equal(body.store, true);
    assert.deepEqual(body.include, []);
    const fixed = responsesInputTokens({ ...body, input: [] });
    assert.ok(Math.abs(lethe.fixedTokens - fixed) <= 0.25 * fixed, `measured ${lethe.fixedTokens}, the server counts ${fixed}`);
    // A model without reasoning refuses the include lethe adds: sent again without it, and not asked again.
    const plain = await startFakeResponses({ reasoning: false, script: [{ text: "ok" }] });
    try {
      const other = createResponsesAdapter({ engine: createEngine({ contextWindow: 16_000, maxOutputTokens: 1_000 }) });
      const plainClient = new OpenAI({ baseURL: plain.url, apiKey: "k", maxRetries: 0 });
      await other.create(plainClient, { model: "house-model", input: "a" });
      await other.create(plainClient, { model: "house-model", input: [{ role: "user", content: "a" }, { role: "assistant", content: "ok" }, { role: "user", content: "b" }] });
      assert.deepEqual(plain.requests.map((b) => b.include ?? null), [["reasoning.encrypted_content"], null, null]);
    } finally {
      await plain.close();
    }
    for (const bad of [null, 5, [null], [{ role: "user", content: "x" }, { role: "system", content: "late" }]]) {
      const fresh = createResponsesAdapter({ engine: createEngine({ contextWindow: 16_000, maxOutputTokens: 1_000 }) });
      await assert.rejects(fresh.compact(bad as never), (e: Error) => e instanceof LetheInputError && !e.message.includes("\n"), JSON.stringify(bad));
    }
  } finally {
    await fake.close();
  }
});
