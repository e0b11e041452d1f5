// The corpus tools: final-diff ground truth from a session's submitted patch, the shared
// corpus's derived diffs, and the trajectory converters' conversation shape.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diffFiles, finalDiffFilesOf, isSubmission, submittedPatch } from "../../bench/corpus/final-diff.ts";
import { deriveFinalDiffs } from "../../bench/corpus/derive-final-diffs.ts";
import { ASIDE_SOURCES, Conversation, FRESH_SOURCES, HELDOUT_SOURCES, SOURCES, convertMiniSweAgent, convertSource, convertSweAgent, statsOf, type Source } from "../../bench/corpus/convert-trajectories.ts";
import { validate } from "../../src/messages/invariants.ts";
import type { Message } from "../../src/messages/types.ts";

const patch = [
  "diff --git a/src/app.py b/src/app.py",
  "index 1..2 100644",
  "--- a/src/app.py",
  "+++ b/src/app.py",
  "@@ -1 +1 @@",
  "-x",
  "+y",
  "diff --git a/old.py b/old.py",
  "deleted file mode 100644",
  "--- a/old.py",
  "+++ /dev/null",
  "diff --git a/a.py b/b.py",
  "similarity index 90%",
  "rename from a.py",
  "rename to b.py",
].join("\r\n");

test("diffFiles: git headers (deleted, renamed, CRLF), and bare ---/+++ pairs", () => {
  assert.deepEqual(diffFiles(patch), ["src/app.py", "old.py", "b.py"]);
  assert.deepEqual(diffFiles("--- a/x/y.py\n+++ b/x/y.py\n@@ -1 +1 @@\n-a\n+b\n--- a/gone.py\n+++ /dev/null\n"), ["x/y.py", "gone.py"]);
  assert.deepEqual(diffFiles("no diff here"), []);
});

const bash = (id: string, command: string, out: string): Message[] => [
  { role: "assistant", content: [{ type: "tool_use", id, name: "bash", input: { command } }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: out }] },
];

test("submittedPatch: the result of the last submission call (mini-swe-agent's sentinel, SWE-agent's submit), not other diffs", () => {
  const msgs: Message[] = [
    { role: "user", content: "fix" },
    ...bash("1", "git diff", "diff --git a/wrong.py b/wrong.py\n"),
    ...bash("2", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt", patch),
  ];
  assert.equal(submittedPatch(msgs), patch);
  assert.deepEqual(finalDiffFilesOf(msgs), ["src/app.py", "old.py", "b.py"]);
  assert.ok(isSubmission({ type: "tool_use", id: "s", name: "submit", input: {} }));
  assert.ok(isSubmission({ type: "tool_use", id: "s", name: "bash", input: { command: "submit" } }));
  assert.equal(finalDiffFilesOf(msgs.slice(0, 3)), undefined, "a diff that was not submitted is not the final one");
  // A submission of no diff (a CTF flag) gives no ground truth.
  assert.equal(finalDiffFilesOf([{ role: "user", content: "go" }, ...bash("1", "submit", "flag{x}")]), undefined);
});

test("deriveFinalDiffs: sessions with a submitted patch, sorted by id; the others listed as skipped", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-diffs-"));
  try {
    const line = (id: string, messages: Message[]) => JSON.stringify({ id, system: "", messages });
    const corpus = join(dir, "c.jsonl");
    writeFileSync(corpus, [line("z", [{ role: "user", content: "go" }, ...bash("1", "submit", patch)]), line("a", [{ role: "user", content: "chat" }])].join("\n"));
    assert.deepEqual(deriveFinalDiffs(corpus), { diffs: { z: ["src/app.py", "old.py", "b.py"] }, skipped: ["a"] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("Conversation: same-role messages merge, results go first and answer their call, unanswered calls are closed", () => {
  const c = new Conversation();
  c.user("task");
  c.user("more");
  c.assistant("look", [{ id: "a", name: "bash", input: { command: "ls" } }, { id: "a", name: "bash", input: { command: "pwd" } }]);
  assert.ok(c.result("out of ls"), "no id: the oldest unanswered call");
  assert.ok(c.result("out of pwd", "a"), "a duplicate id answers the newest call of that id");
  c.user("(a note)");
  c.assistant("next", [{ name: "bash", input: { command: "cat x" } }]);
  c.user("interrupted");
  c.assistant("again", [{ name: "bash", input: { command: "cat y" } }]);
  c.result("y");
  const m = c.messages;
  assert.equal(m.length, 7);
  assert.deepEqual(m[0]!.content, [{ type: "text", text: "task" }, { type: "text", text: "more" }]);
  const ids = (m[1]!.content as { type: string; id?: string }[]).filter((b) => b.type === "tool_use").map((b) => b.id);
  assert.deepEqual(ids, ["a", "a~2"]);
  assert.deepEqual((m[2]!.content as { type: string; tool_use_id?: string }[]).map((b) => b.tool_use_id ?? b.type), ["a", "a~2", "text"]);
  assert.deepEqual((m[4]!.content as { type: string; content?: unknown }[]).map((b) => b.content ?? b.type), ["(no output recorded)", "text"]);
  assert.equal(c.notes.renamed_duplicate_tool_use_id, 1);
  assert.equal(c.notes.unanswered_tool_use_given_placeholder_result, 1);
  assert.equal(validate(c.messages).length, 0, "a well-formed history");
  const stats = statsOf(c.messages, "");
  assert.equal(stats.pairing_ok, true);
  assert.equal(stats.roles_alternate, true);
});

test("convertMiniSweAgent / convertSweAgent: tool calls and text actions become tool_use / tool_result; the exit output or submission answers the last call", () => {
  const msa = convertMiniSweAgent({
    messages: [
      { role: "system", content: "sys" },
      { role: "user", content: "fix" },
      { role: "assistant", content: "", reasoning_content: "hidden", tool_calls: [{ id: "c1", function: { name: "bash", arguments: '{"command":"sed -i s/a/b/ x.py"}' } }] },
      { role: "tool", tool_call_id: "c1", content: "<returncode>0</returncode>" },
      { role: "assistant", content: "done", tool_calls: [{ id: "c2", function: { name: "bash", arguments: '{"command":"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt"}' } }] },
      { role: "exit", content: "diff --git a/x.py b/x.py\n" },
    ],
  });
  assert.equal(msa.system, "sys");
  assert.deepEqual(finalDiffFilesOf(msa.c.messages), ["x.py"]);
  assert.equal(msa.c.notes.exit_message_mapped_to_tool_result, 1);
  assert.ok(!JSON.stringify(msa.c.messages).includes("hidden"), "reasoning_content is not part of the context");

  const swea = convertSweAgent({
    history: [
      { role: "system", content: "sys" },
      { role: "user", content: "issue" },
      { role: "assistant", content: "thought\n```\nopen a.py\n```", thought: "thought", action: "open a.py\n" },
      { role: "user", content: "[File: a.py]" },
    ],
    trajectory: [{ action: "open a.py" }, { action: "submit\n", thought: "ship it", observation: "diff --git a/a.py b/a.py\n" }],
    info: { submission: "diff --git a/a.py b/a.py\n" },
  });
  const uses = swea.c.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content)).filter((b) => b.type === "tool_use");
  assert.deepEqual(uses.map((b) => (b as { input: { command: string } }).input.command), ["open a.py", "submit"]);
  assert.equal(swea.c.notes.submit_step_taken_from_trajectory, 1);
  assert.deepEqual(finalDiffFilesOf(swea.c.messages), ["a.py"]);
});

test("convertSource: a corpus line with provenance, stats and final_diff_files", () => {
  const src: Source = { id: "s", repo: "o/r", commit: "c".repeat(40), path: "p.traj", licence: "MIT", kind: "swe-agent-0", agent: "SWE-agent", model: "m" };
  const line = convertSource(src, JSON.stringify({ history: [{ role: "user", content: "go" }, { role: "assistant", thought: "t", action: "submit" }], info: { submission: "diff --git a/f.py b/f.py\n", exit_status: "submitted" } }));
  assert.equal(line.id, "s");
  assert.deepEqual(line.meta.final_diff_files, ["f.py"]);
  assert.equal(line.meta.licence, "MIT");
  assert.equal(line.stats.pairing_ok, true);
  assert.equal(line.stats.roles_alternate, true);
});

test("the held-aside set shares no task with the unseen corpus, nor with the shared corpus (when it is here), and no file", () => {
  // A task: the trajectory file's name without its extension (a SWE-bench instance, a CTF challenge).
  const task = (path: string) => path.split("/").pop()!.replace(/\.traj(\.json)?$/, "").replace(/_demo$/, "");
  const unseen = new Set(SOURCES.map((s) => task(s.path)));
  const held = HELDOUT_SOURCES.map((s) => task(s.path));
  assert.equal(new Set(held).size, held.length, "each task once");
  assert.equal(new Set(HELDOUT_SOURCES.map((s) => s.id)).size, HELDOUT_SOURCES.length);
  for (const t of held) assert.ok(!unseen.has(t), `${t} is in unseen.jsonl.gz`);
  const files = new Set(SOURCES.map((s) => `${s.repo}@${s.commit}:${s.path}`));
  for (const s of HELDOUT_SOURCES) assert.ok(!files.has(`${s.repo}@${s.commit}:${s.path}`));
  const shared = join(import.meta.dirname, "../../../shared/corpus/real_sessions.jsonl");
  if (existsSync(shared)) {
    const ids = readFileSync(shared, "utf8").split("\n").filter((l) => l.trim()).map((l) => (JSON.parse(l) as { id: string }).id);
    for (const t of held) assert.ok(!ids.some((id) => id.endsWith(t)), `${t} is in the shared corpus`);
  }
});

for (const [name, set, before] of [
  ["aside", ASIDE_SOURCES, [...SOURCES, ...HELDOUT_SOURCES]],
  ["fresh", FRESH_SOURCES, [...SOURCES, ...HELDOUT_SOURCES, ...ASIDE_SOURCES]],
] as const) {
  test(`the blind ${name} set shares no task with the corpora before it or the shared corpus, nor with itself, and no file or id`, () => {
    const task = (path: string) => path.split("/").pop()!.replace(/\.traj(\.json)?$/, "").replace(/_demo$/, "");
    const others = new Set(before.map((s) => task(s.path)));
    const tasks = set.map((s) => task(s.path));
    assert.ok(tasks.length > 0);
    assert.equal(new Set(tasks).size, tasks.length, "each task once");
    for (const t of tasks) assert.ok(!others.has(t), `${t} is in an earlier corpus`);
    const files = new Set(before.map((s) => `${s.repo}@${s.commit}:${s.path}`));
    for (const s of set) assert.ok(!files.has(`${s.repo}@${s.commit}:${s.path}`));
    const known = new Set(before.map((s) => s.id));
    assert.equal(new Set(set.map((s) => s.id)).size, set.length);
    for (const s of set) assert.ok(!known.has(s.id), `${s.id} is an id of another corpus`);
    const shared = join(import.meta.dirname, "../../../shared/corpus/real_sessions.jsonl");
    if (existsSync(shared)) {
      const ids = readFileSync(shared, "utf8").split("\n").filter((l) => l.trim()).map((l) => (JSON.parse(l) as { id: string }).id);
      for (const t of tasks) assert.ok(!ids.some((id) => id.endsWith(t)), `${t} is in the shared corpus`);
      for (const s of set) assert.ok(!ids.includes(s.id), `${s.id} is an id of the shared corpus`);
    }
  });
}
