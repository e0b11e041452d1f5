// Child process for the crash test: runs an agent session against a fake server until killed.
import { runAgent } from "../../src/agent/loop.ts";
import { createEngine } from "../../src/engine/index.ts";
import { createAnthropicClient } from "../../src/model/anthropic.ts";
import { openTranscript } from "../../src/session/transcript.ts";
import { TOOLS, bigOutput } from "../support/e2e.ts";

const [url, sessionDir, transcriptPath] = process.argv.slice(2) as [string, string, string];
const client = createAnthropicClient({ baseURL: url, apiKey: "k" });
const transcript = openTranscript(transcriptPath, { header: { id: "crash", cwd: sessionDir } });
const engine = createEngine({
  contextWindow: 24_000,
  maxOutputTokens: 2_000,
  sessionDir,
  transcript,
  summarizer: { client, model: "claude-sonnet-4-6" },
  config: { micro: { enabled: false }, summary: { presummaryShare: 0 } },
});
await runAgent([], "Read every data file.", {
  engine,
  client,
  model: "claude-sonnet-4-6",
  tools: TOOLS,
  transcript,
  maxOutputTokens: 2_000,
  // Tools take a little while, so a kill can land mid-turn.
  runTool: async (use) => {
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
    return { content: bigOutput(String((use.input as { command: string }).command), 1_500) };
  },
});
