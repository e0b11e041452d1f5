// The REPL's keys in a real terminal, as a Claude Code user reaches for them (issue 25, item 11):
// Shift+Tab cycles the permission mode, Ctrl+O shows a collapsed tool output in full, keys
// typed while lethe starts are not echoed as `^[[A`, and a resumed session's replies are rendered.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import type { Step } from "../support/fakes/common.ts";
import { Terminal, TMUX_SKIP, hasTmux, tmux } from "./tmux.ts";
import { type Workspace, cliEnv, keyEnv, makeWorkspace, providerArgs, runCli, startFake } from "./support.ts";

const workspaces: Workspace[] = [];
after(() => {
  if (hasTmux) tmux("kill-server");
  for (const ws of workspaces) ws.cleanup();
});

/** Where the last line on screen starts: a key that prints above the prompt replaces that line. */
const lineStart = (t: Terminal) => {
  const text = t.screen().trimEnd();
  return text.lastIndexOf("\n") + 1;
};

const workspace = (settings?: unknown) => {
  const ws = makeWorkspace(settings);
  workspaces.push(ws);
  return ws;
};

test("REPL in tmux: Shift+Tab cycles default → acceptEdits → plan → default, says so on one line, and the next tool call follows the new mode", { skip: TMUX_SKIP }, async () => {
  const ws = workspace();
  const fake = await startFake("anthropic", {
    script: (body: any): Step => {
      const last = JSON.stringify(body.messages.at(-1));
      if (/tool_result/.test(last)) return { text: /Not run|denied/.test(last) ? "Refused." : "Done." };
      if (/write it/.test(last)) return { toolUses: [{ name: "write_file", input: { path: "written.txt", content: "x\n" } }] };
      if (/run it/.test(last)) return { toolUses: [{ name: "bash", input: { command: "touch ran.txt" } }] };
      return { text: "ok" };
    },
  });
  try {
    const t = new Terminal("mode");
    t.start(ws, cliEnv(ws, keyEnv("anthropic")), [...providerArgs("anthropic", fake), "--cwd", ws.dir]);
    await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");

    let m = lineStart(t);
    t.keys("BTab"); // ESC [ Z
    await t.waitFor(/⏵ permissions: acceptEdits · edits run without asking; commands still ask \(shift\+tab to cycle\)\n> $/m, m, "the acceptEdits notice, then the prompt again");
    m = t.mark();
    t.type("write it");
    await t.waitFor(/Done\.[\s\S]*> $/m, m, "the write, without a question");
    assert.doesNotMatch(t.screen().slice(m), /Allow write_file\?/);
    assert.ok(existsSync(join(ws.dir, "written.txt")));

    m = lineStart(t);
    t.keys("BTab");
    await t.waitFor(/⏵ permissions: plan · read and plan only/, m, "the plan notice");
    m = t.mark();
    t.type("run it");
    await t.waitFor(/Refused\.[\s\S]*> $/m, m, "the command refused by plan mode");
    assert.doesNotMatch(t.screen().slice(m), /Allow bash\?/);
    assert.ok(!existsSync(join(ws.dir, "ran.txt")));
    const planned = fake.requests.at(-1);
    assert.match(JSON.stringify(planned.system), /<permission-mode>plan/, "the system prompt says plan mode");
    assert.match(JSON.stringify(planned.messages.at(-1)), /plan mode/, "the model is told why");

    // Half a line typed, then Shift+Tab: the notice goes above, the typed text stays in the prompt.
    m = lineStart(t);
    t.keys("-l", "run it");
    t.keys("BTab");
    await t.waitFor(/⏵ permissions: default · asks before commands and edits[^\n]*\n> run it$/m, m, "back to default, the line kept");
    t.keys("Enter");
    await t.waitFor(/Allow bash\? touch ran\.txt/, m, "default mode asks again");
    t.keys("n");
    await t.waitFor(/Refused\.[\s\S]*> $/m, m, "no");
    assert.doesNotMatch(JSON.stringify(fake.requests.at(-1).system), /<permission-mode>plan/, "the plan note is gone");
  } finally {
    await fake.close();
  }
});

test("REPL in tmux: a long tool output is one line that says ctrl+o expands it; Ctrl+O prints it in full", { skip: TMUX_SKIP }, async () => {
  const ws = workspace();
  const fake = await startFake("anthropic", {
    script: (body: any): Step => {
      const last = JSON.stringify(body.messages.at(-1));
      if (/tool_result/.test(last)) return { text: "Counted." };
      if (/count/.test(last)) return { toolUses: [{ name: "bash", input: { command: "seq 1001 1060" } }] };
      return { text: "ok" };
    },
  });
  try {
    const t = new Terminal("expand");
    t.start(ws, cliEnv(ws, keyEnv("anthropic")), [...providerArgs("anthropic", fake), "--cwd", ws.dir, "--yes"]);
    await t.waitFor(/\/help for commands[\s\S]*> $/m, 0, "the banner");
    let m = lineStart(t);
    t.keys("C-o");
    await t.waitFor(/no collapsed tool output to expand yet\)\n> $/m, m, "nothing to expand yet");
    m = t.mark();
    t.type("count");
    const shown = await t.waitFor(/Counted\.[\s\S]*> $/m, m, "the turn");
    // 60 numbers, then the line "exit code: 0".
    assert.match(shown, /⎿ 1001 … 60 more lines \(ctrl\+o to expand\)/);
    assert.doesNotMatch(shown, /^1030$/m, "collapsed");
    m = lineStart(t);
    t.keys("C-o");
    const full = await t.waitFor(/── bash\(seq 1001 1060\): all 61 lines ──\n[\s\S]*1060\n {4}exit code: 0\n> $/m, m, "the whole output, then the prompt");
    const body = full.slice(full.indexOf("all 61 lines"));
    const numbers = [...body.matchAll(/^ {4}(\d{4})$/gm)].map((x) => Number(x[1]));
    assert.deepEqual(numbers, Array.from({ length: 60 }, (_, k) => 1001 + k), "every line, in order");
  } finally {
    await fake.close();
  }
});

test("REPL in tmux: an arrow key pressed while lethe starts is not echoed as ^[[A; text typed then lands in the prompt", { skip: TMUX_SKIP }, async () => {
  const ws = workspace();
  // A local OpenAI-compatible address: lethe asks it (as it would Ollama) for the model's context
  // before the REPL starts. That question is held until the keys are sent: they arrive mid start-up.
  let probed!: () => void;
  const probe = new Promise<void>((r) => (probed = r));
  let answer!: () => void;
  const answered = new Promise<void>((r) => (answer = r));
  const server = createServer((req, res) => {
    if (req.url === "/api/ps") {
      probed();
      void answered.then(() => res.writeHead(404).end());
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  try {
    const t = new Terminal("startup");
    t.start(ws, cliEnv(ws, keyEnv("openai")), ["--provider", "openai", "--base-url", `http://127.0.0.1:${port}/v1`, "--model", "gpt-4o", "--cwd", ws.dir]);
    await probe;
    t.keys("Up");
    t.keys("-l", "typed early");
    answer();
    await t.waitFor(/\/help for commands[\s\S]*> typed early$/m, 0, "the banner, and the early text in the prompt");
    assert.doesNotMatch(t.screen(), /\^\[\[A|\^\[/, "no escape sequence echoed");
    assert.doesNotMatch(t.screen().slice(0, t.screen().indexOf("lethe ")), /typed early/, "nothing echoed above the banner");
  } finally {
    answer();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test("REPL in tmux: --continue shows the last replies rendered as Markdown, as they were live (no raw **)", { skip: TMUX_SKIP }, async () => {
  const ws = workspace();
  const fake = await startFake("anthropic", { script: [{ text: "**Result**: all `good`.\n\n- first point\n- second point" }] });
  try {
    const env = cliEnv(ws, keyEnv("anthropic"));
    const r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p", "how did it go?"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\*\*Result\*\*/, "headless stdout keeps the model's text as written");
    const t = new Terminal("resume-md");
    t.start(ws, env, [...providerArgs("anthropic", fake), "--cwd", ws.dir, "--continue"]);
    const shown = await t.waitFor(/last 1 of 1 exchange\(s\)[\s\S]*> $/m, 0, "the replay");
    assert.match(shown, /> how did it go\?/);
    assert.match(shown, /^ {2}Result: all good\.$/m, "emphasis and code rendered");
    assert.match(shown, /^ {2}\s*[•*-] first point$/m, "the list laid out");
    assert.doesNotMatch(shown, /\*\*Result\*\*|`good`/, "no raw Markdown");
  } finally {
    await fake.close();
  }
});
