// Ledger recall against the files a session's final diff really changed, and the corpus loader
// that brings that ground truth in (a line's meta, or a side file for a read-only corpus).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { loadCorpus } from "../../bench/replay.ts";
import { ledgerRecall, sameFile } from "../../bench/replay/ledger-recall.ts";
import type { Message } from "../../src/messages/types.ts";

const bash = (id: string, command: string): Message[] => [
  { role: "assistant", content: [{ type: "tool_use", id, name: "bash", input: { command } }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] },
];

test("sameFile: an absolute ledger path names a repo-relative diff path, not a different file", () => {
  assert.ok(sameFile("/testbed/django/db/models.py", "django/db/models.py"));
  assert.ok(sameFile("./a.py", "a.py"));
  assert.ok(!sameFile("/testbed/xdjango/db/models.py", "django/db/models.py"));
  assert.ok(!sameFile("/testbed/b.py", "a.py"));
});

test("ledgerRecall: files of the final diff found among the ledger's modified files, misses named", () => {
  const messages: Message[] = [{ role: "user", content: "fix" }, ...bash("1", "sed -i 's/a/b/' /testbed/src/a.py"), ...bash("2", "cat /testbed/src/c.py")];
  const r = ledgerRecall([{ id: "s", system: "", messages, finalDiffFiles: ["src/a.py", "src/c.py"] }, { id: "t", system: "", messages }])!;
  assert.deepEqual(r, { sessions: 1, files: 2, found: 1, missed: ["s: src/c.py"] });
  assert.equal(ledgerRecall([{ id: "t", system: "", messages }]), null, "no ground truth, no figure");
});

test("loadCorpus: .gz lines with meta.final_diff_files, or a side file of diffs by session id", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-corpus-"));
  try {
    const line = (id: string, meta?: object) => JSON.stringify({ id, system: "sys", messages: [{ role: "user", content: "hi" }], ...(meta ? { meta } : {}) });
    const gz = join(dir, "c.jsonl.gz");
    writeFileSync(gz, gzipSync(`${line("a", { final_diff_files: ["x.py"] })}\n${line("b")}\n`));
    const side = join(dir, "diffs.json");
    writeFileSync(side, JSON.stringify({ b: ["y.py", "z.py"] }));
    const s = loadCorpus(gz, side);
    assert.deepEqual(s.map((x) => [x.id, x.finalDiffFiles]), [["a", ["x.py"]], ["b", ["y.py", "z.py"]]]);
    assert.deepEqual(loadCorpus(gz).map((x) => x.finalDiffFiles), [["x.py"], undefined]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
