// The REPL in a real terminal: tmux (send-keys / capture-pane) drives `lethe` against the fake
// Anthropic server. Skipped (with a note) when tmux is not installed; CI installs it.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { FakeServer, Step } from "../support/fakes/common.ts";
import { Terminal, hasTmux, tmux } from "./tmux.ts";
import { type Workspace, cliEnv, isSummaryRequest, keyEnv, lastMessageText, makeWorkspace, providerArgs, startFake } from "./support.ts";

const SUMMARY = "<analysis>going through it</analysis>\n<summary>\n1. Goal — answer the user's questions.\n8. Current work — chatting.\n9. Next step — wait for the next question.\n</summary>";

/** The text of the last text block of a request (the newest thing the user typed). */
function lastTyped(body: any): string {
  const m = body.messages.at(-1);
  if (typeof m.content === "string") return m.content;
  const texts = m.content.filter((b: any) => b.type === "text").map((b: any) => b.text);
  return texts.at(-1) ?? "";
}

let fake: FakeServer;
let release!: () => void;
const gate = new Promise<void>((r) => (release = r));
let answers = 0;
const workspaces: Workspace[] = [];

before(async () => {
  if (!hasTmux) return;
  fake = await startFake("anthropic", {
    script: async (body: any): Promise<Step> => {
      if (isSummaryRequest(body)) return { text: SUMMARY };
      const typed = lastTyped(body);
      if (/slow/.test(typed)) {
        await gate; // held until the test ends: only Ctrl-C gets the user out
        return { text: "the slow answer" };
      }
      if (/run the command/.test(typed)) return { text: "Running it.", toolUses: [{ name: "bash", input: { command: "echo printed-by-bash" } }] };
      if (/print rows (\d+)/.test(typed)) {
        const n = /print rows (\d+)/.exec(typed)![1];
        return { toolUses: [{ name: "bash", input: { command: `seq 1 330 | awk '{print "batch ${n} row " $1 ": value=" ($1*7919)%10007 " status=ok"}'` } }] };
      }
      return { text: `Answer ${++answers}: ok.` };
    },
  });
});

after(async () => {
  release?.();
  if (hasTmux) tmux("kill-server");
  await fake?.close();
  for (const ws of workspaces) ws.cleanup();
});

test("REPL in tmux: permission prompt, /context bar chart, /compact with instructions, Ctrl-C cancels a running turn and the session goes on, /cost, /clear, /resume, Ctrl-C twice exits", { skip: hasTmux ? false : "tmux is not installed (apt-get install -y tmux)" }, async () => {
  const ws = makeWorkspace();
  workspaces.push(ws);
  const t = new Terminal("main");
  t.start(ws, cliEnv(ws, keyEnv("anthropic")), [...providerArgs("anthropic", fake), "--cwd", ws.dir, "--context-window", "40000", "--max-output-tokens", "2000"]);
  await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner and the prompt");

  // A plain turn.
  t.type("hello");
  await t.waitFor(/Answer 1: ok\.[\s\S]*tokens in context[\s\S]*> $/m, 0, "the first answer");

  // A permission prompt for bash.
  let m = t.mark();
  t.type("please run the command");
  await t.waitFor(/Allow bash\? echo printed-by-bash .*\[y\] yes  \[n\] no  \[a\] always: Bash\(echo printed-by-bash:\*\)/, m, "the permission question, with its single keys");
  t.keys("y"); // one key, no Enter
  await t.waitFor(/⎿ printed-by-bash[\s\S]*Answer 2: ok\.[\s\S]*> $/m, m, "the tool result and the answer");

  // A bigger turn, so that a summary is worth it (/compact skips a compaction that would not shrink the context).
  m = t.mark();
  t.type("print rows 0");
  await t.waitFor(/Allow bash\?/, m, "the permission question");
  t.keys("y");
  await t.waitFor(/Answer 3: ok\.[\s\S]*> $/m, m, "the rows and an answer");

  // /context: a bar chart of where the tokens go, and the distance to auto-compact.
  m = t.mark();
  t.type("/context");
  const chart = await t.waitFor(/Auto-compact in [\d,]+ tokens[\s\S]*> $/m, m, "the /context chart");
  for (const label of ["system + tools", "user messages", "assistant", "tool results", "summary", "free"]) assert.match(chart, new RegExp(label.replace("+", "\\+")));
  assert.match(chart, /\[█+[░│]+\]/, "a window bar");
  assert.match(chart, /system \+ tools\s+█+/, "a category bar");
  assert.match(chart, /auto-compact at [\d,]+/);

  // /compact with instructions: the fake receives them; a one-line notice follows.
  m = t.mark();
  const summariesBefore = fake.requests.filter(isSummaryRequest).length;
  t.type("/compact keep every answer number verbatim");
  await t.waitFor(/compacted \(manual\): [\d,]+ → [\d,]+ tokens[\s\S]*> $/m, m, "the compaction notice");
  const summaries = fake.requests.filter(isSummaryRequest);
  assert.equal(summaries.length, summariesBefore + 1);
  assert.match(lastMessageText(summaries.at(-1)), /keep every answer number verbatim/);

  // Ctrl-C during a running turn: back to the prompt, and the session goes on.
  m = t.mark();
  const before = fake.requests.length;
  t.type("a slow question");
  while (fake.requests.length === before) await new Promise((r) => setTimeout(r, 20));
  await t.waitFor(/Ctrl-C to cancel/, m, "the spinner");
  t.keys("C-c");
  await t.waitFor(/Interrupted\.[\s\S]*> $/m, m, "the interruption and a new prompt");
  m = t.mark();
  t.type("and after the interrupt?");
  await t.waitFor(/Answer 4: ok\.[\s\S]*> $/m, m, "an answer after the interrupt");
  const next = JSON.stringify(fake.requests.at(-1).messages);
  // The cancelled prompt stays on record, closed by a note: the next prompt is a request of its own, not merged into it.
  assert.match(next, /a slow question[\s\S]*"role":"assistant"[\s\S]*interrupted this request[\s\S]*and after the interrupt\?/, "the cancelled prompt is closed, then the new one follows");
  const lastUser = fake.requests.at(-1).messages.at(-1);
  assert.doesNotMatch(JSON.stringify(lastUser), /a slow question/, "not merged into the new prompt");
  assert.match(next, /this session continues/, "the context still starts from the manual compaction");

  // /cost, /clear, /resume.
  m = t.mark();
  t.type("/cost");
  await t.waitFor(/cache read [\d,]+[\s\S]*Total: \$[\d.]+[\s\S]*> $/m, m, "the cost report");
  const firstSession = /session (\S+) · /.exec(t.screen())![1]!;
  m = t.mark();
  t.type("/clear");
  // /clear clears the screen (and its scrollback): the new session line is all that is left.
  const cleared = await t.waitFor(/^[\s\S]*New session (\S+)\.[\s\S]*> $/m, 0, "a new session");
  assert.doesNotMatch(t.screen(), /Answer 1: ok\./, "the screen was cleared");
  const secondSession = /New session (\S+)\./.exec(cleared)![1]!;
  assert.notEqual(secondSession, firstSession);
  m = t.mark();
  t.type("/resume");
  const list = await t.waitFor(/Sessions \(newest first\)[\s\S]*> $/m, m, "the session list");
  assert.ok(list.includes(firstSession));
  m = t.mark();
  t.type(`/resume ${firstSession}`);
  const resumed = await t.waitFor(/Resumed session \S+ \(\d+ messages in context\)\.[\s\S]*> $/m, m, "the resumed session");
  // …and shows where it was: the last exchanges.
  assert.match(resumed, /── last \d of \d+ exchange\(s\) ──[\s\S]*> and after the interrupt\?[\s\S]*Answer 4: ok\./);

  // Ctrl-C twice at an empty prompt exits (with 0).
  t.keys("C-c");
  await t.waitFor(/press Ctrl-C again to exit/, m);
  t.keys("C-c");
  await t.waitFor(/LETHE-EXITED 0/, m, "the exit");
});

test("REPL in tmux: auto-compact near warning, ask mode asks before compacting, a notice after each compaction, Ctrl-D exits", { skip: hasTmux ? false : "tmux is not installed (apt-get install -y tmux)" }, async () => {
  const ws = makeWorkspace({ compaction: { micro: { enabled: false }, snip: { enabled: false }, summary: { presummaryShare: 0 } } });
  workspaces.push(ws);
  const t = new Terminal("ask");
  t.start(ws, cliEnv(ws, keyEnv("anthropic")), [...providerArgs("anthropic", fake), "--cwd", ws.dir, "--yes", "--context-window", "24000", "--max-output-tokens", "2000", "--auto-compact", "ask"]);
  await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");
  let asked = false;
  for (let i = 1; i <= 8 && !asked; i++) {
    const m = t.mark();
    t.type(`print rows ${i}`);
    const out = await t.waitFor(/(Compact now\? \[Y\/n\] $|tokens in context[^\n]*\]\n> $)/m, m, `turn ${i}`);
    asked = /Compact now\?/.test(out);
  }
  assert.ok(asked, "ask mode asked");
  assert.match(t.screen(), /⚠ context at [\d,]+ tokens, \d+% of the auto-compact threshold/, "the near warning came first");
  const m = t.mark();
  t.type("y");
  await t.waitFor(/compacted \(summarize\): [\d,]+ → [\d,]+ tokens/, m, "the compaction notice");
  await t.waitFor(/tokens in context[^\n]*\]\n> $/m, m, "the end of the turn");
  t.keys("C-d");
  await t.waitFor(/LETHE-EXITED 0/, m, "the exit on Ctrl-D");
});
