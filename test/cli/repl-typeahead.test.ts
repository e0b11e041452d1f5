// Type-ahead in a real terminal: what is typed right after answering a question (the "ask"
// auto-compact question, the permission question), in the same burst, is the next prompt.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import type { Step } from "../support/fakes/common.ts";
import { Terminal, TMUX_SKIP, hasTmux, tmux } from "./tmux.ts";
import { type Workspace, cliEnv, isSummaryRequest, keyEnv, makeWorkspace, providerArgs, startFake } from "./support.ts";

const SUMMARY = "<analysis>a</analysis>\n<summary>\n1. Goal — print rows.\n9. Next step — wait.\n</summary>";

const workspaces: Workspace[] = [];
after(() => {
  if (hasTmux) tmux("kill-server");
  for (const ws of workspaces) ws.cleanup();
});

/** The text of the last text block of a request (the newest thing the user typed). */
function lastTyped(body: any): string {
  const m = body.messages.at(-1);
  if (typeof m.content === "string") return m.content;
  return m.content.filter((b: any) => b.type === "text").map((b: any) => b.text).at(-1) ?? "";
}

const script = (body: any): Step => {
  if (isSummaryRequest(body)) return { text: SUMMARY };
  if (/tool_result/.test(JSON.stringify(body.messages.at(-1)))) return { text: "Tool done." };
  const typed = lastTyped(body);
  if (typed === "run it") return { toolUses: [{ name: "bash", input: { command: "echo ran-it" } }] };
  const rows = /print rows (\d+)/.exec(typed);
  if (rows) return { toolUses: [{ name: "bash", input: { command: `seq 1 150 | awk '{print "batch ${rows[1]} row " $1 ": value=" ($1*7919)%10007 " status=ok"}'` } }] };
  return { text: `Echo: ${typed}.` };
};

test("REPL in tmux: a line typed right after answering the auto-compact question (same burst) is the next prompt, after a no and after a yes; the no holds until a compaction", { skip: TMUX_SKIP }, async () => {
  const ws = makeWorkspace({ compaction: { micro: { enabled: false }, snip: { enabled: false }, summary: { presummaryShare: 0 } } });
  workspaces.push(ws);
  const fake = await startFake("anthropic", { script });
  try {
    const t = new Terminal("typeahead-compact");
    t.start(ws, cliEnv(ws, keyEnv("anthropic")), [...providerArgs("anthropic", fake), "--cwd", ws.dir, "--yes", "--context-window", "24000", "--max-output-tokens", "2000", "--auto-compact", "ask"]);
    await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");
    let asked = false;
    for (let i = 1; i <= 8 && !asked; i++) {
      const m = t.mark();
      t.type(`print rows ${i}`);
      asked = /Compact now\?/.test(await t.waitFor(/(Compact now\? \[Y\/n\] $|tokens in context[^\n]*\]\n> $)/m, m, `turn ${i}`));
    }
    assert.ok(asked, "ask mode asked");
    const m = t.mark();
    // The answer and the next prompt in one burst, as a fast typist sends them.
    t.keys("-l", "n\rafter the compact answer\r");
    const after = await t.waitFor(/^> after the compact answer\n[\s\S]*Echo: after the compact answer\.[\s\S]*> $/m, m, "the type-ahead line shown as a prompt, and answered");
    assert.doesNotMatch(after, /Compact now\?/, "the \"no\" holds: the next turn is not stopped by the same question");
    assert.ok(fake.requests.some((b: any) => lastTyped(b) === "after the compact answer"), "the model got the line");
    // Compacting by hand ends the "no": past the threshold again, lethe asks again.
    let n = t.mark();
    t.type("/compact");
    await t.waitFor(/compacted \(manual\)[\s\S]*> $/m, n, "the compaction");
    let again = false;
    for (let i = 10; i <= 18 && !again; i++) {
      n = t.mark();
      t.type(`print rows ${i}`);
      again = /Compact now\?/.test(await t.waitFor(/(Compact now\? \[Y\/n\] $|tokens in context[^\n]*\]\n> $)/m, n, `turn ${i}`));
    }
    assert.ok(again, "asked again after the compaction");
    // A "yes" with the next line in the same burst: the compaction, then the line.
    n = t.mark();
    t.keys("-l", "y\rafter the yes answer\r");
    await t.waitFor(/compacted \(summarize\)[\s\S]*^> after the yes answer\n[\s\S]*Echo: after the yes answer\.[\s\S]*> $/m, n, "the compaction, then the type-ahead line");
  } finally {
    await fake.close();
  }
});

test("REPL in tmux: a line typed right after answering the permission question (same burst) is the next prompt", { skip: TMUX_SKIP }, async () => {
  const ws = makeWorkspace();
  workspaces.push(ws);
  const fake = await startFake("anthropic", { script });
  try {
    const t = new Terminal("typeahead-perm");
    t.start(ws, cliEnv(ws, keyEnv("anthropic")), [...providerArgs("anthropic", fake), "--cwd", ws.dir]);
    await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");
    let m = t.mark();
    t.type("run it");
    await t.waitFor(/Allow bash\? echo ran-it .*\[a\] always: Bash\(echo ran-it:\*\) $/m, m, "the permission question");
    m = t.mark();
    t.keys("-l", "yafter the permission answer\r");
    const after = await t.waitFor(/Tool done\.[\s\S]*^> after the permission answer\n[\s\S]*Echo: after the permission answer\.[\s\S]*> $/m, m, "the type-ahead line shown as a prompt, and answered");
    assert.match(t.screen(), /\[a\] always: Bash\(echo ran-it:\*\) yes\n/, "the answer is written on the question's line, before the typed-ahead text");
    assert.match(after, /⎿ ran-it/);
  } finally {
    await fake.close();
  }
});
