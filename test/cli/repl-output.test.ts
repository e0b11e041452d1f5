// What the REPL shows, in a real terminal: Markdown rendered (no raw ** or fences), an edit as a
// diff, and after each turn the context as a share of the auto-compact threshold with the
// session's cost (not the turn's).
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

const REPLY = [
  "## Findings",
  "",
  "The bug is in **parseArgs**: it reads `argv[i + 1]` *before* checking the bounds.",
  "",
  "- first cause",
  "- second cause",
  "",
  "```ts",
  "const value = argv[++i];",
  "```",
  "",
  "| file | line |",
  "|---|---|",
  "| args.ts | 42 |",
].join("\n");

test("REPL in tmux: Markdown is rendered (no raw ** or fences, a table laid out), an edit shows as a diff, the status line has the % of the threshold and the session cost", { skip: TMUX_SKIP }, async () => {
  const ws = makeWorkspace();
  workspaces.push(ws);
  writeFileSync(join(ws.dir, "notes.txt"), "alpha\nbeta\ngamma\n");
  const fake = await startFake("anthropic", {
    script: (body: any): Step => {
      const last = JSON.stringify(body.messages.at(-1));
      if (/tool_result/.test(last)) return { text: "Edited." };
      if (/edit it/.test(last)) return { toolUses: [{ name: "edit_file", input: { path: "notes.txt", old_string: "beta", new_string: "BETA" } }] };
      return { text: REPLY };
    },
  });
  try {
    const t = new Terminal("output");
    t.start(ws, cliEnv(ws, keyEnv("anthropic")), [...providerArgs("anthropic", fake), "--cwd", ws.dir, "--yes", "--context-window", "100000", "--max-output-tokens", "4000"]);
    await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");
    let m = t.mark();
    t.type("what is wrong?");
    const shown = await t.waitFor(/args\.ts[\s\S]*tokens in context[^\n]*\]\n> $/m, m, "the rendered answer");
    assert.doesNotMatch(shown, /\*\*|```|\*before\*/, "no raw Markdown");
    assert.match(shown, /The bug is in parseArgs: it reads argv\[i \+ 1\] before checking the bounds\./);
    assert.match(shown, /const value = argv\[\+\+i\];/);
    assert.match(shown, /│ args\.ts │ 42\s*│/, "the table is laid out");
    const first = /\[([\d,]+) \/ 100,000 tokens in context · (\d+)% of auto-compact at ([\d,]+) · session \$([\d.]+)\]/.exec(shown);
    assert.ok(first, shown);
    const pct = Math.round((Number(first[1]!.replace(/,/g, "")) / Number(first[3]!.replace(/,/g, ""))) * 100);
    assert.equal(Number(first[2]), pct);

    m = t.mark();
    t.type("edit it");
    const edited = await t.waitFor(/Edited\.[\s\S]*tokens in context[^\n]*\]\n> $/m, m, "the edit");
    assert.match(edited, /⎿ Edited notes\.txt: 1 replacement[\s\S]*-beta[\s\S]*\+BETA/);
    const second = /session \$([\d.]+)\]/.exec(edited);
    assert.ok(Number(second![1]) > Number(first[4]), "the session's cost grows: it is not the turn's");
    t.type("/exit");
    await t.waitFor(/LETHE-EXITED 0/);
  } finally {
    await fake.close();
  }
});
