// Save before summarising (issue 26, item 4): with compaction.summary.saveFirst, the first time the
// context crosses the threshold the agent gets one turn, told its context is about to be compacted,
// to write what it must keep; the summary runs after that turn. The turn is a request like any
// other: in the cost, the json result and the transcript (where the viewer finds it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startFakeAnthropic } from "../support/fakes/anthropic.ts";
import type { Step } from "../support/fakes/common.ts";
import { cliEnv, makeWorkspace, runCli, sameCost } from "./support.ts";

const SUMMARY = "<summary>\n1. Goal — count the numbers.\n8. Current work — counting.\n</summary>";
const NOTICE = /\[lethe\] Your context is about to be compacted/;

/** Counts with bash a few times, saves notes when told to, then says it is done. */
function agent(): { script: (body: any) => Step; saw: { notice: number; requestsAfterNotes: string[] } } {
  const saw = { notice: 0, requestsAfterNotes: [] as string[] };
  let steps = 0;
  let saved = false;
  const script = (body: any): Step => {
    const text = JSON.stringify(body?.messages ?? []);
    if (saved) saw.requestsAfterNotes.push(body?.tool_choice?.type === "none" ? "summary" : "request");
    if (body?.tool_choice?.type === "none") return { text: SUMMARY };
    const last = JSON.stringify(body.messages[body.messages.length - 1]);
    if (NOTICE.test(last)) {
      saw.notice++;
      saved = true;
      return { toolUses: [{ name: "write_file", input: { path: "notes.md", content: "Found so far: the count ends at 1500.\n" } }] };
    }
    steps++;
    if (steps > 8 || text.includes("The context was compacted")) return { text: "Done." };
    return { toolUses: [{ name: "bash", input: { command: `seq ${steps} 1500` } }] };
  };
  return { script, saw };
}

function transcriptOf(dir: string): any[] {
  const sessions = join(dir, ".lethe", "sessions");
  const [id] = readdirSync(sessions);
  return readFileSync(join(sessions, id!, "transcript.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
}

const args = (url: string, dir: string) => ["--provider", "anthropic", "--base-url", url, "--model", "claude-sonnet-4-6", "--context-window", "16000", "--max-output-tokens", "2000", "--yes", "--cwd", dir, "--output-format", "json", "-p", "Count to 1500 a few times."];

test("saveFirst: at the threshold the agent is told its context is about to be compacted, writes its notes, and only then is the history summarised; the turn is in the cost and the transcript", async () => {
  const { script, saw } = agent();
  const fake = await startFakeAnthropic({ script, contextWindow: 16_000 });
  const ws = makeWorkspace({ compaction: { summary: { saveFirst: true }, micro: { enabled: false }, snip: { enabled: false } } });
  try {
    const r = await runCli(args(fake.url, ws.dir), { env: cliEnv(ws, { ANTHROPIC_API_KEY: "k" }) });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.subtype, "success");
    const entries = transcriptOf(ws.dir);
    const summaries = entries.filter((e) => e.type === "boundary" && e.kind === "summarize").length;
    assert.ok(saw.notice >= 1);
    assert.equal(saw.notice, summaries, "told once before each summary");
    assert.equal(entries.filter((e) => e.type === "event" && e.name === "summary_deferred").length, summaries);
    assert.equal(readFileSync(join(ws.dir, "notes.md"), "utf8"), "Found so far: the count ends at 1500.\n");
    // After the notes: the summary first, then the work goes on.
    assert.equal(saw.requestsAfterNotes[0], "summary", saw.requestsAfterNotes.join(","));
    const deferred = entries.findIndex((e) => e.type === "event" && e.name === "summary_deferred");
    const summary = entries.findIndex((e) => e.type === "boundary" && e.kind === "summarize");
    const notesWritten = entries.findIndex((e) => e.type === "message" && JSON.stringify(e.message).includes("notes.md"));
    assert.ok(deferred >= 0 && notesWritten > deferred && summary > notesWritten, `deferred ${deferred}, notes ${notesWritten}, summary ${summary}`);
    // The notice itself is lethe's, not the user's: the summary does not carry it as a user message.
    const rebuilt = JSON.stringify(entries[summary].history);
    assert.doesNotMatch(rebuilt, NOTICE);
    assert.match(rebuilt, /Count to 1500 a few times/);
    // Counted: every request (the save turn's included) has its line, and the result agrees.
    const requests = entries.filter((e) => e.type === "event" && e.name === "request");
    assert.equal(requests.length, fake.requests.length);
    assert.ok(sameCost(out.total_cost_usd, requests.reduce((a, e) => a + e.cost_usd, 0)), `${out.total_cost_usd}`);
    assert.equal(out.num_turns, requests.filter((e) => !e.summary).length);
  } finally {
    ws.cleanup();
    await fake.close();
  }
});

test("saveFirst off (the default): no notice, no notes, the summary runs at the threshold", async () => {
  const { script, saw } = agent();
  const fake = await startFakeAnthropic({ script, contextWindow: 16_000 });
  const ws = makeWorkspace({ compaction: { micro: { enabled: false }, snip: { enabled: false } } });
  try {
    const r = await runCli(args(fake.url, ws.dir), { env: cliEnv(ws, { ANTHROPIC_API_KEY: "k" }) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(saw.notice, 0);
    assert.equal(existsSync(join(ws.dir, "notes.md")), false);
    assert.ok(transcriptOf(ws.dir).some((e) => e.type === "boundary" && e.kind === "summarize"));
  } finally {
    ws.cleanup();
    await fake.close();
  }
});
