// streamText (ai@6) with lethe: lethe.stream composes lethe's prepareStep with your own and puts
// the reactive path inside each step, so a step the server refuses as too long is compacted and
// sent again without the stream ever showing the refusal.
//   LETHE_BASE_URL=http://localhost:8000/v1 node examples/ai-sdk-stream.mjs
import { stepCountIs, streamText, tool } from "ai";
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
const provider = createOpenAICompatible({ name: "local", baseURL, apiKey, includeUsage: true });

let mine = 0;
const result = lethe.stream(streamText, {
  model: provider.chatModel("gpt-4o"),
  system: "You are a careful agent.",
  prompt: "Read every data file.",
  tools: {
    lookup: tool({
      description: "Look a file up.",
      inputSchema: z.object({ command: z.string() }),
      execute: async ({ command }) => Array.from({ length: 80 }, (_, i) => `${command} row ${i}: value=${(i * 7919) % 10007}`).join("\n"),
    }),
  },
  stopWhen: stepCountIs(100),
  maxRetries: 0,
  // Your own prepareStep keeps working: lethe's runs first, then this one, given lethe's messages.
  prepareStep: () => void mine++,
});
let text = "";
for await (const part of result.fullStream) {
  if (part.type === "text-delta") text += part.text;
  if (part.type === "error") console.log(`error part: ${part.error}`);
}
console.log(`answer: ${text}`);
console.log(`your prepareStep ran ${mine} times`);
