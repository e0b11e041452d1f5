// What the REPL reads, in a real terminal: a bracketed paste of 30 lines is one message (one
// request), multi-line input with `\` + Enter and Alt+Enter, the prompt history across restarts,
// and Tab completion of slash commands.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Step } from "../support/fakes/common.ts";
import { Terminal, TMUX_SKIP, hasTmux, tmux } from "./tmux.ts";
import { type Workspace, cliEnv, keyEnv, makeWorkspace, providerArgs, startFake } from "./support.ts";

const workspaces: Workspace[] = [];
after(() => {
  if (hasTmux) tmux("kill-server");
  for (const ws of workspaces) ws.cleanup();
});

/** The user's text of a request's last message. */
function typed(body: any): string {
  const m = body.messages.at(-1);
  return typeof m.content === "string" ? m.content : m.content.filter((b: any) => b.type === "text").map((b: any) => b.text).join("");
}

test("REPL in tmux: a 30-line bracketed paste is one message; \\ + Enter and Alt+Enter continue the message; history survives a restart; Tab completes /com", { skip: TMUX_SKIP }, async () => {
  const ws = makeWorkspace();
  workspaces.push(ws);
  let n = 0;
  const fake = await startFake("anthropic", { script: (): Step => ({ text: `Reply ${++n}.` }) });
  try {
    const env = cliEnv(ws, keyEnv("anthropic"));
    const args = [...providerArgs("anthropic", fake), "--cwd", ws.dir];
    const t = new Terminal("input");
    t.start(ws, env, args);
    await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");

    // A paste, the way a terminal sends it (tmux paste-buffer -p wraps it in ESC[200~ … ESC[201~).
    const pasted = Array.from({ length: 30 }, (_, i) => `stack frame ${i + 1}: at fn${i} (src/file${i}.ts:${i + 10}:5)`).join("\n");
    const buf = join(ws.dir, "..", "paste.txt");
    writeFileSync(buf, pasted);
    assert.equal(tmux("load-buffer", "-b", "p", buf).status, 0);
    let m = t.mark();
    assert.equal(tmux("paste-buffer", "-p", "-b", "p", "-t", "input").status, 0);
    await t.waitFor(/\[Pasted text #1 \+30 lines\]/, m, "the paste placeholder");
    t.keys("-l", " why does this fail?");
    t.keys("Enter");
    await t.waitFor(/Reply 1\.[\s\S]*> $/m, m, "one answer");
    assert.equal(fake.requests.length, 1, "one request for the whole paste");
    assert.equal(typed(fake.requests[0]), `${pasted} why does this fail?`);

    // Multi-line: a trailing backslash, then Alt+Enter (ESC CR).
    m = t.mark();
    t.type("first line \\");
    await t.waitFor(/… $/m, m, "the continuation prompt");
    t.keys("-l", "second line");
    t.keys("M-Enter");
    t.type("third line");
    await t.waitFor(/Reply 2\.[\s\S]*> $/m, m, "the answer to the three lines");
    assert.equal(fake.requests.length, 2);
    assert.equal(typed(fake.requests[1]), "first line \nsecond line\nthird line");

    // Tab completion.
    m = t.mark();
    t.keys("-l", "/com");
    t.keys("Tab");
    await t.waitFor(/^ ?\/compact\s*$/m, m, "the completion");
    t.keys("C-u");
    t.type("/exit");
    await t.waitFor(/LETHE-EXITED 0/, m, "exit");
    tmux("kill-session", "-t", "input");

    // History across a restart: Up recalls /exit, then the last message (three lines, shown on one).
    const t2 = new Terminal("input2");
    t2.start(ws, env, args);
    await t2.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");
    m = t2.mark();
    t2.keys("Up");
    await t2.waitFor(/\/exit/, m, "the newest entry");
    t2.keys("Up");
    await t2.waitFor(/first line {2}↵ second line ↵ third line/, m, "the recalled entry");
    t2.keys("Enter");
    await t2.waitFor(/Reply 3\.[\s\S]*> $/m, m, "the answer");
    assert.equal(typed(fake.requests[2]), "first line \nsecond line\nthird line", "sent with its newlines");
    t2.type("/exit");
    await t2.waitFor(/LETHE-EXITED 0/);
  } finally {
    await fake.close();
  }
});
