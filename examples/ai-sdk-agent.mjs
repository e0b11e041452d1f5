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

// A screenshot tool: its image goes to the model as an image, whatever the provider does with a
// tool's content output (a chat-completions provider would send it as base64 text).
const png = Buffer.alloc(360_000);
png.writeUInt32BE(0x89504e47, 0);
png.writeUInt32BE(0x0d0a1a0a, 4);
png.write("IHDR", 12, "latin1");
png.writeUInt32BE(1280, 16);
png.writeUInt32BE(800, 20);
let mine = 0;
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
    screenshot: tool({
      description: "Take a screenshot of a page.",
      inputSchema: z.object({ page: z.string() }),
      execute: async ({ page }) => ({ page }),
      toModelOutput: ({ output }) => ({ type: "content", value: [{ type: "text", text: `screenshot of ${output.page}` }, { type: "image-data", data: png.toString("base64"), mediaType: "image/png" }] }),
    }),
  },
  stopWhen: stepCountIs(100),
  // Your own prepareStep keeps working: lethe's runs first, then this one, given lethe's messages.
  prepareStep: () => void mine++,
});
transcript.close();
console.log(`answer: ${result.text}`);
console.log(`your prepareStep ran ${mine} times`);
