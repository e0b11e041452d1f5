import { test } from "node:test";
import assert from "node:assert/strict";
import { rebuild, tailStart } from "../../src/compaction/summary/rebuild.ts";
import { previousSummaryOf } from "../../src/compaction/state/retain.ts";
import { rebuildBudgets, autoCompactThreshold } from "../../src/compaction/config/config.ts";
import { digest } from "../../src/compaction/summary/digest.ts";
import { ledgerOf } from "../../src/compaction/state/ledger.ts";
import { userMessagesOf } from "../../src/compaction/state/retain.ts";
import { validate } from "../../src/messages/invariants.ts";
import type { Message } from "../../src/messages/types.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { calls, results, said, user } from "../support/build.ts";

const counter = createTokenCounter();
const W200 = { contextWindow: 200_000, maxOutputTokens: 32_000 };
const budgets = { ...rebuildBudgets(W200), keepTailTokens: 0 };
const files: Record<string, string> = {
  "src/a.ts": "export const a = 1;\n".repeat(50),
  "src/b.ts": "export const b = 2;\n".repeat(5_000),
  "README.md": "# readme\n",
};
const readFile = (p: string) => files[p];

function session(): Message[] {
  return [
    user("Please make the build pass. Do not touch package.json."),
    calls(["read_file", { path: "src/a.ts" }, "r1"], ["read_file", { path: "src/b.ts" }, "r2"]),
    results(["r1", files["src/a.ts"]!], ["r2", "x"]),
    calls(["edit_file", { path: "src/a.ts", old: "1", new: "2" }, "e1"]),
    results(["e1", "ok"]),
    said("Edited a.ts."),
    user("Also rename b to c, and keep the tests green."),
    calls(["bash", { command: "npm test 2>&1 | tail -5" }, "b1"]),
    results(["b1", "<returncode>1</returncode>\n<output>Error: expected 2 got 1\n</output>"]),
    calls(["todo_write", { todos: [{ content: "rename b", status: "in_progress" }, { content: "green tests", status: "pending" }] }, "t1"]),
    results(["t1", "ok"]),
    calls(["bash", { command: "sed -i 's/b/c/' src/b.ts && cat README.md" }, "b2"]),
    results(["b2", "done"]),
  ];
}

test("rebuild: summary + continuation note + user messages + ledger + restored files + todos + newest round", () => {
  const h = session();
  const r = rebuild({ history: h, summary: "THE SUMMARY", kind: "summarize", budgets, counter, archivePath: "/s/transcript.jsonl", readFile });
  assert.deepEqual(validate(r.history), []);
  const first = JSON.stringify(r.history[0]);
  for (const s of ["THE SUMMARY", "/s/transcript.jsonl", "recall", "Do not touch package.json.", "keep the tests green", "modified: src/a.ts", "modified: src/b.ts", "read: src/a.ts", "read: README.md", "rename b", "<lethe-restored-file path=\\\"src/a.ts\\\""]) {
    assert.ok(first.includes(s), s);
  }
  assert.deepEqual(r.restored.sort(), ["README.md", "src/a.ts", "src/b.ts"]);
  // src/b.ts is 100k chars: cut to the per-file budget.
  assert.match(first, /lines=\\"1-\d+ of 5001\\"/);
  // The pending round (call + results) is kept whole at the end.
  assert.equal(r.history.at(-1), h.at(-1));
  assert.equal(r.history.at(-2), h.at(-2));
  assert.ok(counter.messages(r.history) < counter.messages(h) + 10_000);
});

test("a second compaction folds the first: summary, user messages and ledger carried", () => {
  const first = rebuild({ history: session(), summary: "FIRST", kind: "summarize", budgets, counter, readFile }).history;
  const more = [...first, said("Renamed."), user("Now write docs."), calls(["write_file", { path: "docs/x.md" }, "w9"]), results(["w9", "ok"])];
  assert.equal(previousSummaryOf(more), "FIRST");
  const d = digest(more, { counter, maxTokens: 2_000 });
  assert.match(d, /FIRST/);
  const second = rebuild({ history: more, summary: "SECOND", kind: "summarize", budgets, counter }).history;
  const text = JSON.stringify(second[0]);
  for (const s of ["SECOND", "Do not touch package.json.", "keep the tests green", "Now write docs.", "modified: src/a.ts", "modified: docs/x.md", "read: README.md"]) assert.ok(text.includes(s), s);
  assert.deepEqual(userMessagesOf(second), ["Please make the build pass. Do not touch package.json.", "Also rename b to c, and keep the tests green.", "Now write docs."]);
  assert.deepEqual([...ledgerOf(second).modified].sort(), ["docs/x.md", "src/a.ts", "src/b.ts"]);
});

test("user messages: newest first within the budget, the latest always", () => {
  const h: Message[] = [user("old ".repeat(5_000)), said("ok"), user("middle"), said("ok"), user("latest request")];
  const r = rebuild({ history: h, summary: "S", kind: "summarize", budgets: { ...budgets, userMessagesTokens: 100, keepTailTokens: 0 }, counter });
  const text = JSON.stringify(r.history);
  assert.ok(text.includes("latest request"));
  assert.ok(text.includes("middle"));
  assert.ok(!text.includes("old old old"));
  assert.equal(r.userMessagesDropped, 1);
});

test("small windows: the rebuild stays within about a quarter of the threshold", () => {
  const w = { contextWindow: 32_000, maxOutputTokens: 8_000 };
  const b = rebuildBudgets(w);
  const threshold = autoCompactThreshold(w);
  const total = b.summaryTokens + b.userMessagesTokens + b.keepTailTokens + b.restoreTotalTokens;
  assert.ok(total <= threshold * 0.26, `${total} vs ${threshold}`);
  const big = rebuildBudgets(W200);
  assert.equal(big.keepTailTokens, 20_000);
  assert.equal(big.summaryTokens, 20_000);
  assert.equal(big.restoreTotalTokens, 50_000);
  assert.equal(big.userMessagesTokens, 20_000);
});

test("digest: commands with exit codes, unresolved errors, the assistant's latest words", () => {
  const d = digest(session(), { counter, maxTokens: 5_000 });
  assert.match(d, /npm test/);
  assert.match(d, /Errors not yet resolved[\s\S]*exit 1[\s\S]*expected 2 got 1/);
  assert.match(d, /Edited a\.ts/);
  assert.ok(counter.text(digest(session(), { counter, maxTokens: 60 })) <= 80);
});

test("tailStart keeps pending results with their call even over budget", () => {
  const h = session();
  assert.equal(tailStart(h, 0, counter), h.length - 2);
  const ended = [...h, said("done"), user("thanks")];
  assert.equal(tailStart(ended, 0, counter), ended.length);
});
