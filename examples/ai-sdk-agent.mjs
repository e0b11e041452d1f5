// A Vercel AI SDK agent (ai@6) whose context lethe manages: prepareStep / onStepFinish via
// lethe.generate, a transcript, snips and summaries as the context fills.
//   LETHE_BASE_URL=http://localhost:8000/v1 node examples/ai-sdk-agent.mjs
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateText, stepCountIs, tool } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { z } from "zod";
import { createEngine, openTranscript } from "lethe";
import { createOpenAIClient } from "lethe/clients";
import { createAISDKAdapter } from "lethe/ai-sdk";

const baseURL = process.env.LETHE_BASE_URL ?? "http://localhost:8000/v1";
const apiKey = process.env.OPENAI_API_KEY ?? "none";
const dir = process.env.LETHE_SESSION_DIR ?? mkdtempSync(join(tmpdir(), "lethe-example-"));

const transcript = openTranscript(join(dir, "transcript.jsonl"), { header: { id: "ai-sdk-example", cwd: process.cwd() } });
const engine = createEngine({
  contextWindow: 16_000,
  maxOutputTokens: 2_000,
  sessionDir: dir,
  transcript,
  transcriptHoldsHistory: true,
  summarizer: { client: createOpenAIClient({ baseURL, apiKey }), model: "gpt-4o" },
  onEvent: (e) => {
    if (e.kind === "summarize") console.log(`compacted: ${e.tokensBefore} → ${e.tokensAfter} tokens`);
    if (e.kind === "snip") console.log(`snipped: ${e.removedMessages} messages, ${e.freedTokens} tokens`);
  },
});
const lethe = createAISDKAdapter({ engine, transcript });
const provider = createOpenAICompatible({ name: "local", baseURL, apiKey });

const result = await lethe.generate(generateText, {
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
});
transcript.close();
console.log(`answer: ${result.text}`);
