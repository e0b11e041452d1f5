// A snip boundary carries the context's head so a resume can start there. Written in full every
// time it was a quarter of a long transcript; now a head is written once and later boundaries
// write what differs from it (src/session/transcript-heads.ts). Resume must give exactly the
// context it gave when every head was written in full, from the whole file and from its tail.
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine } from "../../src/engine/index.ts";
import type { Message } from "../../src/messages/types.ts";
import { type BoundaryEntry, type TranscriptWriter, loadTranscript, openTranscript, resumeContext } from "../../src/session/transcript.ts";
import { loadTranscriptTail } from "../../src/session/transcript-tail.ts";
import { calls, results, user } from "../support/build.ts";

/** A task long enough that repeating it in every head shows (a pasted spec, a log). */
const TASK = user(`Fix the failing tests in parser.py. The spec follows.\n${"The parser accepts nested lists and reports the line of each error. ".repeat(400)}`);

/** Runs `fn` in a new folder, removed after. */
function inTempDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "lethe-heads-"));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * An own-loop session (every message written before the request, as runAgent does) written twice
 * at once: by this version's writer (`new.jsonl`) and as every earlier one wrote boundaries, each
 * with its head in full (`old.jsonl`: the same lines, uuids included).
 */
function session(dir: string, rounds: number): { fresh: string; old: string } {
  const fresh = join(dir, "new.jsonl"), old = join(dir, "old.jsonl");
  const w = openTranscript(fresh, { header: { id: "s", cwd: dir } });
  const o = openTranscript(old, { header: { id: "s", cwd: dir } });
  const both: TranscriptWriter = {
    path: fresh,
    append: (e) => (w.append(e), o.append(e)),
    appendMessage: (m, opts) => {
      const e = w.appendMessage(m, opts);
      o.appendMessage(m, { uuid: e.uuid, ts: e.ts });
      return e;
    },
    uuidOf: (m) => w.uuidOf?.(m),
    appendBoundary: (b) => {
      const e = w.appendBoundary(b);
      // The old writer: the boundary as given, one line.
      o.append({ type: "boundary", ...b, ts: e.ts } as BoundaryEntry);
      return e;
    },
    appendEvent: (name, data) => (o.appendEvent(name, data), w.appendEvent(name, data)),
    close: () => (w.close(), o.close()),
  };
  const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, sessionDir: dir, transcript: both, transcriptHoldsHistory: true });
  let live: Message[] = [];
  const add = (m: Message) => (both.appendMessage(m), live.push(m));
  add(TASK);
  for (let k = 0; k < rounds; k++) {
    add(calls(["bash", { command: `python -m pytest -k case_${k}` }, `toolu_${k}`]));
    const answer = results([`toolu_${k}`, `case ${k} output `.repeat(k % 9 === 4 ? 3_000 : 80)]);
    if (k % 25 === 12) (answer.content as unknown[]).push({ type: "text", text: `also check case ${k}` });
    add(answer);
    live = engine.prepare(live).history.slice();
  }
  both.close();
  return { fresh, old };
}

/** Bytes of message lines, and of what boundary lines spend on heads (in full, or a diff and its reference). */
function bytesOf(path: string): { messages: number; heads: number; snips: number } {
  let messages = 0, heads = 0, snips = 0;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.startsWith('{"type":"message"')) messages += Buffer.byteLength(line);
    if (!line.startsWith('{"type":"boundary"')) continue;
    const b = JSON.parse(line) as Record<string, unknown>;
    if (b.tail_from !== undefined) snips++;
    for (const k of ["head", "head_diff", "head_from"]) if (b[k] !== undefined) heads += Buffer.byteLength(JSON.stringify(b[k]));
  }
  return { messages, heads, snips };
}

/** The file cut after its n-th boundary line (a resume at that point). */
function cutAfterBoundary(path: string, n: number, to: string): string {
  const lines = readFileSync(path, "utf8").split("\n");
  let seen = 0;
  const end = lines.findIndex((l) => l.startsWith('{"type":"boundary"') && ++seen === n);
  writeFileSync(to, `${lines.slice(0, end + 1).join("\n")}\n`);
  return to;
}

test("many snips: the head is written once, later boundaries only what differs (heads a small share of the message bytes)", () => {
  inTempDir((dir) => {
  const { fresh, old } = session(dir, 400);
  const now = bytesOf(fresh), before = bytesOf(old);
  assert.ok(now.snips >= 10, `${now.snips} snips`);
  assert.equal(now.snips, before.snips);
  assert.equal(now.messages, before.messages);
  // Written in full every time, the heads grow with every snip: the task again each time.
  assert.ok(before.heads > now.snips * Buffer.byteLength(JSON.stringify(TASK)), `old heads ${before.heads} bytes`);
  assert.ok(before.heads > 0.1 * before.messages, `old heads ${before.heads} bytes against ${before.messages} of messages`);
  // Per snip, a head costs a tenth of writing it in full (44 snips at 32k since snip's gate is the rebuild's share: 3.0k bytes each, 30.9k the old way).
  assert.ok(now.heads < 0.15 * before.heads, `heads ${now.heads} bytes against ${before.heads} written in full`);
  assert.ok(now.heads < 0.05 * now.messages, `heads ${now.heads} bytes against ${now.messages} of messages (old way: ${before.heads})`);
  // The task itself is in one boundary line only.
  const lines = readFileSync(fresh, "utf8").split("\n").filter((l) => l.startsWith('{"type":"boundary"') && l.includes("The parser accepts nested lists"));
  assert.equal(lines.length, 1);
  });
});

test("resume after every snip gives exactly the context the old transcript (heads in full) gives, from the whole file and from its tail", () => {
  inTempDir((dir) => {
  const { fresh, old } = session(dir, 300);
  const boundaries = loadTranscript(fresh).entries.filter((e) => e.type === "boundary").length;
  let diffs = 0;
  for (let n = 1; n <= boundaries; n++) {
    const a = cutAfterBoundary(fresh, n, join(dir, "a.jsonl"));
    const b = cutAfterBoundary(old, n, join(dir, "b.jsonl"));
    if (readFileSync(a, "utf8").trimEnd().split("\n").at(-1)!.includes('"head_diff"')) diffs++;
    const expected = resumeContext(loadTranscript(b).entries);
    const whole = loadTranscript(a);
    assert.deepEqual(whole.warnings, []);
    assert.deepEqual(resumeContext(whole.entries), expected, `after boundary ${n}`);
    const tail = loadTranscriptTail(a);
    assert.deepEqual(tail.warnings, []);
    assert.deepEqual(resumeContext(tail.entries), expected, `after boundary ${n}, from the tail`);
    // The old transcript reads as it always did.
    assert.deepEqual(resumeContext(loadTranscriptTail(b).entries), expected);
  }
  assert.ok(diffs >= 5, `${diffs} boundaries written as a diff`);
  // Readers see full heads, as before: the entries match the old file's but for the base's id.
  const strip = (es: unknown[]) => JSON.parse(JSON.stringify(es, (k, v) => (k === "head_id" ? undefined : v)));
  assert.deepEqual(strip(loadTranscript(fresh).entries), strip(loadTranscript(old).entries));
  });
});

test("a diff whose base is not where its offset says (lines inserted by hand) is still resolved; a base gone altogether leaves a record and a warning", () => {
  inTempDir((dir) => {
  const { fresh, old } = session(dir, 300);
  const expected = resumeContext(loadTranscript(old).entries);
  const lines = readFileSync(fresh, "utf8").split("\n");
  // An event inserted after the header moves every offset.
  const moved = join(dir, "moved.jsonl");
  writeFileSync(moved, [lines[0], JSON.stringify({ type: "event", name: "note", text: "inserted" }), ...lines.slice(1)].join("\n"));
  const tail = loadTranscriptTail(moved);
  assert.deepEqual(tail.warnings, []);
  assert.deepEqual(resumeContext(tail.entries), expected);
  // Every base removed: the diffs cannot be rebuilt, and say so; nothing throws.
  const gone = join(dir, "gone.jsonl");
  writeFileSync(gone, lines.filter((l) => !l.includes('"head_id"')).join("\n"));
  const t = loadTranscript(gone);
  assert.ok(t.warnings.some((w) => /head is a diff against head "[0-9a-f]+", not found/.test(w)), t.warnings.join("\n"));
  assert.ok(t.entries.every((e) => e.type !== "boundary" || (e as BoundaryEntry).head_diff === undefined));
  });
});

test("a base written right after a torn last line is found at its offset (the torn-tail note before it counted)", () => {
  inTempDir((dir) => {
  const path = join(dir, "t.jsonl");
  const head = [TASK, user("the snip's note")];
  const t = openTranscript(path, { header: { id: "s", cwd: dir } });
  const first = t.appendMessage(user("first")).uuid;
  t.close();
  appendFileSync(path, '{"type":"message","uuid":"torn","ts":"x","mess');
  // The base is the first line written after reopening: the torn-tail note goes before it.
  const w = openTranscript(path);
  w.appendBoundary({ kind: "snip", tokens_before: 9, tokens_after: 3, head, tail_from: first });
  assert.match(readFileSync(path, "utf8"), /"name":"torn-tail".*\n\{"type":"boundary".*"head_id"/);
  const tail = w.appendMessage(user("kept too")).uuid;
  for (let i = 0; i < 50; i++) w.appendMessage(user(`message ${i} ${"x".repeat(40_000)}`));
  w.appendBoundary({ kind: "snip", tokens_before: 9, tokens_after: 3, head: [TASK, user("a later note")], tail_from: tail });
  w.close();
  const last = readFileSync(path, "utf8").trimEnd().split("\n").at(-1)!;
  assert.match(last, /"head_diff":\[0,/);
  const read = loadTranscriptTail(path);
  assert.ok(read.from > 0, "read from the tail, not the whole file");
  assert.deepEqual(resumeContext(read.entries).slice(0, 3), [TASK, user("a later note"), user("kept too")]);
  });
});

test("each diff's base offset is the byte where the base's line starts (several bases, text of several bytes a character, a file appended to before it was opened)", () => {
  inTempDir((dir) => {
  const path = join(dir, "t.jsonl");
  const first = openTranscript(path, { header: { id: "s", cwd: dir } });
  first.appendMessage(user("déjà vu — 日本語 🎉"));
  first.close();
  const w = openTranscript(path);
  let tail = w.appendMessage(user("start")).uuid;
  for (let k = 0; k < 12; k++) {
    for (let i = 0; i < 3; i++) w.appendMessage(user(`ß${"é".repeat(k * 50 + i)} ${"日本".repeat(30)} ${k}`));
    // Every fourth head shares nothing with the base: a new base.
    const note = k % 4 === 0 ? `new base ${k} ${"€".repeat(400)}` : "a note";
    w.appendBoundary({ kind: "snip", tokens_before: 9, tokens_after: 3, head: [TASK, user(note)], tail_from: tail });
    tail = w.appendMessage(user(`kept ${k} ✓`)).uuid;
  }
  w.close();
  const bytes = readFileSync(path);
  let diffs = 0;
  for (const line of bytes.toString("utf8").split("\n")) {
    if (!line.includes('"head_from"')) continue;
    const from = (JSON.parse(line) as { head_from: { id: string; at: number } }).head_from;
    const at = bytes.subarray(from.at).toString("utf8");
    assert.ok(at.startsWith('{"type":"boundary"'), `offset ${from.at} starts ${JSON.stringify(at.slice(0, 40))}`);
    assert.equal((JSON.parse(at.slice(0, at.indexOf("\n"))) as { head_id: string }).head_id, from.id);
    diffs++;
  }
  assert.ok(diffs >= 6, `${diffs} diffs`);
  });
});

test("a head whose diff is half its bytes is written as a diff, not as a new base (a base at 40% cost more bytes in all: snip boundaries of bench:replay's sessions 4-12% larger)", () => {
  inTempDir((dir) => {
  const path = join(dir, "t.jsonl");
  const w = openTranscript(path, { header: { id: "s", cwd: dir } });
  const task = user(`The task. ${"Keep the API stable. ".repeat(60)}`);
  let tail = w.appendMessage(user("start")).uuid;
  for (let k = 0; k < 3; k++) {
    // The note changes at every snip and is about as long as the task it follows.
    w.appendBoundary({ kind: "snip", tokens_before: 9, tokens_after: 3, head: [task, user(`note ${k} ${"carried text ".repeat(90)}`)], tail_from: tail });
    tail = w.appendMessage(user(`kept ${k}`)).uuid;
  }
  w.close();
  const heads = readFileSync(path, "utf8").split("\n").filter((l) => l.startsWith('{"type":"boundary"')).map((l) => ("head_diff" in JSON.parse(l) ? "diff" : "base"));
  assert.deepEqual(heads, ["base", "diff", "diff"]);
  // And a resume rebuilds each head as written.
  const bounds = loadTranscript(path).entries.filter((e): e is BoundaryEntry => e.type === "boundary");
  assert.deepEqual(bounds.map((b) => (b.head![1]!.content as { text: string }[])[0]!.text.slice(0, 7)), ["note 0 ", "note 1 ", "note 2 "]);
  });
});

test("a writer's first message lines are what JSON.stringify writes, byte for byte (their JSON is kept for snip heads); a message it cannot write is a one-line error, nothing written", () => {
  inTempDir((dir) => {
    const path = join(dir, "t.jsonl");
    const w = openTranscript(path, { header: { id: "s", cwd: dir } });
    const messages: Message[] = [
      user("plain \u2028 \"quoted\" \\ é 😀"),
      { role: "assistant", content: [{ type: "text", text: "calling" }, { type: "tool_use", id: "t1", name: "bash", input: { command: "ls", nested: { when: new Date(0) } } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }], id: "extra-key" } as Message,
      { role: "assistant", content: "a string", toJSON: () => ({ role: "assistant", content: "as toJSON says" }) } as unknown as Message,
    ];
    const entries = messages.map((m) => w.appendMessage(m));
    assert.throws(() => w.appendMessage({ role: "user", content: [{ type: "text", text: "x", n: 1n }] } as unknown as Message), (e: Error) => /cannot write this message as JSON/.test(e.message) && !e.message.includes("\n"));
    w.close();
    const lines = readFileSync(path, "utf8").split("\n").filter(Boolean).slice(1);
    assert.equal(lines.length, entries.length);
    entries.forEach((e, i) => assert.equal(lines[i], JSON.stringify(e)));
  });
});

test("a session's first messages are turned into JSON once: the first snip head, written in full, reuses what their lines wrote", () => {
  inTempDir((dir) => {
    let calls = 0;
    const counted = { toJSON: () => (calls++, { command: "make test" }) };
    const w = openTranscript(join(dir, "t.jsonl"), { header: { id: "s", cwd: dir } });
    const first: Message[] = [TASK, { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: counted as unknown as Record<string, unknown> }] }];
    for (const m of first) w.appendMessage(m);
    const tail = { role: "assistant" as const, content: "done" };
    w.appendMessage(tail);
    const written = calls;
    const bounded: Message = { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }, { type: "text", text: "[lethe: 4 earlier messages were removed]" }] };
    w.appendBoundary({ kind: "snip", tokens_before: 100, tokens_after: 50, head: [...first, bounded], tail_from: w.uuidOf!(tail)! });
    w.close();
    assert.equal(calls, written, "the head's tool call was not written out again");
    const boundary = loadTranscript(join(dir, "t.jsonl")).entries.find((e) => e.type === "boundary") as BoundaryEntry;
    assert.deepEqual(boundary.head, JSON.parse(JSON.stringify([...first, bounded])));
  });
});
