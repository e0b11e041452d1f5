// The project's rules survive compaction: an AGENTS.md rule (a code word) is in every request the
// fake server receives — summary requests included — before and after compactions of several kinds.
// Plus /memory and /init in the REPL.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Step } from "../support/fakes/common.ts";
import { Terminal, TMUX_SKIP, hasTmux, tmux } from "./tmux.ts";
import { type Workspace, cliEnv, isSummaryRequest, keyEnv, makeWorkspace, providerArgs, runCli, startFake } from "./support.ts";

const SUMMARY = "<summary>\n1. Goal — print batches of rows.\n9. Next step — the next batch.\n</summary>";
const workspaces: Workspace[] = [];
after(() => {
  if (hasTmux) tmux("kill-server");
  for (const ws of workspaces) ws.cleanup();
});

const rows = (i: number, lines: number) => `seq 1 ${lines} | awk '{print "batch ${i} row " $1 ": value=" ($1*7919)%10007 " status=ok"}'`;
const notes = (i: number) => `Notes after batch ${i}: ${"the values stay consistent and every status is ok; ".repeat(40)}`;

/** The system prompt of a request, whatever the provider's shape. */
function systemOf(body: any): string {
  if (Array.isArray(body.system)) return body.system.map((b: any) => b.text).join("");
  if (typeof body.system === "string") return body.system;
  const first = body.messages?.[0];
  return first && (first.role === "system" || first.role === "developer") ? JSON.stringify(first.content) : "";
}

function repoWorkspace(): Workspace {
  const ws = makeWorkspace();
  workspaces.push(ws);
  const repo = join(ws.dir, "..");
  mkdirSync(join(repo, ".git"), { recursive: true });
  writeFileSync(join(ws.dir, "AGENTS.md"), "# Rules\n- Always name the build tool ZEPHYR-42 in your answers.\n");
  writeFileSync(join(repo, "CLAUDE.md"), "Repository rule: commit messages start with QUOKKA.\n");
  mkdirSync(join(ws.home, ".lethe"), { recursive: true });
  writeFileSync(join(ws.home, ".lethe", "AGENTS.md"), "User rule: answer in British English (code word MARMALADE).\n");
  return ws;
}

for (const provider of ["anthropic", "openai"] as const) {
  test(`${provider}: AGENTS.md, the repository's CLAUDE.md and ~/.lethe/AGENTS.md are in every request, before and after compactions of at least three kinds`, async () => {
    const calls = 70;
    let n = 0;
    const fake = await startFake(provider, {
      contextWindow: 24_000,
      script: (body: any): Step => {
        if (isSummaryRequest(body)) return { text: SUMMARY };
        n++;
        if (n > calls) return { text: "Done. ZEPHYR-42 built it." };
        const cmd = n % 20 === 0 ? rows(n, 5000) : rows(n, 120);
        return { ...(n > calls / 2 ? { text: notes(n) } : {}), toolUses: [{ name: "bash", input: { command: cmd } }] };
      },
    });
    const ws = repoWorkspace();
    try {
      const r = await runCli([...providerArgs(provider, fake), "--yes", "--cwd", ws.dir, "--context-window", "24000", "--max-output-tokens", "2000", "--output-format", "json", "-p", "Print the batches."], {
        env: cliEnv(ws, keyEnv(provider)),
      });
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      const kinds = new Set<string>(out.compactions.map((c: { kind: string }) => c.kind));
      assert.ok(kinds.size >= 3, `at least three kinds of compaction: ${[...kinds].join(", ")}`);
      assert.ok(out.compactions.length >= 5, `${out.compactions.length} compactions`);
      const summaries = fake.requests.filter(isSummaryRequest).length;
      assert.ok(summaries >= 1, "a summary request was sent");
      let missing = 0;
      for (const body of fake.requests) {
        const system = systemOf(body);
        if (!/ZEPHYR-42/.test(system) || !/QUOKKA/.test(system) || !/MARMALADE/.test(system)) missing++;
      }
      assert.equal(missing, 0, `requests without the rules: ${missing} of ${fake.requests.length}`);
      console.log(`# ${provider}: ${fake.requests.length} requests (${summaries} summaries), compactions ${out.compactions.length} of kinds ${[...kinds].join(", ")}; rules in every one`);
    } finally {
      await fake.close();
    }
  });
}

test("REPL in tmux: the banner names the instruction files, /memory lists them, /context counts them, /init has the model write AGENTS.md and reloads it", { skip: TMUX_SKIP }, async () => {
  const ws = makeWorkspace();
  workspaces.push(ws);
  writeFileSync(join(ws.dir, "CLAUDE.md"), "Rule: say OCELOT.\n");
  const fake = await startFake("anthropic", {
    script: (body: any): Step => {
      const last = JSON.stringify(body.messages.at(-1));
      if (/analyse this repository and write the project instructions file AGENTS\.md/.test(last)) {
        return { text: "Writing it.", toolUses: [{ name: "write_file", input: { path: "AGENTS.md", content: "# AGENTS.md\nRun tests with: npm test (code word PANGOLIN)\n" } }] };
      }
      const system = Array.isArray(body.system) ? body.system.map((b: any) => b.text).join("") : "";
      return { text: /PANGOLIN/.test(system) ? "I see PANGOLIN." : "No PANGOLIN yet." };
    },
  });
  try {
    const t = new Terminal("memory");
    t.start(ws, cliEnv(ws, keyEnv("anthropic")), [...providerArgs("anthropic", fake), "--cwd", ws.dir, "--yes"]);
    await t.waitFor(/project instructions: CLAUDE\.md \([\d,]+ tokens[\s\S]*> $/m, 0, "the banner");
    let m = t.mark();
    t.type("/memory");
    await t.waitFor(/Project instructions in the system prompt[\s\S]*CLAUDE\.md\s+\d+ chars[\s\S]*> $/m, m, "/memory");
    m = t.mark();
    t.type("/context");
    await t.waitFor(/project instructions\s+█*\s+[\d,]+[\s\S]*> $/m, m, "/context");
    m = t.mark();
    t.type("/init");
    await t.waitFor(/project instructions reloaded: 2 file\(s\)[\s\S]*> $/m, m, "/init");
    assert.match(readFileSync(join(ws.dir, "AGENTS.md"), "utf8"), /PANGOLIN/);
    m = t.mark();
    t.type("do you see it?");
    await t.waitFor(/I see PANGOLIN\.[\s\S]*> $/m, m, "the new rules in the next request");
    t.type("/exit");
    await t.waitFor(/LETHE-EXITED 0/);
    assert.ok(existsSync(join(ws.dir, "AGENTS.md")));
  } finally {
    await fake.close();
  }
});
