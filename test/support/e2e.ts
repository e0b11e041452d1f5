// End-to-end harness: a real SDK client against a fake server, the engine with a
// session folder and transcript, and a scripted "model" that calls tools with big outputs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine, type EngineOptions } from "../../src/engine/index.ts";
import { type AnthropicClientOptions, createAnthropicClient } from "../../src/model/anthropic.ts";
import { createOpenAIClient } from "../../src/model/openai.ts";
import type { ModelClient, ToolDefinition } from "../../src/model/types.ts";
import { createSessionDir } from "../../src/session/paths.ts";
import { openTranscript } from "../../src/session/transcript.ts";
import { startFakeAnthropic } from "./fakes/anthropic.ts";
import { startFakeOpenAI } from "./fakes/openai.ts";
import type { FakeOptions, FakeServer, Step } from "./fakes/common.ts";

export const SUMMARY_TEXT =
  "<analysis>going through it</analysis>\n<summary>\n1. Goal — read every data file and report the totals.\n8. Current work — reading data files one by one.\n9. Next step — read the next file.\n</summary>";

export const TOOLS: ToolDefinition[] = [
  { name: "bash", description: "Run a shell command.", input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
];

/** Is this request body a summary request (tools forbidden)? */
export function isSummaryRequest(body: any): boolean {
  const tc = body?.tool_choice;
  return tc === "none" || tc?.type === "none";
}

/** A model that runs `turns` bash calls, then answers "done"; summary requests get SUMMARY_TEXT. */
export function toolScript(turns: number, onSummary?: (body: any, n: number) => Step | undefined) {
  let calls = 0;
  let summaries = 0;
  return (body: any): Step => {
    if (isSummaryRequest(body)) {
      const s = onSummary?.(body, summaries++);
      return s ?? { text: SUMMARY_TEXT };
    }
    calls++;
    if (calls > turns) return { text: `done after ${turns} calls` };
    return { toolUses: [{ name: "bash", input: { command: `cat data/file${calls}.txt` } }] };
  };
}

/** Deterministic tool output of about `tokens` tokens, unique per call. */
export function bigOutput(tag: string, tokens: number): string {
  const lines: string[] = [];
  for (let i = 0; lines.length * 9 < tokens; i++) lines.push(`${tag} row ${i}: value=${(i * 7919) % 10007} status=ok`);
  return lines.join("\n");
}

export interface E2E {
  fake: FakeServer;
  client: ModelClient;
  dir: string;
  sessionDir: string;
  transcriptPath: string;
  engine: ReturnType<typeof createEngine>;
  transcript: ReturnType<typeof openTranscript>;
  close(): Promise<void>;
}

export async function setupE2E(opts: {
  provider: "anthropic" | "openai";
  fake: FakeOptions;
  engine: Omit<EngineOptions, "sessionDir" | "summarizer" | "transcript"> & { summarizer?: boolean };
  /** More options of lethe's Anthropic client (context management, say). */
  anthropic?: AnthropicClientOptions;
}): Promise<E2E> {
  const fake = opts.provider === "anthropic" ? await startFakeAnthropic(opts.fake) : await startFakeOpenAI(opts.fake);
  const client = opts.provider === "anthropic" ? createAnthropicClient({ ...opts.anthropic, baseURL: fake.url, apiKey: "test-key" }) : createOpenAIClient({ baseURL: fake.url, apiKey: "test-key" });
  const dir = mkdtempSync(join(tmpdir(), "lethe-e2e-"));
  const session = createSessionDir(dir);
  const transcript = openTranscript(session.transcript, { header: { id: session.id, cwd: dir } });
  const { summarizer, ...engineOpts } = opts.engine;
  const engine = createEngine({
    ...engineOpts,
    workspace: dir,
    sessionDir: session.dir,
    transcript,
    summarizer: summarizer === false ? undefined : { client, model: "claude-sonnet-4-6" },
  });
  return {
    fake,
    client,
    dir,
    sessionDir: session.dir,
    transcriptPath: session.transcript,
    engine,
    transcript,
    async close() {
      transcript.close();
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
