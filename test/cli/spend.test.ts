// What a session spends, and when it stops: a fake model that never stops calling tools (it goes on
// after every summary) must be stopped by --max-budget-usd before the request that would cross it,
// or, without a budget, by the no-progress guard; and the json result, `lethe sessions` and the
// transcript must agree on turns, compactions and cost (issue 25, items 2 and 4).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startFakeAnthropic } from "../support/fakes/anthropic.ts";
import type { Step } from "../support/fakes/common.ts";
import { cliEnv, makeWorkspace, runCli, sameCost } from "./support.ts";

const SUMMARY = "<summary>\n1. Goal — list the files.\n8. Current work — listing.\n9. Next step — list again.\n</summary>";
/** A model that calls the same command forever, summaries included. */
const forever = (): ((body: any) => Step) => (body: any) => (body?.tool_choice?.type === "none" ? { text: SUMMARY } : { toolUses: [{ name: "bash", input: { command: "seq 1 700" } }] });

function transcriptOf(dir: string): any[] {
  const sessions = join(dir, ".lethe", "sessions");
  const [id] = readdirSync(sessions);
  return readFileSync(join(sessions, id!, "transcript.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
}

const base = (url: string, dir: string) => ["--provider", "anthropic", "--base-url", url, "--model", "claude-sonnet-4-6", "--context-window", "16000", "--max-output-tokens", "2000", "--yes", "--cwd", dir, "--output-format", "json", "-p", "List the files, again and again."];

test("--max-budget-usd 0.12: a model that never stops is stopped with error_max_budget_usd, having spent at most the budget plus one request; json, sessions and transcript agree", async () => {
  const fake = await startFakeAnthropic({ script: forever(), contextWindow: 16_000 });
  // The no-progress guard off: here the budget alone must stop it.
  const ws = makeWorkspace({ compaction: { summary: { noProgressRepeats: 0 }, micro: { enabled: false } } });
  try {
    const r = await runCli([...base(fake.url, ws.dir), "--max-budget-usd", "0.12"], { env: cliEnv(ws, { ANTHROPIC_API_KEY: "k" }) });
    assert.equal(r.code, 1, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.subtype, "error_max_budget_usd");
    assert.equal(out.is_error, true);
    assert.match(r.stderr, /--max-budget-usd/);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    const requests = transcriptOf(ws.dir).filter((e) => e.type === "event" && e.name === "request");
    const costs = requests.map((e) => e.cost_usd as number);
    const spent = costs.reduce((a, b) => a + b, 0);
    assert.ok(spent <= 0.12 + Math.max(...costs), `spent ${spent}`);
    assert.ok(spent > 0.1, `it ran until near the budget (${spent})`);
    // Every model call has its line, summaries included, and the result agrees to the cent.
    assert.equal(requests.length, fake.requests.length);
    assert.ok(requests.some((e) => e.summary === true), "summary calls have request lines");
    assert.ok(sameCost(out.total_cost_usd, spent), `${out.total_cost_usd} ≠ ${spent}`);
    assert.equal(out.num_turns, requests.filter((e) => !e.summary).length);
    const boundaries = transcriptOf(ws.dir).filter((e) => e.type === "boundary" && e.kind === "summarize");
    assert.equal(out.compactions.filter((c: any) => c.kind === "summarize").length, boundaries.length);
    const listed = await runCli(["sessions", "--cwd", ws.dir], { env: cliEnv(ws, {}) });
    assert.match(listed.stdout, new RegExp(`\\$${spent.toFixed(2).replace(".", "\\.")}`), listed.stdout);
  } finally {
    ws.cleanup();
    await fake.close();
  }
});

test("without a budget, the no-progress guard stops a session whose summaries all leave the same context; the error result still carries its turns, compactions and cost", async () => {
  const fake = await startFakeAnthropic({ script: forever(), contextWindow: 16_000 });
  // micro off: with it, this model's context stays small and it is never summarised (only --max-turns
  // or --max-budget-usd stop a model that repeats one call forever; see the issue note).
  const ws = makeWorkspace({ compaction: { micro: { enabled: false } } });
  try {
    const r = await runCli(base(fake.url, ws.dir), { env: cliEnv(ws, { ANTHROPIC_API_KEY: "k" }) });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /making no progress/);
    const out = JSON.parse(r.stdout);
    assert.equal(out.subtype, "error_during_execution");
    const entries = transcriptOf(ws.dir);
    const requests = entries.filter((e) => e.type === "event" && e.name === "request");
    const summaries = entries.filter((e) => e.type === "boundary" && e.kind === "summarize");
    assert.ok(summaries.length >= 3 && summaries.length <= 8, `${summaries.length} summaries before it stopped`);
    assert.ok(fake.requests.length < 60, `${fake.requests.length} requests`);
    assert.equal(out.num_turns, requests.filter((e) => !e.summary).length);
    assert.equal(out.compactions.filter((c: any) => c.kind === "summarize").length, summaries.length);
    assert.ok(sameCost(out.total_cost_usd, requests.reduce((a, e) => a + e.cost_usd, 0)), `${out.total_cost_usd}`);
  } finally {
    ws.cleanup();
    await fake.close();
  }
});

test("a threshold below what every request carries (compactThreshold 5) is refused in one line before any request; an auto-compact that would grow the context is skipped, not paid for again and again", async () => {
  const fake = await startFakeAnthropic({ script: forever(), contextWindow: 16_000 });
  const ws = makeWorkspace({ compactThreshold: 5 });
  try {
    const r = await runCli(base(fake.url, ws.dir), { env: cliEnv(ws, { ANTHROPIC_API_KEY: "k" }) });
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /auto-compact threshold \(5 tokens\) is below what every request carries/);
    assert.equal(fake.requests.length, 0);
  } finally {
    ws.cleanup();
    await fake.close();
  }
});
