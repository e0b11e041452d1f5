// A langchain v1 agent (createAgent) whose context lethe manages: createLetheMiddleware where
// summarizationMiddleware would go, a MemorySaver checkpointer, and the thread resumed by a
// fresh agent (as another process would) without a second summary.
//   LETHE_BASE_URL=http://localhost:8000/v1 node examples/langchain-middleware.mjs
import { createAgent } from "langchain";
import { MemorySaver } from "@langchain/langgraph";
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { z } from "zod";
import { createLetheMiddleware } from "lethe/langchain";

const baseURL = process.env.LETHE_BASE_URL ?? "http://localhost:8000/v1";
const apiKey = process.env.OPENAI_API_KEY ?? "none";

const lookup = tool(async ({ command }) => Array.from({ length: 80 }, (_, i) => `${command} row ${i}: value=${(i * 7919) % 10007}`).join("\n"), {
  name: "lookup",
  description: "Look a file up.",
  schema: z.object({ command: z.string() }),
});
const model = new ChatOpenAI({ model: "gpt-4o", apiKey, configuration: { baseURL }, maxTokens: 2_000, maxRetries: 0 });
const checkpointer = new MemorySaver();
let summaries = 0;
const agent = () =>
  createAgent({
    model,
    tools: [lookup],
    systemPrompt: "You are a careful agent.",
    checkpointer,
    middleware: [
      createLetheMiddleware({
        contextWindow: 16_000,
        maxOutputTokens: 2_000,
        onEvent: (e) => {
          if (e.kind === "summarize" || e.kind === "reactive") (summaries++, console.log(`compacted: ${e.tokensBefore} → ${e.tokensAfter} tokens`));
          if (e.kind === "snip") console.log(`snipped: ${e.removedMessages} messages, ${e.freedTokens} tokens`);
        },
      }),
    ],
  });

const thread = { configurable: { thread_id: "example" }, recursionLimit: 500 };
const result = await agent().invoke({ messages: [new HumanMessage("Read every data file.")] }, thread);
console.log(`answer: ${result.messages.at(-1).content}`);
console.log(`state: ${result.messages.length} messages`);
const before = summaries;
const again = await agent().invoke({ messages: [new HumanMessage("Which files did you read?")] }, thread);
console.log(`resumed: ${again.messages.at(-1).content} (summaries while resuming: ${summaries - before})`);
