// A hand-written loop on `@anthropic-ai/sdk`: lethe's messages are Anthropic's, so the engine fits
// as it is — beforeRequest before each call, observe after, recover on a context-length error.
//   ANTHROPIC_BASE_URL=… ANTHROPIC_API_KEY=… node examples/anthropic-loop.mjs
import Anthropic from "@anthropic-ai/sdk";
import { createEngine, toModelError } from "lethe";
import { createAnthropicClient } from "lethe/clients";

const baseURL = process.env.ANTHROPIC_BASE_URL;
const apiKey = process.env.ANTHROPIC_API_KEY ?? "none";
const model = "claude-sonnet-4-6";
const system = "You are a careful agent.";
const tools = [{ name: "lookup", description: "Look a file up.", input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } }];

const engine = createEngine({
  contextWindow: 16_000,
  maxOutputTokens: 2_000,
  summarizer: { client: createAnthropicClient({ baseURL, apiKey }), model },
  onEvent: (e) => {
    if (e.kind === "summarize") console.log(`compacted: ${e.tokensBefore} → ${e.tokensAfter} tokens`);
    if (e.kind === "snip") console.log(`snipped: ${e.removedMessages} messages, ${e.freedTokens} tokens`);
  },
});
const client = new Anthropic({ baseURL, apiKey });

let history = [{ role: "user", content: "Read every data file." }];
for (let turn = 0; turn < 100; turn++) {
  const ready = await engine.beforeRequest(history, { system, tools, fixedTokens: 150 });
  let reply;
  try {
    reply = await client.messages.create({ model, max_tokens: 2_000, system, tools, messages: ready.history });
  } catch (e) {
    const error = toModelError(e);
    if (error.kind !== "prompt_too_long") throw e;
    const again = await engine.recover(ready.history, error);
    reply = await client.messages.create({ model, max_tokens: 2_000, system, tools, messages: again.history });
  }
  engine.observe(ready.history, reply, reply.usage, { fixedTokens: 150 });
  history = [...ready.history, { role: "assistant", content: reply.content }];
  const calls = reply.content.filter((b) => b.type === "tool_use");
  if (calls.length === 0) {
    console.log(`answer: ${reply.content.map((b) => (b.type === "text" ? b.text : "")).join("")}`);
    break;
  }
  history.push({ role: "user", content: calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: Array.from({ length: 80 }, (_, i) => `${c.input.command} row ${i}: value=${(i * 7919) % 10007}`).join("\n") })) });
}
