// The public surface, as a user of the built package sees it: `lethe` (the engine, no provider SDK
// and no agent loop in its import graph), `lethe/agent` (the loop with the built-in tools) and
// `lethe/clients` (the SDK-backed clients), one error base with a code. Runs against dist/
// (npm test builds it) through the package's own exports map.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { builtBin } from "../cli/support.ts";

/** dist/ built from the current sources (a stale build would test old code). */
const assertFreshDist = () => void builtBin();
import { startFakeAnthropic } from "../support/fakes/anthropic.ts";

/** Every module URL a fresh node process resolves while importing `specifier` (from this checkout). */
function loadedBy(specifier: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), "lethe-surface-"));
  try {
    const log = join(dir, "modules.log");
    writeFileSync(join(dir, "hook.mjs"), `import { appendFileSync } from "node:fs";\nexport async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + "\\n"); return r; }\n`);
    writeFileSync(join(dir, "register.mjs"), `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(dir, "hook.mjs")).href)});\n`);
    writeFileSync(log, "");
    const r = spawnSync(process.execPath, ["--import", join(dir, "register.mjs"), "--input-type=module", "-e", `await import(${JSON.stringify(specifier)});`], { cwd: process.cwd(), encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    return spawnSync("cat", [log], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The built package through its own exports map (typed loosely: dist/ is built after the typecheck). */
const importBuilt = (specifier: string): Promise<any> => import(specifier);

const SDK = /node_modules\/(?:@anthropic-ai\/sdk|openai)\//;

test("importing `lethe` loads no provider SDK, no agent loop and not the o200k tables; `lethe/clients` does load the SDKs", () => {
  assertFreshDist();
  const root = loadedBy("lethe");
  assert.ok(root.some((u) => u.endsWith("/dist/engine/index.js")), "the engine is in the root");
  assert.deepEqual(root.filter((u) => SDK.test(u)), [], "no SDK module");
  assert.deepEqual(root.filter((u) => /\/dist\/(?:agent|tools|cli)\//.test(u)), [], "no loop, tools or CLI");
  assert.deepEqual(root.filter((u) => /gpt-tokenizer/.test(u)), [], "exact counting loads on first use");
  const clients = loadedBy("lethe/clients");
  assert.ok(clients.some((u) => /@anthropic-ai\/sdk/.test(u)) && clients.some((u) => /node_modules\/openai\//.test(u)));
});

test("one error base: every error the root exports is a LetheError with a code and an exit status", async () => {
  assertFreshDist();
  const lethe = await importBuilt("lethe");
  const made = [
    new lethe.LetheInputError("history", "must be an array"),
    new lethe.InvariantError([{ kind: "empty_message", index: 0, message: "x" } as never]),
    new lethe.OverWindowError(10, 5),
    new lethe.ThrashError(3),
    new lethe.CompactionBlockedError("blocked"),
    new lethe.ModelError("auth", "bad key"),
    new lethe.TranscriptVersionError("/x", 9),
    new lethe.SessionLockedError("s", 1),
  ];
  for (const e of made) {
    assert.ok(e instanceof lethe.LetheError && lethe.isLetheError(e), e.constructor.name);
    assert.equal(typeof e.code, "string");
    assert.equal(e.exitCode, lethe.EXIT_CODES[e.code]);
    assert.equal(e.name, e.constructor.name);
  }
  assert.equal(made[0]!.code, "bad_input");
  assert.equal(made[5]!.code, "model");
});

test("`lethe/agent`: runAgent with createToolset() reads a file of the workspace (the built-in tools are exported)", async () => {
  assertFreshDist();
  const { createEngine } = await importBuilt("lethe");
  const { runAgent, createToolset, TOOL_NAMES } = await importBuilt("lethe/agent");
  const { createAnthropicClient } = await importBuilt("lethe/clients");
  assert.deepEqual(createToolset().map((t: { name: string }) => t.name).sort(), [...TOOL_NAMES].sort());
  const dir = mkdtempSync(join(tmpdir(), "lethe-agent-"));
  writeFileSync(join(dir, "notes.txt"), "the answer is 42\n");
  let n = 0;
  const fake = await startFakeAnthropic({
    script: (body: any) => {
      n++;
      if (n === 1) return { toolUses: [{ name: "read_file", input: { path: "notes.txt" } }] };
      const last = JSON.stringify(body.messages.at(-1));
      return { text: /the answer is 42/.test(last) ? "It says 42." : "I could not read it." };
    },
  });
  try {
    const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 8_000 });
    const client = createAnthropicClient({ baseURL: fake.url, apiKey: "test-key" });
    const r = await runAgent([], "What does notes.txt say?", {
      engine,
      client,
      model: "claude-sonnet-4-6",
      toolset: createToolset(),
      toolContext: { workspace: dir, readState: new Map(), todos: [] },
      maxOutputTokens: 8_000,
    });
    assert.equal(r.text, "It says 42.");
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
