// A read-heavy session at a small window (issue 25, item 3): 200 steps, each reading the next
// 250-line chunk of a log (about 3k tokens), under a 3.7k-token system prompt, through lethe's
// agent loop and the real Anthropic SDK against the fake server. Says whether it finished, its
// summaries, micro clearings and snips, requests, and cost at Sonnet's list price (cache reads and
// writes priced as billed). Used by test/integration/small-windows.test.ts and bench/small-windows.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAgent } from "../../src/agent/loop.ts";
import { costOf, priceOf } from "../../src/cli/pricing.ts";
import type { CompactionEvent } from "../../src/compaction/types.ts";
import { createEngine } from "../../src/engine/index.ts";
import { createAnthropicClient } from "../../src/model/anthropic.ts";
import { createSessionDir } from "../../src/session/paths.ts";
import { openTranscript } from "../../src/session/transcript.ts";
import { startFakeAnthropic } from "./fakes/anthropic.ts";

const STEPS = 200;
const SUMMARY = "<summary>\n1. Goal — read the whole log and report every ERROR line.\n8. Current work — reading the log chunk by chunk.\n9. Next step — read the next chunk.\n</summary>";
const TOOLS = [{ name: "read_file", description: "Read lines of a file.", input_schema: { type: "object", properties: { path: { type: "string" }, offset: { type: "number" }, limit: { type: "number" } }, required: ["path"] } }];
const chunk = (i: number) => Array.from({ length: 250 }, (_, k) => `${i * 250 + k + 1}\tw${k % 7} ${k % 41 === 0 ? "ERROR" : "ok"} req ${(i * 7919 + k * 104729) % 100003} t=${(k * 37) % 997}`).join("\n");
const price = priceOf("claude-sonnet-4-6")!.pricing;
// What lethe's CLI sends before any message (system prompt and tool definitions): about 4k tokens.
const SYSTEM = ["You are a careful agent working in a repository.", ...Array.from({ length: 160 }, (_, i) => `Rule ${i + 1}: keep the work focused, read before editing, and report what you found with exact line numbers.`)].join("\n");

export async function readHeavySession(window: number) {
  let n = 0;
  const fake = await startFakeAnthropic({
    contextWindow: window,
    script: (body: any) => {
      if (body?.tool_choice?.type === "none") return { text: SUMMARY };
      n++;
      return n > STEPS ? { text: `Read all ${STEPS} chunks.` } : { toolUses: [{ name: "read_file", input: { path: "big.log", offset: (n - 1) * 250, limit: 250 } }] };
    },
  });
  const dir = mkdtempSync(join(tmpdir(), "lethe-small-"));
  const session = createSessionDir(dir);
  const transcript = openTranscript(session.transcript, { header: { id: session.id, cwd: dir } });
  const client = createAnthropicClient({ baseURL: fake.url, apiKey: "k" });
  const events: CompactionEvent[] = [];
  let cost = 0;
  const requestCost = (_m: string, u: any) => costOf(u, price);
  const engine = createEngine({ contextWindow: window, maxOutputTokens: window / 4, sessionDir: session.dir, transcript, transcriptHoldsHistory: true, summarizer: { client, model: "claude-sonnet-4-6" }, requestCost, onEvent: (e) => events.push(e), workspace: dir });
  let outcome = "finished";
  let turns = 0;
  try {
    const r = await runAgent([], "Read big.log, 250 lines at a time, and report every ERROR line.", {
      engine, client, model: "claude-sonnet-4-6", system: SYSTEM, tools: TOOLS, maxOutputTokens: window / 4, transcript, requestCost,
      runTool: async (use) => ({ content: chunk(Math.floor(Number((use.input as { offset: number }).offset) / 250)) }),
      onEvent: (e) => void (e.type === "response" && (cost += requestCost(e.model, e.usage))),
    });
    turns = r.turns;
    if (!/Read all/.test(r.text)) outcome = `stopped: ${r.stop}`;
  } catch (e) {
    outcome = `error: ${(e as Error).message.slice(0, 140)}`;
  } finally {
    transcript.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const count = (k: string) => events.filter((e) => e.kind === k).length;
  const over = fake.log.filter((x) => x.path === "/v1/messages").length - fake.requests.length;
  return { window, outcome, steps: Math.min(n, STEPS), turns, requests: fake.requests.length, refused: over, summaries: count("summarize") + count("reactive"), micro: count("micro"), snips: count("snip"), costUsd: Number(cost.toFixed(4)) };
}
