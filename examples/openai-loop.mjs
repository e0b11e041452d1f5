// A hand-written loop on the `openai` package's Chat Completions, with lethe managing the context.
//   LETHE_BASE_URL=http://localhost:8000/v1 node examples/openai-loop.mjs
import OpenAI from "openai";
import { createEngine } from "lethe";
import { createOpenAIClient } from "lethe/clients";
import { createOpenAIAdapter } from "lethe/openai";

const baseURL = process.env.LETHE_BASE_URL ?? "http://localhost:8000/v1";
const apiKey = process.env.OPENAI_API_KEY ?? "none";

const engine = createEngine({
  contextWindow: 16_000,
  maxOutputTokens: 2_000,
  summarizer: { client: createOpenAIClient({ baseURL, apiKey }), model: "gpt-4o" },
  onEvent: (e) => {
    if (e.kind === "summarize") console.log(`compacted: ${e.tokensBefore} → ${e.tokensAfter} tokens`);
    if (e.kind === "snip") console.log(`snipped: ${e.removedMessages} messages, ${e.freedTokens} tokens`);
  },
});
const lethe = createOpenAIAdapter({ engine });
const client = new OpenAI({ baseURL, apiKey });
const tools = [{ type: "function", function: { name: "lookup", description: "Look a file up.", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } } }];

const messages = [{ role: "system", content: "You are a careful agent." }, { role: "user", content: "Read every data file." }];
for (let turn = 0; turn < 100; turn++) {
  const completion = await lethe.create(client, { model: "gpt-4o", messages, tools, max_tokens: 2_000 });
  const reply = completion.choices[0].message;
  messages.push(reply);
  if (!reply.tool_calls?.length) {
    console.log(`answer: ${reply.content}`);
    break;
  }
  for (const call of reply.tool_calls) {
    const { command } = JSON.parse(call.function.arguments);
    messages.push({ role: "tool", tool_call_id: call.id, content: Array.from({ length: 80 }, (_, i) => `${command} row ${i}: value=${(i * 7919) % 10007}`).join("\n") });
  }
}
