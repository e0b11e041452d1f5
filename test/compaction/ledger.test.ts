// The file ledger's memoised parts give the same answers as parsing afresh.
import { test } from "node:test";
import assert from "node:assert/strict";
import { indexNewCalls, ledgerOf, renderLedger, shellFiles } from "../../src/compaction/ledger.ts";
import type { Message } from "../../src/messages/types.ts";
import { calls, results, user } from "../support/build.ts";

function session(): Message[] {
  return [
    user("Fix the parser"),
    calls(["bash", { command: "cat src/a.ts && sed -i 's/x/y/' src/b.ts" }, "t1"]),
    results(["t1", "ok"]),
    calls(["read_file", { path: "README.md" }, "t2"], ["write_file", { path: "docs/x.md", content: "x" }, "t3"]),
    results(["t2", "readme"], ["t3", "written"]),
  ];
}

test("shellFiles: reads, in-place edits and redirections", () => {
  assert.deepEqual(shellFiles("cat src/a.ts && sed -i 's/x/y/' src/b.ts > out.log"), { read: ["src/a.ts"], modified: ["out.log", "src/b.ts"] });
});

test("indexNewCalls walks only the messages it has not seen, newest first, and leaves the ledger unchanged", () => {
  const h = session();
  const seen = new WeakSet<Message>();
  indexNewCalls(h, seen);
  for (const m of h) assert.ok(seen.has(m));
  // A new turn: only the new messages are walked (the walk stops at the first seen one).
  const next = [...h, calls(["bash", { command: "touch new.txt" }, "t4"]), results(["t4", ""])];
  const before = new WeakSet<Message>(h);
  indexNewCalls(next, before);
  assert.ok(before.has(next[5]!) && before.has(next[6]!));
  const l = ledgerOf(next);
  assert.deepEqual([...l.read], ["src/a.ts", "README.md"]);
  assert.deepEqual([...l.modified], ["src/b.ts", "docs/x.md", "new.txt"]);
});

test("a carried ledger block is folded in, and the same block parsed twice gives the same paths", () => {
  const carried = renderLedger({ read: new Set(["old/r.ts"]), modified: new Set(["old/m.ts"]) });
  const h: Message[] = [{ role: "user", content: [{ type: "text", text: carried }] }, ...session().slice(1)];
  const a = ledgerOf(h);
  const b = ledgerOf(h);
  assert.deepEqual([...a.read], ["old/r.ts", "src/a.ts", "README.md"]);
  assert.deepEqual([...a.modified], ["old/m.ts", "src/b.ts", "docs/x.md"]);
  assert.deepEqual(a, b);
  // The memo never leaks mutations: changing one result leaves the next one whole.
  a.read.clear();
  assert.deepEqual([...ledgerOf(h).read], ["old/r.ts", "src/a.ts", "README.md"]);
});
