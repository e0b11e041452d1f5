// The README's library example must run as written (against this checkout's sources).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

test("README library example runs and persists the huge result", () => {
  const readme = readFileSync("README.md", "utf8");
  const code = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(code, "README has a ```ts example");
  assert.match(readme, /npm ci\nnpm test/);
  const dir = mkdtempSync(join(tmpdir(), "lethe-readme-"));
  try {
    const src = code
      .replace(/from "lethe"/g, `from ${JSON.stringify(pathToFileURL(resolve("src/index.ts")).href)}`)
      .replace(/"\/tmp\/lethe-demo-session"/, JSON.stringify(join(dir, "session")));
    const file = join(dir, "example.ts");
    writeFileSync(file, src);
    const r = spawnSync(process.execPath, ["--import", "tsx", file], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /budget freed \d+ tokens/);
    assert.match(r.stdout, /auto-compact at 167000/);
    assert.deepEqual(readdirSync(join(dir, "session", "tool-results")), ["toolu_1.txt"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
