// Resume reads a transcript from its end: a snip boundary names where its kept tail starts, so a
// long session's file is read from its last resume point, not from the start.
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine } from "../../src/engine/index.ts";
import { validate } from "../../src/messages/invariants.ts";
import type { Message } from "../../src/messages/types.ts";
import { loadTranscript, openTranscript, resumeContext } from "../../src/session/transcript.ts";
import { loadTranscriptTail } from "../../src/session/transcript-tail.ts";
import { calls, results, said, user } from "../support/build.ts";

/** Own-loop session: every message is written to the transcript before the request, as runAgent does. */
function session(dir: string, rounds: number): { path: string; live: Message[] } {
  const path = join(dir, "transcript.jsonl");
  const transcript = openTranscript(path, { header: { id: "s", cwd: dir } });
  const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, sessionDir: dir, transcript, transcriptHoldsHistory: true });
  let live: Message[] = [];
  const add = (m: Message) => (transcript.appendMessage(m), live.push(m));
  add(user("fix the failing test in parser.py"));
  for (let k = 0; k < rounds; k++) {
    add(calls(["bash", { command: `python -m pytest -k case_${k}` }, `toolu_${k}`]));
    const answer = results([`toolu_${k}`, `case ${k} output `.repeat(k % 9 === 4 ? 4_000 : 80)]);
    // Now and then the user says something too (with the results, as runAgent sends it).
    if (k % 25 === 12) (answer.content as unknown[]).push({ type: "text", text: `also check case ${k}` });
    add(answer);
    live = engine.prepare(live).history.slice();
  }
  transcript.close();
  return { path, live };
}

test("resume from the end: a snip boundary is a resume point; the file is read from its tail, and the context is what a full read gives", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-tail-"));
  try {
    const { path, live } = session(dir, 400);
    const full = loadTranscript(path);
    const tail = loadTranscriptTail(path);
    const size = statSync(path).size;
    assert.ok(tail.from > size / 2, `read from byte ${tail.from} of ${size}`);
    assert.deepEqual(tail.header, full.header);
    assert.deepEqual(tail.errors, []);
    const resumed = resumeContext(tail.entries);
    assert.deepEqual(resumed, resumeContext(full.entries));
    // Bounded like the live context, not the whole session, and a valid history.
    assert.ok(resumed.length <= live.length + 2, `${resumed.length} messages resumed, ${live.length} live`);
    assert.deepEqual(validate(resumed), []);
    assert.deepEqual(resumed.at(-1), live.at(-1));
    // The snip's note (with the work record) leads the resumed context's head.
    assert.match(JSON.stringify(resumed.slice(0, 4)), /lethe-work/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("resume from the end: no resume point reads the whole file; a torn last line is a warning either way", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-tail-"));
  try {
    const path = join(dir, "t.jsonl");
    const t = openTranscript(path, { header: { id: "s", cwd: dir } });
    t.appendMessage(user("hello"));
    t.appendMessage(calls(["bash", { command: "ls" }, "toolu_1"]));
    t.appendMessage(results(["toolu_1", "x"]));
    t.appendBoundary({ kind: "micro", tokens_before: 10, tokens_after: 5 });
    t.close();
    appendFileSync(path, '{"type":"message","uuid":"torn","ts":"x","mess');
    const tail = loadTranscriptTail(path);
    const full = loadTranscript(path);
    assert.equal(tail.from, 0);
    assert.deepEqual(tail.entries, full.entries);
    assert.equal(tail.warnings.length, 1);
    assert.equal(resumeContext(tail.entries).length, 3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("resume from the end: a summary boundary (whole rebuilt history) is a resume point, and a snip whose tail message is missing falls back to it", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-tail-"));
  try {
    const path = join(dir, "t.jsonl");
    const lines = [
      { type: "session", id: "s", created: "2026-11-25T00:00:00Z", cwd: dir, version: 1 },
      { type: "message", uuid: "a", ts: "t", message: user("old") },
      { type: "boundary", ts: "t", kind: "summarize", tokens_before: 9, tokens_after: 3, history: [user("the summary")] },
      { type: "message", uuid: "b", ts: "t", message: calls(["bash", { command: "ls" }, "toolu_1"]) },
      { type: "message", uuid: "c", ts: "t", message: results(["toolu_1", "x"]) },
      // A snip naming a tail message that is not in the file: not usable, the summary stands.
      { type: "boundary", ts: "t", kind: "snip", tokens_before: 9, tokens_after: 3, head: [user("head")], tail_from: "nowhere" },
    ];
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const tail = loadTranscriptTail(path);
    assert.ok(tail.from > 0 && tail.from < readFileSync(path, "utf8").indexOf('"uuid":"b"'));
    assert.deepEqual(resumeContext(tail.entries), [user("the summary"), calls(["bash", { command: "ls" }, "toolu_1"]), results(["toolu_1", "x"])]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("resume from the end: a message that merely contains the tail's uuid (a tool input with a \"uuid\" key) is not taken for the tail's first message", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-tail-"));
  try {
    const path = join(dir, "t.jsonl");
    const tail = calls(["bash", { command: "ls" }, "toolu_1"]);
    const answer = results(["toolu_1", "x"]);
    const forged = calls(["lookup", { uuid: "tail-1" }, "toolu_2"]);
    const lines = [
      { type: "session", id: "s", created: "2026-11-25T00:00:00Z", cwd: dir, version: 1 },
      { type: "message", uuid: "old", ts: "t", message: user("old") },
      { type: "message", uuid: "tail-1", ts: "t", message: tail },
      { type: "message", uuid: "a", ts: "t", message: answer },
      { type: "message", uuid: "forged", ts: "t", message: forged },
      { type: "boundary", ts: "t", kind: "snip", tokens_before: 9, tokens_after: 3, head: [user("head")], tail_from: "tail-1" },
    ];
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const read = loadTranscriptTail(path);
    assert.ok(read.from > 0 && read.from === readFileSync(path, "utf8").indexOf('{"type":"message","uuid":"tail-1"'));
    assert.deepEqual(resumeContext(read.entries), [user("head"), tail, answer, forged]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("resume from the end: lines longer than the read chunk (a 5 MB boundary) are read whole", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-tail-"));
  try {
    const path = join(dir, "t.jsonl");
    const big = user("x".repeat(5_000_000));
    const lines = [
      { type: "session", id: "s", created: "2026-11-25T00:00:00Z", cwd: dir, version: 1 },
      { type: "message", uuid: "a", ts: "t", message: user("before") },
      { type: "boundary", ts: "t", kind: "summarize", tokens_before: 9, tokens_after: 3, history: [big] },
      { type: "message", uuid: "b", ts: "t", message: user("y".repeat(3_000_000)) },
      { type: "message", uuid: "c", ts: "t", message: said("after") },
    ];
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const read = loadTranscriptTail(path);
    assert.equal(read.from, readFileSync(path, "utf8").indexOf('{"type":"boundary"'));
    assert.deepEqual(resumeContext(read.entries), [big, user("y".repeat(3_000_000)), said("after")]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
