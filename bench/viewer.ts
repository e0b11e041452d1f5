// The viewer on a 5,000-message session (issue 12): time to first render of the timeline (the
// chart set up), the chart drawn with its markers (its first draw, a microtask later) and the
// transcript list, in Debian's chromium. Then a
// 50,000-message session written as the agent writes one (bench/support/long-session.ts: snips,
// micro and budget boundaries, a request line per call): each API response's size and server time
// (the chart's data on a new viewer and again, every page of the transcript list), and the page in
// chromium. Numbers only; the test suite checks behaviour.
// `npm run bench:viewer [-- --messages N]` → bench/results/viewer.json
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startViewer } from "../src/cli/view/server.ts";
import { sessionPaths } from "../src/session/paths.ts";
import { buildSession, transcriptShape } from "./support/long-session.ts";

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
const runs: { timeline: number; chart: number; transcript: number }[] = [];
/** The page's marks, from navigation start (`chart`: the first draw; pages before issue 25 had none). */
const marks = () => ({
  timeline: performance.getEntriesByName("timeline")[0]!.startTime,
  chart: performance.getEntriesByName("chart")[0]?.startTime ?? Number.NaN,
  transcript: performance.getEntriesByName("transcript")[0]!.startTime,
});
try {
  for (let r = 0; r < 5; r++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(viewer.url);
    await page.waitForSelector("body[data-ready='1']", { timeout: 60_000 });
    runs.push(await page.evaluate(marks));
    await page.close();
  }
} finally {
  await browser.close();
  await viewer.close();
  rmSync(ws, { recursive: true, force: true });
}
const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const result: Record<string, unknown> = { messages: MESSAGES, requests, runs: runs.length, timeline_ms: Math.round(median(runs.map((r) => r.timeline))), chart_ms: Math.round(median(runs.map((r) => r.chart))), transcript_ms: Math.round(median(runs.map((r) => r.transcript))) };
console.log(`viewer, ${MESSAGES} messages / ${requests} requests: timeline at ${result.timeline_ms} ms, chart drawn at ${result.chart_ms} ms, transcript list at ${result.transcript_ms} ms (median of ${runs.length}, from navigation start)`);

// ─── a long session ───
const argv = process.argv.slice(2);
const LONG = argv.includes("--messages") ? Number(argv[argv.indexOf("--messages") + 1]) : 50_000;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const lws = mkdtempSync(join(tmpdir(), "lethe-bench-viewer-long-"));
try {
  const t0 = Date.now();
  const built = buildSession(ROOT, lws, "20260103-000000-000-cccccccccc", LONG, 3_000, { requests: true });
  const shape = transcriptShape(built.transcript);
  console.log(`built ${LONG} messages: ${(built.bytes / 1e6).toFixed(1)} MB, ${shape.per_message} bytes per message (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  /** One GET: its server time as the client sees it (loopback) and its size. */
  const get = async (url: string) => {
    const s = performance.now();
    const r = await fetch(url);
    const body = Buffer.from(await r.arrayBuffer());
    if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
    return { ms: performance.now() - s, bytes: body.length, json: JSON.parse(body.toString("utf8")) as unknown };
  };
  const lv = await startViewer(sessionPaths(lws, built.id));
  let largest = 0;
  const seen = (r: { bytes: number }) => (largest = Math.max(largest, r.bytes));
  let chart: { cold_ms: number; warm_ms: number; bytes: number; compactions: number }, list: { pages: number; total_ms: number; first_page_ms: number; largest_page_bytes: number; entries: number };
  try {
    const cold = await get(`${lv.url}api/session`);
    const warm = await get(`${lv.url}api/session`);
    seen(cold);
    chart = { cold_ms: Math.round(cold.ms), warm_ms: Math.round(warm.ms), bytes: cold.bytes, compactions: (cold.json as { boundaries: unknown[] }).boundaries.length };
    // Page through the transcript list (a server that does not page answers with every entry at once).
    let from: number | null = 0, pages = 0, total = 0, first = 0, largestPage = 0, entries = 0;
    while (from !== null) {
      const r = await get(`${lv.url}api/entries?from=${from}`);
      seen(r);
      pages++;
      total += r.ms;
      if (pages === 1) first = r.ms;
      largestPage = Math.max(largestPage, r.bytes);
      if (Array.isArray(r.json)) {
        entries = r.json.length;
        break;
      }
      const page = r.json as { entries: unknown[]; next: number | null };
      entries += page.entries.length;
      from = page.next;
    }
    list = { pages, total_ms: Math.round(total), first_page_ms: Math.round(first), largest_page_bytes: largestPage, entries };
  } finally {
    await lv.close();
  }
  console.log(`  chart data (/api/session): ${(chart.bytes / 1e6).toFixed(2)} MB in ${chart.cold_ms} ms on a new viewer, ${chart.warm_ms} ms again   (bar: < 1000 ms, < 2 MB)`);
  console.log(`  transcript list (/api/entries): ${list.entries} entries in ${list.pages} response(s), the first in ${list.first_page_ms} ms, all in ${list.total_ms} ms; largest ${(list.largest_page_bytes / 1e6).toFixed(2)} MB`);
  console.log(`  largest response: ${(largest / 1e6).toFixed(2)} MB`);
  // The page in chromium, each run on a new viewer (nothing cached yet).
  const longRuns: { timeline: number; chart: number; transcript: number }[] = [];
  const browser2 = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
  try {
    for (let r = 0; r < 3; r++) {
      const v = await startViewer(sessionPaths(lws, built.id));
      try {
        const page = await browser2.newPage({ viewport: { width: 1400, height: 900 } });
        await page.goto(v.url);
        await page.waitForSelector("body[data-ready='1']", { timeout: 300_000 });
        longRuns.push(await page.evaluate(marks));
        await page.close();
      } finally {
        await v.close();
      }
    }
  } finally {
    await browser2.close();
  }
  const lt = Math.round(median(longRuns.map((r) => r.timeline))), lc = Math.round(median(longRuns.map((r) => r.chart))), ll = Math.round(median(longRuns.map((r) => r.transcript)));
  console.log(`  in chromium on a new viewer (${chart.compactions} compactions): timeline at ${lt} ms, chart drawn at ${lc} ms, transcript list at ${ll} ms (median of ${longRuns.length})`);
  result.long = { messages: LONG, transcript_mb: Number((built.bytes / 1e6).toFixed(1)), bytes_per_message: shape.per_message, chart_data: chart, transcript_list: list, largest_response_bytes: largest, browser: { timeline_ms: lt, chart_ms: lc, transcript_ms: ll, runs: longRuns.length } };
} finally {
  rmSync(lws, { recursive: true, force: true });
}
const out = join(dirname(fileURLToPath(import.meta.url)), "results", "viewer.json");
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
