// A LangChain.js agent loop (ChatOpenAI with a tool) whose context lethe manages.
//   LETHE_BASE_URL=http://localhost:8000/v1 node examples/langchain-agent.mjs
import { HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { createEngine } from "lethe";
import { createOpenAIClient } from "lethe/clients";
import { createLangChainAdapter } from "lethe/langchain";

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
const lethe = createLangChainAdapter({ engine });
const lookup = { type: "function", function: { name: "lookup", description: "Look a file up.", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } } };
const model = new ChatOpenAI({ model: "gpt-4o", apiKey, configuration: { baseURL }, maxTokens: 2_000 }).bindTools([lookup]);

const messages = [new SystemMessage("You are a careful agent."), new HumanMessage("Read every data file.")];
for (let turn = 0; turn < 100; turn++) {
  const reply = await lethe.invoke(model, messages);
  messages.push(reply);
  if (!reply.tool_calls?.length) {
    console.log(`answer: ${reply.content}`);
    break;
  }
  for (const call of reply.tool_calls) {
    const out = Array.from({ length: 80 }, (_, i) => `${call.args.command} row ${i}: value=${(i * 7919) % 10007}`).join("\n");
    messages.push(new ToolMessage({ content: out, tool_call_id: call.id }));
  }
}
