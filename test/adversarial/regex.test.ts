// Issue 9, hangs: a model-chosen regex such as ^(a+)+$ used to run grep and recall at 100% CPU,
// deaf to SIGINT. Patterns now run on a linear-time engine; unsupported syntax is a clear error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createToolset } from "../../src/tools/index.ts";
import { runToolCall } from "../../src/tools/index.ts";
import { compileSafe } from "../../src/session/safe-regex.ts";
import { openTranscript } from "../../src/session/transcript.ts";
import { recall } from "../../src/session/recall.ts";

// A hang guard, not a timing claim: on a backtracking engine these inputs take far longer than this.
const GUARD = { timeout: 60_000 };

test("grep with catastrophic patterns over a long line returns (no match), and content mode still works", GUARD, async () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-re-"));
  try {
    writeFileSync(join(dir, "bomb.txt"), `${"a".repeat(100_000)}!\nok line\n`);
    const tools = createToolset();
    for (const pattern of ["^(a+)+$", "(a|aa)+$", "(a*)*b", "^(\\w+\\s?)*$"]) {
      const r = await runToolCall(tools, { name: "grep", input: { pattern, output_mode: "content" } }, { workspace: dir, readState: new Map(), todos: [] });
      assert.notEqual(r.isError, true, String(r.content));
    }
    const ok = await runToolCall(tools, { name: "grep", input: { pattern: "^ok\\s+line$", output_mode: "content" } }, { workspace: dir, readState: new Map(), todos: [] });
    assert.match(String(ok.content), /bomb\.txt:2:ok line/);
    const bad = await runToolCall(tools, { name: "grep", input: { pattern: "(a)\\1" } }, { workspace: dir, readState: new Map(), todos: [] });
    assert.equal(bad.isError, true);
    assert.match(String(bad.content), /backreferences are not supported/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("recall with a catastrophic /regex/ returns; matches keep their offsets (non-ASCII text too)", GUARD, () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-re-"));
  try {
    const t = openTranscript(join(dir, "transcript.jsonl"), { header: { id: "s", cwd: dir } });
    t.appendMessage({ role: "user", content: [{ type: "text", text: `${"a".repeat(50_000)}!` }] });
    t.appendMessage({ role: "assistant", content: [{ type: "text", text: "日本語のテキスト: the needle is here" }] });
    t.close();
    const r = recall(dir, { query: "/^(a+)+$/" });
    assert.ok(!("kind" in r && r.kind === "error"), JSON.stringify(r).slice(0, 200));
    const hit = recall(dir, { query: "/needle\\s+is/" });
    assert.match(JSON.stringify(hit), /the needle is here/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("compileSafe: offsets are JavaScript string indices; empty matches advance; named groups accepted", () => {
  const re = compileSafe("é+", {});
  assert.deepEqual([...re.matches("xxééx é")], [[2, 4], [6, 7]]);
  assert.equal([...compileSafe("a*").matches("baab")].length > 0, true);
  assert.ok(compileSafe("(?<word>\\w+)").test("hi"));
});
