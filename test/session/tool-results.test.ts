import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileStore, resultFileName } from "../../src/session/tool-results.ts";

test("saves byte for byte under tool-results/, atomically (no temp files left)", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-store-"));
  try {
    const store = createFileStore(join(dir, "tool-results"));
    const text = "héllo 世界 \u0000 \r\n".repeat(1000);
    const path = store.save("toolu_01AB", text);
    assert.equal(path, join(dir, "tool-results", "toolu_01AB.txt"));
    assert.equal(readFileSync(path, "utf8"), text);
    store.save("toolu_01AB", "second");
    assert.equal(readFileSync(path, "utf8"), "second");
    assert.deepEqual(readdirSync(join(dir, "tool-results")), ["toolu_01AB.txt"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("ids from the provider cannot escape the folder", () => {
  // Unsafe ids: only [A-Za-z0-9_-] plus a hash of the whole id (issue 9: no collisions).
  assert.match(resultFileName("../../etc/passwd"), /^______etc_passwd-[0-9a-f]{16}\.txt$/);
  assert.ok(!resultFileName("..").includes("/"));
  assert.ok(!resultFileName("..").startsWith("."));
  assert.match(resultFileName(""), /^-[0-9a-f]{16}\.txt$/);
});
