// The package as a user gets it: `npm pack`, then an empty project installs the tarball offline
// (from the tarball and this lockfile's packages, which `npm ci` put in the npm cache), runs every
// example in examples/ against the fake servers, runs the `lethe` bin, type-checks a consumer under
// moduleResolution node16 and bundler, and `require("lethe")` from CommonJS.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { builtBin } from "../cli/support.ts";
import { anthropicInputTokens, startFakeAnthropic } from "../support/fakes/anthropic.ts";
import { openaiInputTokens, startFakeOpenAI } from "../support/fakes/openai.ts";
import { isSummaryRequest, SUMMARY_TEXT } from "../support/e2e.ts";

const ROOT = resolve(".");
/** What the examples import besides lethe, at the versions this repository's lockfile has. */
const EXAMPLE_DEPS = ["ai", "@ai-sdk/openai-compatible", "@langchain/core", "@langchain/openai", "langchain", "@langchain/langgraph", "openai", "@anthropic-ai/sdk", "zod"];
/** Examples run against a server whose limit (12k) is below the window lethe is told (16k): at most one refusal, recovered. */
const SMALLER_SERVER = new Set(["ai-sdk-stream.mjs", "ai-sdk-tool-loop-agent.mjs", "langchain-middleware.mjs"]);

type LockEntry = { version?: string; resolved?: string; integrity?: string; dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; peerDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }>; [k: string]: unknown };

/** A lockfile for the scratch project: its root, lethe from the tarball, and every package reachable from them in ours. */
function scratchLock(tarball: string, rootDeps: Record<string, string>): object {
  const ours = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; version: string; dependencies: Record<string, string>; peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional?: boolean }>; bin: Record<string, string>; engines: Record<string, string>; license: string };
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  const packages: Record<string, LockEntry> = {
    "": { name: "scratch", dependencies: rootDeps },
    "node_modules/lethe": {
      version: pkg.version,
      resolved: `file:${tarball.split("/").pop()}`,
      integrity,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
      peerDependencies: pkg.peerDependencies,
      peerDependenciesMeta: pkg.peerDependenciesMeta,
    },
  };
  const queue: [string, string][] = Object.keys(rootDeps).filter((d) => d !== "lethe").map((d) => ["", d]);
  for (const d of Object.keys(pkg.dependencies)) queue.push(["node_modules/lethe", d]);
  const find = (from: string, dep: string): string | undefined => {
    // Node's resolution over lockfile paths: from/node_modules/dep, then each parent's.
    let at = from;
    for (;;) {
      const key = `${at ? `${at}/` : ""}node_modules/${dep}`;
      if (ours.packages[key] && !key.startsWith("node_modules/lethe/")) return key;
      if (!at) return undefined;
      const i = at.lastIndexOf("/node_modules/");
      at = i < 0 ? "" : at.slice(0, i);
    }
  };
  while (queue.length > 0) {
    const [from, dep] = queue.shift()!;
    const key = find(from === "node_modules/lethe" ? "" : from, dep);
    if (!key || packages[key]) continue;
    const { dev: _d, devOptional: _o, peer: _p, ...entry } = ours.packages[key]!;
    // npm writes no `resolved` for registry packages; without it, npm would ask the registry where
    // the tarball is. The registry's own URL lets `npm ci --offline` take it from the cache by integrity.
    const name = key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
    entry.resolved ??= `https://registry.npmjs.org/${name}/-/${name.split("/").pop()}-${entry.version}.tgz`;
    packages[key] = entry;
    const e = ours.packages[key]!;
    const peers = Object.keys(e.peerDependencies ?? {}).filter((p) => !e.peerDependenciesMeta?.[p]?.optional);
    for (const d of [...Object.keys(e.dependencies ?? {}), ...Object.keys(e.optionalDependencies ?? {}), ...peers]) queue.push([key, d]);
  }
  return { name: "scratch", lockfileVersion: 3, requires: true, packages };
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", env: { ...process.env, ...env }, timeout: 300_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

function runAsync(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env } });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => done({ code, out }));
  });
}

const STEPS = 40;
/** STEPS lookups, then the answer; with `screenshots`, every fifth step takes a screenshot instead. */
function agentScript(screenshots = false) {
  let n = 0;
  return (body: any) => {
    if (isSummaryRequest(body) || /is about to be compacted/.test(JSON.stringify(body?.messages?.at(-1) ?? ""))) return { text: SUMMARY_TEXT };
    n++;
    if (n > STEPS) return { text: `read ${STEPS} files` };
    if (screenshots && n % 5 === 0) return { toolUses: [{ name: "screenshot", input: { page: `page ${n}` } }] };
    return { toolUses: [{ name: "lookup", input: { command: `cat data/file${n}.txt` } }] };
  };
}

test("npm pack → installed offline in an empty project: every example runs against the fake servers, the bin runs, types resolve (node16, bundler), require works", { timeout: 600_000 }, async () => {
  builtBin(); // dist/ is fresh
  const tmp = mkdtempSync(join(tmpdir(), "lethe-pack-"));
  try {
    // 1. The tarball: what a user downloads, and nothing they do not need.
    const packed = run("npm", ["pack", "--ignore-scripts", "--pack-destination", tmp, "--json"], ROOT);
    assert.equal(packed.code, 0, packed.out);
    const tarball = join(tmp, readdirSync(tmp).find((f) => f.endsWith(".tgz"))!);
    const files = run("tar", ["-tzf", tarball], tmp).out.split("\n").filter(Boolean);
    assert.ok(files.includes("package/dist/index.js") && files.includes("package/dist/index.d.ts") && files.includes("package/bin/lethe.js"));
    assert.deepEqual(files.filter((f) => /^package\/(test|bench|src|scripts|\.ci|node_modules)\//.test(f)), [], "no tests, benchmarks, sources or scripts");
    // The licence ships; no source map points at a source that does not (the README's links: links.test.ts).
    assert.ok(files.includes("package/LICENSE"), "LICENSE in the tarball");
    assert.deepEqual(files.filter((f) => f.endsWith(".map")), [], "no source maps (src/ is not shipped)");

    // 2. An empty project: lethe and what the examples use, from the tarball and the npm cache only.
    const project = join(tmp, "project");
    mkdirSync(project);
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
    const deps: Record<string, string> = { lethe: `file:${tarball.split("/").pop()}` };
    for (const d of EXAMPLE_DEPS) deps[d] = lock.packages[`node_modules/${d}`]!.version!;
    copyFileSync(tarball, join(project, tarball.split("/").pop()!));
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module", dependencies: deps }, null, 2));
    writeFileSync(join(project, "package-lock.json"), JSON.stringify(scratchLock(join(project, tarball.split("/").pop()!), deps), null, 2));
    const installed = run("npm", ["ci", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], project);
    assert.equal(installed.code, 0, installed.out);

    // 3. Every example, against the fake server it speaks to.
    const examples = readdirSync(join(ROOT, "examples")).filter((f) => f.endsWith(".mjs"));
    assert.deepEqual(examples.sort(), ["ai-sdk-agent.mjs", "ai-sdk-route.mjs", "ai-sdk-stream.mjs", "ai-sdk-tool-loop-agent.mjs", "anthropic-loop.mjs", "langchain-agent.mjs", "langchain-middleware.mjs", "openai-loop.mjs"]);
    // The route is a server a browser drives: test/adapters/ai-sdk-route.test.ts runs it.
    for (const example of examples.filter((e) => e !== "ai-sdk-route.mjs")) {
      copyFileSync(join(ROOT, "examples", example), join(project, example));
      const anthropic = example.startsWith("anthropic");
      const limit = SMALLER_SERVER.has(example) ? 12_000 : 16_000;
      const script = agentScript(example === "ai-sdk-agent.mjs");
      const fake = anthropic ? await startFakeAnthropic({ script, contextWindow: limit }) : await startFakeOpenAI({ script, contextWindow: limit });
      try {
        const env = anthropic ? { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "k" } : { LETHE_BASE_URL: fake.url, OPENAI_API_KEY: "k" };
        const r = await runAsync(process.execPath, [example], project, { ...env, LETHE_SESSION_DIR: mkdtempSync(join(tmp, "session-")) });
        assert.equal(r.code, 0, `${example}: ${r.out}`);
        assert.match(r.out, new RegExp(`answer: read ${STEPS} files`), example);
        assert.match(r.out, /compacted: \d+ → \d+ tokens|snipped: \d+ messages/, `${example} compacted its context`);
        const over = fake.requests.filter((b) => (anthropic ? anthropicInputTokens(b) : openaiInputTokens(b)) > limit);
        // Told 16k on a 12k server, the one refusal lethe learns the limit from; on a 16k server, none.
        assert.ok(over.length <= (limit < 16_000 ? 1 : 0), `${example}: ${over.length} requests over the server's ${limit}`);
        assert.doesNotMatch(r.out, /error part/, `${example}: the stream never showed a refusal`);
        if (example === "ai-sdk-stream.mjs" || example === "ai-sdk-agent.mjs") assert.match(r.out, /your prepareStep ran ([4-9]\d|\d{3,}) times/, "the caller's prepareStep ran on every step");
        if (example === "ai-sdk-agent.mjs") {
          // A 360 KB screenshot every fifth step through @ai-sdk/openai-compatible: an image to the model, never base64 text.
          assert.ok(fake.requests.some((b) => JSON.stringify(b.messages).includes('"image_url"')), "the screenshots reached the model as images");
          assert.ok(fake.requests.every((b) => b.messages.filter((m: { role: string }) => m.role === "tool").every((m: { content: unknown }) => !JSON.stringify(m.content).includes("iVBORw0KGgo"))), "never as base64 in a tool message");
        }
        if (example === "langchain-middleware.mjs") assert.match(r.out, /summaries while resuming: 0\)/, "resumed from the checkpoint with no second summary");
      } finally {
        await fake.close();
      }
    }

    // 4. The bin, from the installed package (its compiled dist/).
    const bin = run(join(project, "node_modules", ".bin", "lethe"), ["--version"], project);
    assert.equal(bin.code, 0, bin.out);
    assert.match(bin.out, /\d+\.\d+\.\d+/);

    // 5. Types, as a TypeScript user resolves them.
    writeFileSync(
      join(project, "consumer.ts"),
      [
        'import { createEngine, LetheError, type Message, type CompactionEvent } from "lethe";',
        'import { createToolset, runAgent } from "lethe/agent";',
        'import { createAnthropicClient } from "lethe/clients";',
        'import { createAISDKAdapter } from "lethe/ai-sdk";',
        'import { createLangChainAdapter } from "lethe/langchain";',
        'import { createOpenAIAdapter } from "lethe/openai";',
        "const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 8_000 });",
        'const history: Message[] = [{ role: "user", content: "hi" }];',
        "const kinds: CompactionEvent[\"kind\"][] = engine.prepare(history).events.map((e) => e.kind);",
        "export const all = [kinds, LetheError, createToolset, runAgent, createAnthropicClient, createAISDKAdapter({ engine }), createLangChainAdapter({ engine }), createOpenAIAdapter({ engine })];",
        "",
      ].join("\n"),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    for (const [module, resolution] of [["node16", "node16"], ["esnext", "bundler"]]) {
      const r = run(process.execPath, [tsc, "--noEmit", "--strict", "--skipLibCheck", "--target", "es2022", "--module", module!, "--moduleResolution", resolution!, "--types", "node", "--typeRoots", join(ROOT, "node_modules", "@types"), "consumer.ts"], project);
      assert.equal(r.code, 0, `${resolution}: ${r.out}`);
    }

    // 6. CommonJS: require("lethe") works (Node ≥ 20.19 loads ES modules from require).
    const cjs = run(process.execPath, ["-e", 'const l = require("lethe"); console.log(typeof l.createEngine)'], project);
    assert.equal(cjs.code, 0, cjs.out);
    assert.match(cjs.out, /^function/m);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
