// What `import "lethe"` loads (issue 25, item 8): zod was half of the root's start-up, for a config
// schema most processes never need. The root now loads it only to word a bad config's error, and
// that error reads as it did. Runs against dist/ (npm test builds it); timing is bench:startup's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { builtBin } from "../cli/support.ts";

/** dist/ built from the current sources (a stale build would test old code). */
const assertFreshDist = () => void builtBin();

/**
 * Every module a fresh node process loads while running `code` (an ES module, from this checkout):
 * the URLs its ES imports resolve to (a resolve hook) and the files in require's cache at the end
 * (a hook does not see require() on Node 20, and zod can be required as CommonJS).
 */
function modulesLoadedBy(code: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), "lethe-startup-"));
  try {
    const log = join(dir, "modules.log");
    writeFileSync(join(dir, "hook.mjs"), `import { appendFileSync } from "node:fs";\nexport async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + "\\n"); return r; }\n`);
    writeFileSync(join(dir, "register.mjs"), `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(dir, "hook.mjs")).href)});\n`);
    writeFileSync(log, "");
    const script = `${code}\nconst { createRequire } = await import("node:module");\nconsole.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`;
    const r = spawnSync(process.execPath, ["--import", join(dir, "register.mjs"), "--input-type=module", "-e", script], { cwd: process.cwd(), encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const required = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as string[];
    return [...readFileSync(log, "utf8").split("\n").filter(Boolean), ...required];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ZOD = /[/\\]node_modules[/\\]zod[/\\]/;

test("`lethe` loads no zod: not on import, not to resolve a valid config or create an engine with one", () => {
  assertFreshDist();
  const loaded = modulesLoadedBy(`
    const lethe = await import("lethe");
    lethe.resolveConfig({ budget: { perToolChars: { grep: 5 }, maxWindowShare: 0.5 }, snip: { enabled: false, targetMessages: 8 }, micro: { compactableTools: ["bash"], idleClearMs: 0 }, threshold: { tokens: 100000, bufferWindowShare: 0 }, summary: { auto: "ask", presummaryShare: 1 } });
    lethe.createEngine({ contextWindow: 200000, maxOutputTokens: 8000, config: { micro: { keepRecent: 5 }, summary: { auto: "off" } } });
  `);
  assert.ok(loaded.some((u) => u.endsWith("/dist/compaction/config/config.js")), "the config module is loaded (the probe sees the root)");
  assert.deepEqual(loaded.filter((u) => ZOD.test(u)), [], "no zod module");
});

test("a bad config still gets zod's one-line message, the same as before zod left the import", async () => {
  assertFreshDist();
  // Typed loosely, and named through a variable: dist/ is built after the typecheck, which must not resolve it.
  const root = "lethe";
  const lethe: any = await import(root);
  const messageOf = (config: unknown): string => {
    try {
      lethe.resolveConfig(config);
    } catch (e) {
      assert.ok(e instanceof lethe.LetheInputError, String(e));
      return (e as Error).message;
    }
    return "accepted";
  };
  // What resolveConfig said when zod was loaded with the root (issue order: the schema's keys, then unknown keys).
  const cases: [unknown, string][] = [
    [{ budget: { perResultChars: -1 } }, "budget.perResultChars: Too small: expected number to be >0"],
    [{ budget: { perResultChars: 1.5 } }, "budget.perResultChars: Invalid input: expected int, received number"],
    [{ budget: { perResultChars: "5" } }, "budget.perResultChars: Invalid input: expected number, received string"],
    [{ budget: { perResultChars: Infinity } }, "budget.perResultChars: Invalid input: expected number, received Infinity"],
    [{ budget: { perResultChars: NaN } }, "budget.perResultChars: Invalid input: expected number, received NaN"],
    [{ budget: { perResultChars: 2 ** 60 } }, "budget.perResultChars: Too big: expected int to be <=9007199254740991"],
    [{ budget: { perToolChars: { bash: 0 } } }, "budget.perToolChars.bash: Too small: expected number to be >0"],
    [{ budget: { perToolChars: [] } }, "budget.perToolChars: Invalid input: expected record, received array"],
    [{ budget: { maxWindowShare: 0 } }, "budget.maxWindowShare: Too small: expected number to be >0"],
    [{ budget: { maxWindowShare: 1.5 } }, "budget.maxWindowShare: Too big: expected number to be <=1"],
    [{ snip: { enabeld: false } }, "snip.enabeld: unknown key (did you mean enabled?)"],
    [{ snip: { enabled: "yes" } }, "snip.enabled: Invalid input: expected boolean, received string"],
    [{ snip: { keepHead: 0 } }, "snip.keepHead: Too small: expected number to be >=1"],
    [{ micro: { compactableTools: ["bash", 3] } }, "micro.compactableTools.1: Invalid input: expected string, received number"],
    [{ micro: { compactableTools: "bash" } }, "micro.compactableTools: Invalid input: expected array, received string"],
    [{ summary: { auto: "maybe" } }, 'summary.auto: Invalid option: expected one of "on"|"off"|"ask"'],
    [{ threshold: { tokens: 0 } }, "threshold.tokens: Too small: expected number to be >0"],
    [{ threshold: { bufferWindowShare: -0.1 } }, "threshold.bufferWindowShare: Too small: expected number to be >=0"],
    [{ summry: {} }, "summry: unknown key (did you mean summary?)"],
    [{ budget: null }, "budget: Invalid input: expected object, received null"],
    [{ budget: [] }, "budget: Invalid input: expected object, received array"],
    [{ snip: { enabled: 1, keepHead: 0 }, budget: { previewChars: -1 } }, "budget.previewChars: Too small: expected number to be >=0"],
    [{ zzz: 1, budget: { perResultChars: -1 } }, "budget.perResultChars: Too small: expected number to be >0"],
  ];
  for (const [config, message] of cases) assert.equal(messageOf(config), `lethe config: ${message}`, JSON.stringify(config));
  // The checks after the schema's are lethe's own and unchanged.
  assert.equal(messageOf({ snip: { targetMessages: 70 } }), "lethe config: snip.targetMessages (70) must be below snip.triggerMessages (60)");
  assert.equal(messageOf({ micro: { keepRecent: 5 } }), "accepted");
});
