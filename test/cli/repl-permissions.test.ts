// The permission question in a real terminal: one key answers it (y / n / a), "a" remembers the
// rule shown, Ctrl-C at the question cancels the turn and the model hears the call was not run.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Step } from "../support/fakes/common.ts";
import { Terminal, TMUX_SKIP, hasTmux, tmux } from "./tmux.ts";
import { type Workspace, cliEnv, keyEnv, makeWorkspace, providerArgs, startFake } from "./support.ts";

const workspaces: Workspace[] = [];
after(() => {
  if (hasTmux) tmux("kill-server");
  for (const ws of workspaces) ws.cleanup();
});

test("REPL in tmux: y, n and a are single keys; 'a' is remembered for the rule; Ctrl-C at the question tells the model the command was not run", { skip: TMUX_SKIP }, async () => {
  const ws = makeWorkspace();
  workspaces.push(ws);
  const fake = await startFake("anthropic", {
    script: (body: any): Step => {
      const last = body.messages.at(-1);
      const text = JSON.stringify(last);
      if (/tool_result/.test(text)) return { text: /not run|denied/.test(text) ? "It was refused." : "It ran." };
      const m = /make (\w+)/.exec(text);
      return m ? { toolUses: [{ name: "bash", input: { command: `touch ${m[1]}.txt` } }] } : { text: "ok" };
    },
  });
  try {
    const t = new Terminal("perm");
    t.start(ws, cliEnv(ws, keyEnv("anthropic")), [...providerArgs("anthropic", fake), "--cwd", ws.dir]);
    await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");

    let m = t.mark();
    t.type("make one");
    await t.waitFor(/Allow bash\? touch one\.txt\s+\[y\] yes  \[n\] no  \[a\] always: Bash\(touch one\.txt:\*\) $/m, m, "the question");
    t.keys("n");
    await t.waitFor(/ no\n[\s\S]*It was refused\.[\s\S]*> $/m, m, "no");
    assert.ok(!existsSync(join(ws.dir, "one.txt")));

    m = t.mark();
    t.type("make two");
    await t.waitFor(/Allow bash\? touch two\.txt/, m, "the question");
    t.keys("y");
    await t.waitFor(/ yes\n[\s\S]*It ran\.[\s\S]*> $/m, m, "yes");
    assert.ok(existsSync(join(ws.dir, "two.txt")));
    assert.doesNotMatch(t.screen().slice(m), /> y/, "the key did not land in the input line");

    m = t.mark();
    t.type("make three");
    await t.waitFor(/Allow bash\? touch three\.txt/, m, "the question");
    t.keys("a");
    await t.waitFor(/allowed for this session: Bash\(touch three\.txt:\*\)[\s\S]*It ran\.[\s\S]*> $/m, m, "always");
    m = t.mark();
    t.type("make three");
    await t.waitFor(/It ran\.[\s\S]*> $/m, m, "no question the second time");
    assert.doesNotMatch(t.screen().slice(m), /Allow bash\?/);

    m = t.mark();
    const before = fake.requests.length;
    t.type("make four");
    await t.waitFor(/Allow bash\? touch four\.txt/, m, "the question");
    t.keys("C-c");
    await t.waitFor(/interrupted[\s\S]*Interrupted\.[\s\S]*> $/m, m, "the turn is cancelled");
    assert.ok(!existsSync(join(ws.dir, "four.txt")));
    m = t.mark();
    t.type("and now?");
    await t.waitFor(/(ok|It was refused\.)[\s\S]*> $/m, m, "the session goes on");
    const sent = JSON.stringify(fake.requests.slice(before));
    assert.match(sent, /interrupted|not run/, "the model is told the call was not run");
    t.type("/exit");
    await t.waitFor(/LETHE-EXITED 0/);
  } finally {
    await fake.close();
  }
});
