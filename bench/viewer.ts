// The viewer on a 5,000-message session (issue 12): time to first render of the timeline (the
// chart drawn with its markers) and of the transcript list, in Debian's chromium. Numbers only;
// the test suite checks behaviour. `npm run bench:viewer` → bench/results/viewer.json
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startViewer } from "../src/cli/view/server.ts";
import { sessionPaths } from "../src/session/paths.ts";

const MESSAGES = 5_000;
const ws = mkdtempSync(join(tmpdir(), "lethe-bench-viewer-"));
const id = "20260101-000000-bench5k";
const dir = join(ws, ".lethe", "sessions", id);
mkdirSync(join(dir, "tool-results"), { recursive: true });
const lines: string[] = [JSON.stringify({ type: "session", id, cwd: ws, created: "2026-01-01T00:00:00.000Z", version: 1 })];
let tokens = 2_000;
let requests = 0;
for (let i = 0; i < MESSAGES; i += 2) {
  const ts = new Date(Date.UTC(2026, 0, 1) + i * 1_000).toISOString();
  lines.push(JSON.stringify({ type: "message", uuid: `a${i}`, ts, message: { role: "assistant", content: [{ type: "text", text: `Step ${i / 2}.` }, { type: "tool_use", id: `t${i}`, name: "bash", input: { command: `cat file${i}.txt` } }] } }));
  lines.push(JSON.stringify({ type: "message", uuid: `u${i}`, ts, message: { role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: `output of step ${i / 2}\n`.repeat(40) }] } }));
  tokens += 600;
  requests++;
  lines.push(JSON.stringify({ type: "event", ts, name: "request", model: "m", input_tokens: tokens, input_tokens_estimated: tokens, cache_read_tokens: tokens - 600, cache_write_tokens: 600, output_tokens: 40, cost_usd: 0.002, latency_ms: 400, stop_reason: "tool_use", threshold: 167_000, context_window: 200_000 }));
  if (tokens > 167_000) {
    lines.push(JSON.stringify({ type: "boundary", ts, kind: "summarize", tokens_before: tokens, tokens_after: 30_000, summary: "the work so far", removed: { messages: 200, uuids: [], tool_results: [] }, carried: { user_messages: 1, latest_request: true, ledger: { read: 3, modified: 1 }, restored_files: [], todos: false, attachments: 0 } }));
    tokens = 30_000;
  }
}
writeFileSync(join(dir, "transcript.jsonl"), `${lines.join("\n")}\n`);

const executablePath = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p)) ?? "/usr/bin/chromium";
const viewer = await startViewer(sessionPaths(ws, id));
const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
const runs: { timeline: number; transcript: number }[] = [];
try {
  for (let r = 0; r < 5; r++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(viewer.url);
    await page.waitForSelector("body[data-ready='1']", { timeout: 60_000 });
    const t = await page.evaluate(() => ({
      timeline: performance.getEntriesByName("timeline")[0]!.startTime,
      transcript: performance.getEntriesByName("transcript")[0]!.startTime,
    }));
    runs.push(t);
    await page.close();
  }
} finally {
  await browser.close();
  await viewer.close();
  rmSync(ws, { recursive: true, force: true });
}
const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const result = { messages: MESSAGES, requests, runs: runs.length, timeline_ms: Math.round(median(runs.map((r) => r.timeline))), transcript_ms: Math.round(median(runs.map((r) => r.transcript))) };
console.log(`viewer, ${MESSAGES} messages / ${requests} requests: timeline drawn at ${result.timeline_ms} ms, transcript list at ${result.transcript_ms} ms (median of ${runs.length}, from navigation start)`);
const out = join(dirname(fileURLToPath(import.meta.url)), "results", "viewer.json");
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
