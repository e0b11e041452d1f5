// Issue 12 (1, 4): the transcript records every model call and what each compaction removed and
// carried; `lethe sessions` lists a workspace's sessions and `lethe export` writes one out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeAnthropic, anthropicInputTokens } from "../support/fakes/anthropic.ts";
import { cliEnv, isSummaryRequest, makeWorkspace, onlySession, runCli } from "./support.ts";

const STEPS = 30;
function script() {
  let n = 0;
  return (body: any) => {
    if (isSummaryRequest(body)) return { text: "<summary>\n1. Goal — print the rows.\n9. Next step — the next batch.\n</summary>" };
    n++;
    if (n > STEPS) return { text: `Done: printed ${STEPS} batches.` };
    return { text: `Batch ${n}.`, toolUses: [{ name: "bash", input: { command: `seq 1 110 | awk '{print "batch ${n} row " $1 ": value=" ($1*7919)%10007}'` } }] };
  };
}

test("a CLI session's transcript has a request line per model call and boundaries naming what they removed and carried; sessions lists it; export writes it", async () => {
  const fake = await startFakeAnthropic({ script: script(), contextWindow: 16_000 });
  // micro off: at 16k it would keep the session under the threshold, and this test is about summaries' boundaries.
  const ws = makeWorkspace({ compaction: { micro: { enabled: false } } });
  try {
    const r = await runCli(["--provider", "anthropic", "--base-url", fake.url, "--model", "claude-sonnet-4-6", "--context-window", "16000", "--max-output-tokens", "2000", "--yes", "--cwd", ws.dir, "-p", "Print every batch of rows."], { env: cliEnv(ws, { ANTHROPIC_API_KEY: "k" }) });
    assert.equal(r.code, 0, r.stderr);
    const s = onlySession(ws);
    const entries = s.transcript.entries;

    // One request line per model call: the loop's, and the engine's summary calls (marked summary).
    const lines = entries.filter((e) => e.type === "event" && e.name === "request") as any[];
    assert.equal(lines.length, fake.requests.length);
    assert.equal(lines.filter((q) => q.summary === true).length, fake.requests.filter(isSummaryRequest).length);
    const requests = lines.filter((q) => q.summary !== true);
    const calls = fake.requests.filter((b) => !isSummaryRequest(b));
    assert.equal(requests.length, calls.length);
    requests.forEach((q, i) => {
      assert.equal(q.model, "claude-sonnet-4-6");
      assert.equal(q.input_tokens, anthropicInputTokens(calls[i]), `request ${i}: input as the provider reported it`);
      assert.ok(q.input_tokens_estimated > 0 && q.output_tokens > 0 && q.latency_ms >= 0 && typeof q.stop_reason === "string");
      assert.ok(typeof q.cost_usd === "number" && q.cost_usd > 0, "priced");
      assert.equal(q.cache_read_tokens + q.cache_write_tokens <= q.input_tokens, true);
    });

    // Boundaries: what left the context (by uuid, each tool call and where its output is now) and what came with the summary.
    const uuids = new Set(entries.filter((e) => e.type === "message").map((e: any) => e.uuid));
    const summaries = entries.filter((e) => e.type === "boundary" && e.kind === "summarize") as any[];
    assert.ok(summaries.length >= 1, "the session crossed the threshold");
    for (const b of summaries) {
      assert.ok(b.removed.messages > 0 && b.removed.uuids.length > 0);
      assert.ok(b.removed.uuids.every((u: string) => uuids.has(u)), "removed uuids are transcript lines");
      assert.ok(b.removed.tool_results.length > 0 && b.removed.tool_results.every((t: any) => t.tool_use_id && (t.full_text === "transcript" || t.full_text.includes("tool-results"))));
      assert.ok(b.removed.tool_results.every((t: any) => uuids.has(t.message_uuid)), "each result names its transcript line");
      assert.ok(b.carried.user_messages + (b.carried.latest_request ? 1 : 0) >= 1, "the user's request came along");
    }
    const cheap = entries.filter((e) => e.type === "boundary" && ["budget", "snip", "micro"].includes(String(e.kind))) as any[];
    assert.ok(cheap.every((b) => b.tokens_before >= b.tokens_after && b.tokens_after > 0), "cheap layers have their numbers");

    // lethe sessions
    const list = await runCli(["sessions", "--cwd", ws.dir], { env: cliEnv(ws) });
    assert.equal(list.code, 0, list.stderr);
    const row = list.stdout.split("\n").find((l) => l.startsWith(s.id))!;
    assert.ok(row, list.stdout);
    assert.match(row, /\s1\s+\d+ summarize/);
    assert.match(row, /\$\d+\.\d\d/);
    assert.match(row, /Print every batch of rows\./);

    // lethe export
    const md = await runCli(["export", s.id.slice(0, 12), "--format", "md", "--cwd", ws.dir], { env: cliEnv(ws) });
    assert.equal(md.code, 0, md.stderr);
    assert.match(md.stdout, /^# lethe session /);
    assert.match(md.stdout, /## User\n\nPrint every batch of rows\./);
    assert.match(md.stdout, /> \*\*Compaction: summarize\*\* — [\d,]+ → [\d,]+ tokens/);
    assert.match(md.stdout, /\*\*tool call\*\* `bash`/);
    const json = await runCli(["export", s.id, "--format", "json", "--cwd", ws.dir], { env: cliEnv(ws) });
    assert.equal(JSON.parse(json.stdout).entries.length, entries.length);

    // Errors: one line.
    const missing = await runCli(["export", "no-such-session", "--cwd", ws.dir], { env: cliEnv(ws) });
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr.trim().split("\n").length, 1, missing.stderr);
    const badFormat = await runCli(["export", s.id, "--format", "pdf", "--cwd", ws.dir], { env: cliEnv(ws) });
    assert.equal(badFormat.code, 2);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("an old transcript (no request lines, no boundary details) still lists and exports", async () => {
  const ws = makeWorkspace();
  try {
    const dir = join(ws.dir, ".lethe", "sessions", "20250101-000000-abc123");
    mkdirSync(dir, { recursive: true });
    const lines = [
      { type: "session", id: "20250101-000000-abc123", cwd: ws.dir, created: "2025-01-01T00:00:00.000Z", version: 1 },
      { type: "message", uuid: "u1", ts: "2025-01-01T00:00:01.000Z", message: { role: "user", content: "hello there" } },
      { type: "message", uuid: "u2", ts: "2025-01-01T00:00:02.000Z", message: { role: "assistant", content: [{ type: "text", text: "hi" }] } },
      { type: "boundary", ts: "2025-01-01T00:00:03.000Z", kind: "summarize", tokens_before: 100, tokens_after: 10, summary: "said hello" },
    ];
    writeFileSync(join(dir, "transcript.jsonl"), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const list = await runCli(["sessions", "--cwd", ws.dir], { env: cliEnv(ws) });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /20250101-000000-abc123\s+2025-01-01 00:00\s+2025-01-01 00:00\s+1\s+1 summarize\s+—\s+—\s+hello there/);
    const md = await runCli(["export", "20250101-000000-abc123", "--cwd", ws.dir], { env: cliEnv(ws) });
    assert.match(md.stdout, /Compaction: summarize\*\* — 100 → 10 tokens/);
    assert.match(md.stdout, /said hello/);
  } finally {
    ws.cleanup();
  }
});
