// Steering compaction in the REPL (issue 26), in a real terminal through tmux against the fake
// Anthropic server: /model to a smaller window (compacted first by the current model) and back to
// a larger one, /uncompact, /compact --preview answered no and then yes (one summary call for
// both previews and the applied compaction), and --continue --model <smaller>.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { FakeServer, Step } from "../support/fakes/common.ts";
import { Terminal, TMUX_SKIP, hasTmux, tmux } from "./tmux.ts";
import { type Workspace, cliEnv, isSummaryRequest, keyEnv, makeWorkspace, onlySession, startFake } from "./support.ts";

const SUMMARY = "<summary>\n1. Goal — print the rows the user asks for.\n8. Current work — printing rows.\n</summary>";
const BIG = "claude-opus-4-5"; // 200,000 tokens (the known-model table)
const SMALL = "phi4"; // 16,384 tokens

let fake: FakeServer;
let answers = 0;
const workspaces: Workspace[] = [];

before(async () => {
  if (!hasTmux) return;
  fake = await startFake("anthropic", {
    script: (body: any): Step => {
      if (isSummaryRequest(body)) return { text: SUMMARY };
      // The newest thing typed: the last text block of the last message.
      const last = body.messages.at(-1);
      const typed = typeof last.content === "string" ? last.content : (last.content.filter((b: any) => b.type === "text").at(-1)?.text ?? "");
      const rows = /print rows (\d+)/.exec(typed);
      if (rows) return { toolUses: [{ name: "bash", input: { command: `seq 1 330 | awk '{print "batch ${rows[1]} row " $1 ": value=" ($1*7919)%10007 " status=ok"}'` } }] };
      return { text: `Answer ${++answers}: ok.` };
    },
  });
});

after(async () => {
  if (hasTmux) tmux("kill-server");
  await fake?.close();
  for (const ws of workspaces) ws.cleanup();
});

const args = (ws: Workspace, model: string, extra: string[] = []) => ["--provider", "anthropic", "--base-url", fake.url, "--model", model, "--cwd", ws.dir, "--yes", ...extra];
const summaries = () => fake.requests.filter(isSummaryRequest);
const n = (s: string) => Number(s.replace(/,/g, ""));

async function fillHistory(t: Terminal, batches: number): Promise<void> {
  for (let i = 0; i < batches; i++) {
    const m = t.mark();
    t.type(`print rows ${i}`);
    await t.waitFor(/Answer \d+: ok\.[\s\S]*> $/m, m, `batch ${i}`);
  }
}

test("REPL: /model to a smaller window compacts first with the current model, then switches; back to a larger one compacts nothing; /uncompact puts the history back", { skip: TMUX_SKIP }, async () => {
  const ws = makeWorkspace();
  workspaces.push(ws);
  const t = new Terminal("steer-model");
  t.start(ws, cliEnv(ws, keyEnv("anthropic")), args(ws, BIG));
  await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");
  await fillHistory(t, 3);

  let m = t.mark();
  t.type("/model");
  await t.waitFor(new RegExp(`Model: ${BIG} \\(200,000-token window; auto-compact at [\\d,]+\\)`), m, "the model line");

  m = t.mark();
  const before = summaries().length;
  t.type(`/model ${SMALL}`);
  const switched = await t.waitFor(/Switched to phi4: a 16,384-token window \(was 200,000\), after claude-opus-4-5 compacted the history to fit \(([\d,]+) → ([\d,]+) tokens\)\.[\s\S]*> $/m, m, "the switch to the smaller model");
  const [, from, to] = /\(([\d,]+) → ([\d,]+) tokens\)/.exec(switched)!;
  assert.ok(n(to!) < n(from!) && n(to!) < 16_384 / 2, `${from} → ${to}`);
  assert.equal(summaries().length, before + 1);
  assert.equal(summaries().at(-1).model, BIG, "the summary was written by the model switched from");

  // The next request goes to the small model and fits its window.
  m = t.mark();
  t.type("and now?");
  await t.waitFor(/Answer \d+: ok\.[\s\S]*> $/m, m, "an answer from the small model");
  const last = fake.requests.at(-1);
  assert.equal(last.model, SMALL);
  assert.ok(JSON.stringify(last.messages).length / 4 < 16_384, "the request fits the small window");

  // Back to the large window: nothing to compact.
  m = t.mark();
  t.type(`/model ${BIG}`);
  await t.waitFor(/Switched to claude-opus-4-5: a 200,000-token window \(was 16,384\)\.[\s\S]*> $/m, m, "the switch to the larger model");
  assert.equal(summaries().length, before + 1);

  // Undo: the history from before the compaction is back (the rows are in the next request again).
  m = t.mark();
  t.type("/uncompact");
  await t.waitFor(/Undid the last compaction \(manual\): [\d,]+ → [\d,]+ tokens, \d+ → \d+ messages in context\.[\s\S]*> $/m, m, "the undo");
  m = t.mark();
  t.type("what do you see?");
  await t.waitFor(/Answer \d+: ok\.[\s\S]*> $/m, m, "an answer after the undo");
  assert.match(JSON.stringify(fake.requests.at(-1).messages), /batch 0 row 1: value=/, "the first batch's rows are back in context");
  const entries = onlySession(ws).transcript.entries;
  assert.ok(entries.some((e: any) => e.type === "event" && e.name === "window_set" && e.context_window === 16_384 && e.previous === 200_000));
  assert.ok(entries.some((e: any) => e.type === "boundary" && e.kind === "uncompact"));

  // Nothing left to undo.
  m = t.mark();
  t.type("/uncompact");
  await t.waitFor(/lethe: nothing to undo[\s\S]*> $/m, m, "nothing to undo");

  // A model lethe does not know: the window is a guess, and the line says so.
  m = t.mark();
  t.type("/model qwerty-model");
  await t.waitFor(/qwerty-model is not in lethe's model table: assuming a 32,768-token window \(start with --context-window to set it\)/, m, "the guess said");
});

test("REPL: /compact --preview shows what it would do; no leaves everything as it was, yes applies that very summary (one summary call in all)", { skip: TMUX_SKIP }, async () => {
  const ws = makeWorkspace();
  workspaces.push(ws);
  const t = new Terminal("steer-preview");
  t.start(ws, cliEnv(ws, keyEnv("anthropic")), args(ws, BIG));
  await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");
  await fillHistory(t, 2);
  const before = summaries().length;

  let m = t.mark();
  t.type("/compact --preview keep the batch numbers");
  const shown = await t.waitFor(/Apply this compaction\? \[y\/N\] $/m, m, "the preview and its question");
  assert.match(shown, /Compaction preview \(focus: keep the batch numbers\): [\d,]+ → [\d,]+ tokens \(−\d+%\)/);
  assert.match(shown, /removes: \d+ messages, 2 tool results \(largest: bash /);
  assert.match(shown, /keeps: +\d+ user messages/);
  assert.match(shown, /Goal — print the rows the user asks for/, "the summary it would write");
  t.type("n");
  await t.waitFor(/Not applied: the context is as it was\.[\s\S]*> $/m, m, "not applied");
  assert.ok(!onlySession(ws).transcript.entries.some((e: any) => e.type === "boundary" && e.kind === "manual"), "no compaction recorded");

  m = t.mark();
  t.type("/compact --preview keep the batch numbers");
  await t.waitFor(/Apply this compaction\? \[y\/N\] $/m, m, "the same preview again");
  t.type("y");
  await t.waitFor(/compacted \(manual\): [\d,]+ → [\d,]+ tokens[\s\S]*> $/m, m, "applied");
  assert.equal(summaries().length, before + 1, "one summary call: the second preview and the compaction reused it");
  const entries = onlySession(ws).transcript.entries;
  const manual = entries.find((e: any) => e.type === "boundary" && e.kind === "manual");
  assert.equal((manual as any)?.details?.fromPreview, true);
  assert.equal(entries.filter((e: any) => e.type === "event" && e.name === "compact_preview").length, 1);
});

test("--continue --model <smaller>: the session is compacted first by the model it last ran with, then goes on with the smaller one", { skip: TMUX_SKIP }, async () => {
  const ws = makeWorkspace();
  workspaces.push(ws);
  const t = new Terminal("steer-continue-a");
  t.start(ws, cliEnv(ws, keyEnv("anthropic")), args(ws, BIG));
  await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");
  await fillHistory(t, 3);
  t.type("/exit");
  await t.waitFor(/LETHE-EXITED 0/, 0, "the exit");
  const before = summaries().length;

  const u = new Terminal("steer-continue-b");
  u.start(ws, cliEnv(ws, keyEnv("anthropic")), args(ws, SMALL, ["--continue"]));
  await u.waitFor(/phi4 has a 16,384-token window \(was 200,000\), after claude-opus-4-5 compacted the history to fit \([\d,]+ → [\d,]+ tokens\)\.[\s\S]*> $/m, 0, "the resumed session, fitted");
  assert.equal(summaries().length, before + 1);
  assert.equal(summaries().at(-1).model, BIG);
  const m = u.mark();
  u.type("go on");
  await u.waitFor(/Answer \d+: ok\.[\s\S]*> $/m, m, "an answer from the small model");
  assert.equal(fake.requests.at(-1).model, SMALL);
});
