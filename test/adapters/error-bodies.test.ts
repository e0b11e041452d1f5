// Issue 24 (3): vLLM-style context errors (a top-level {"object":"error", message} body) through
// third-party clients. The openai SDK reads only `error`, so without help the refusal is "400
// status code (no body)" and nothing recovers; withErrorBodies() (from lethe) keeps the body where
// the SDK reads it. 45-step loops, lethe told 16k, the server really 10k (so that it refuses: lethe compacts at 13k).
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { HumanMessage, SystemMessage, ToolMessage, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { createEngine, toModelError, withErrorBodies } from "../../src/index.ts";
import { createOpenAIAdapter } from "../../src/adapters/openai.ts";
import { createLangChainAdapter } from "../../src/adapters/langchain.ts";
import { validate } from "../../src/messages/invariants.ts";
import { fromOpenAI } from "../../src/messages/openai.ts";
import { openaiInputTokens, startFakeOpenAI } from "../support/fakes/openai.ts";
import { bigOutput } from "../support/e2e.ts";
import { isSummary } from "../support/adapters.ts";
import { SUMMARY_TEXT } from "../support/e2e.ts";

const STEPS = 45;
/** The step read from the request (the fake plays its script for a request it then refuses too). */
const script = () => (body: any) => {
  if (isSummary(body)) return { text: SUMMARY_TEXT };
  const n = Number(/data\/file(\d+)\.txt/.exec(JSON.stringify(body.messages.at(-1)))?.[1] ?? 0) + 1;
  return n > STEPS ? { text: `done after ${STEPS} steps` } : { toolUses: [{ name: "lookup", input: { command: `cat data/file${n}.txt` } }] };
};
const engine = () => createEngine({ contextWindow: 16_000, maxOutputTokens: 1_000, summarizerMode: "digest" });
const lookup: OpenAI.Chat.ChatCompletionTool = { type: "function", function: { name: "lookup", description: "Look a file up.", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } } };

async function openaiLoop(client: OpenAI): Promise<string> {
  const lethe = createOpenAIAdapter({ engine: engine() });
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "system", content: "You are a careful agent." }, { role: "user", content: "Read every data file." }];
  for (;;) {
    const completion = await lethe.create(client, { model: "gpt-4o", messages, tools: [lookup], max_tokens: 1_000 });
    const reply = completion.choices[0]!.message;
    messages.push(reply);
    if (!reply.tool_calls?.length) return reply.content ?? "";
    for (const call of reply.tool_calls) if (call.type === "function") messages.push({ role: "tool", tool_call_id: call.id, content: bigOutput(JSON.parse(call.function.arguments).command, 500) });
  }
}

async function langchainLoop(model: ChatOpenAI): Promise<string> {
  const lethe = createLangChainAdapter({ engine: engine() });
  const bound = model.bindTools([lookup]);
  const messages: BaseMessage[] = [new SystemMessage("You are a careful agent."), new HumanMessage("Read every data file.")];
  for (;;) {
    const reply: AIMessage = await lethe.invoke(bound, messages);
    messages.push(reply);
    if (!reply.tool_calls?.length) return String(reply.content);
    for (const call of reply.tool_calls) messages.push(new ToolMessage({ content: bigOutput(String(call.args.command), 500), tool_call_id: call.id! }));
  }
}

function checkRun(fake: { requests: any[]; served?: number[] }) {
  const refused = fake.requests.length - fake.served!.length;
  assert.equal(refused, 1, "one refusal: lethe learns the server's limit from it");
  for (const body of fake.requests.filter((b) => !isSummary(b))) assert.deepEqual(validate(fromOpenAI(body.messages).messages).filter((v) => v.kind !== "empty_content"), []);
  assert.equal(fake.requests.filter((b) => openaiInputTokens(b) + Number(b.max_tokens ?? b.max_completion_tokens ?? 0) > 10_000).length, refused);
}

test("a plain new OpenAI() on vLLM (told 16k, 10k real): with withErrorBodies() the top-level error body is read, the refusal recovered, 45 steps done; without it, '400 status code (no body)' ends the loop", async () => {
  const fake = await startFakeOpenAI({ script: script(), contextWindow: 10_000, flavor: "vllm" });
  try {
    const answer = await openaiLoop(new OpenAI({ baseURL: fake.url, apiKey: "k", maxRetries: 0, fetch: withErrorBodies() }));
    assert.equal(answer, `done after ${STEPS} steps`);
    checkRun(fake);
  } finally {
    await fake.close();
  }
  const bare = await startFakeOpenAI({ script: script(), contextWindow: 10_000, flavor: "vllm" });
  try {
    await assert.rejects(openaiLoop(new OpenAI({ baseURL: bare.url, apiKey: "k", maxRetries: 0 })), (e) => toModelError(e).kind === "invalid_request" && /no body/.test(String((e as Error).message)));
  } finally {
    await bare.close();
  }
});

test("ChatOpenAI on vLLM (told 16k, 10k real) with configuration.fetch = withErrorBodies(): the refusal recovered, 45 steps done", async () => {
  const fake = await startFakeOpenAI({ script: script(), contextWindow: 10_000, flavor: "vllm" });
  try {
    const answer = await langchainLoop(new ChatOpenAI({ model: "gpt-4o", apiKey: "k", maxRetries: 0, maxTokens: 1_000, configuration: { baseURL: fake.url, fetch: withErrorBodies() } }));
    assert.equal(answer, `done after ${STEPS} steps`);
    checkRun(fake);
  } finally {
    await fake.close();
  }
});
