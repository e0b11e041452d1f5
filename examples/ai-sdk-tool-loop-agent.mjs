// ai@6's ToolLoopAgent with lethe: lethe.agent(settings) composes lethe's hooks with the agent's
// own and guards the model (the reactive path inside each step).
//   LETHE_BASE_URL=http://localhost:8000/v1 node examples/ai-sdk-tool-loop-agent.mjs
import { ToolLoopAgent, stepCountIs, tool } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { z } from "zod";
import { createEngine } from "lethe";
import { createOpenAIClient } from "lethe/clients";
import { createAISDKAdapter } from "lethe/ai-sdk";

const baseURL = process.env.LETHE_BASE_URL ?? "http://localhost:8000/v1";
const apiKey = process.env.OPENAI_API_KEY ?? "none";

const engine = createEngine({
  contextWindow: 16_000,
  maxOutputTokens: 2_000,
  summarizer: { client: createOpenAIClient({ baseURL, apiKey }), model: "gpt-4o" },
  onEvent: (e) => {
    if (e.kind === "summarize" || e.kind === "reactive") console.log(`compacted: ${e.tokensBefore} → ${e.tokensAfter} tokens`);
    if (e.kind === "snip") console.log(`snipped: ${e.removedMessages} messages, ${e.freedTokens} tokens`);
  },
});
const lethe = createAISDKAdapter({ engine });
const provider = createOpenAICompatible({ name: "local", baseURL, apiKey });

const agent = new ToolLoopAgent(
  lethe.agent({
    model: provider.chatModel("gpt-4o"),
    instructions: "You are a careful agent.",
    tools: {
      lookup: tool({
        description: "Look a file up.",
        inputSchema: z.object({ command: z.string() }),
        execute: async ({ command }) => Array.from({ length: 80 }, (_, i) => `${command} row ${i}: value=${(i * 7919) % 10007}`).join("\n"),
      }),
    },
    stopWhen: stepCountIs(100),
    maxRetries: 0,
  }),
);
const result = await lethe.generate((options) => agent.generate(options), { prompt: "Read every data file." });
console.log(`answer: ${result.text}`);
