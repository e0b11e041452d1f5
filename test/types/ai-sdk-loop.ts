// docs/library.md's AI SDK example, as strict TypeScript against `ai`'s own types (no casts).
import { generateText, stepCountIs, streamText, tool } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { z } from "zod";
import { createEngine, openTranscript } from "../../src/index.ts";
import { createOpenAIClient } from "../../src/clients.ts";
import { createAISDKAdapter } from "../../src/adapters/ai-sdk.ts";

export async function aiSdkLoop(read: (path: string) => Promise<string>): Promise<string> {
  // ---- docs/library.md: the Vercel AI SDK
  const provider = createOpenAICompatible({ name: "local", baseURL: "http://localhost:8000/v1", apiKey: "none" });
  const transcript = openTranscript("session/transcript.jsonl", { header: { id: "s1", cwd: process.cwd() } });
  const engine = createEngine({
    contextWindow: 16_000, maxOutputTokens: 2_000, sessionDir: "session", transcript, transcriptHoldsHistory: true,
    summarizer: { client: createOpenAIClient({ baseURL: "http://localhost:8000/v1", apiKey: "none" }), model: "qwen" },
  });
  const lethe = createAISDKAdapter({ engine, transcript }); // fixedTokens: measured from system and tools

  const result = await lethe.generate(generateText, {
    model: provider.chatModel("qwen"),
    system: "You are a careful agent.",
    prompt: "Read every data file.",
    tools: { lookup: tool({ description: "Look a file up.", inputSchema: z.object({ path: z.string() }), execute: async ({ path }) => read(path) }) },
    stopWhen: stepCountIs(100),
  });
  // ----
  // The hooks and the wrapped model straight into streamText, composed with the caller's own prepareStep.
  const options = { model: lethe.model(provider.chatModel("qwen")), prompt: "Go on.", prepareStep: () => ({ toolChoice: "auto" as const }) };
  const streamed = streamText({ ...options, ...lethe.hooks(options) });
  const viaStream = lethe.stream(streamText, { model: provider.chatModel("qwen"), prompt: "Go on." });
  return result.text + (await streamed.text) + (await viaStream.text);
}
