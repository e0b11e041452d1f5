// recall's index is kept beside the transcript (src/session/recall-index.ts): a new process (a CLI
// run, the viewer) loads it instead of parsing and rendering the whole transcript again, extends it
// with what was appended since, and rebuilds it when it no longer describes the file. Each case
// runs recall in new processes, as they would, and reads what the index did there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { persistedMarker } from "../../src/compaction/layers/markers.ts";
import { createSessionDir, type SessionPaths } from "../../src/session/paths.ts";
import { RECALL_INDEX_FILE } from "../../src/session/recall-index.ts";
import type { RecallOptions } from "../../src/session/recall-types.ts";
import { createFileStore } from "../../src/session/tool-results.ts";
import { openTranscript } from "../../src/session/transcript.ts";
import { calls, results, said, user } from "../support/build.ts";

const CHILD = join(import.meta.dirname, "recall-child.ts");

interface Run {
  answers: string[];
  stats: { loads: number; parsedBytes: number; saves: number };
}

/** recall in a new process. */
function run(s: SessionPaths, opts: RecallOptions[]): Run {
  return JSON.parse(execFileSync(process.execPath, ["--import", "tsx", CHILD, s.dir, JSON.stringify(opts)], { encoding: "utf8" })) as Run;
}

/** A session of `rounds` tool rounds: text with emoji and CJK, tool inputs, results, a result saved to a file. */
function session(ws: string, rounds: number): SessionPaths {
  const s = createSessionDir(ws, "20260101-000000-000-0123456789");
  const w = openTranscript(s.transcript, { header: { id: s.id, cwd: ws } });
  const store = createFileStore(s.toolResults);
  w.appendMessage(user("Fix the parser 🎉 and its tests (構文解析)"));
  for (let k = 0; k < rounds; k++) {
    w.appendMessage(calls(["bash", { command: `pytest -k case_${k} # 日本 ${k}` }, `toolu_${k}`]));
    const out = `case ${k}: ${k % 7 === 3 ? "FAILED AssertionError 💥" : "passed"}\n`.repeat(20);
    if (k % 50 === 7) {
      const path = store.save(`toolu_${k}`, `${out}saved-only-needle-${k}`);
      w.appendMessage(results([`toolu_${k}`, persistedMarker({ toolUseId: `toolu_${k}`, path, chars: out.length, tokens: 100, preview: out.slice(0, 40) })]));
    } else w.appendMessage(results([`toolu_${k}`, out]));
    if (k % 10 === 0) w.appendMessage(said(`Round ${k} done; next the lexer 🎉.`));
  }
  w.appendMessage(calls(["read_file", { path: "src/never-answered.py" }, "toolu_open"]));
  w.close();
  return s;
}

const QUERIES: RecallOptions[] = [
  { query: "AssertionError 💥" },
  { query: "/case_1\\d\\b/" },
  { query: "日本 42" },
  { query: "saved-only-needle-57" },
  { query: "lexer 🎉" },
  { id: "toolu_12" },
  { id: "toolu_57" },
  { id: "toolu_open" },
  { id: "toolu_3", unit: "lines", offset: 2, limit: 3 },
];

function withSession(rounds: number, fn: (s: SessionPaths) => void) {
  const ws = mkdtempSync(join(tmpdir(), "lethe-recall-index-"));
  try {
    fn(session(ws, rounds));
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

test("a new process loads recall's index from beside the transcript instead of indexing the transcript again, with the same answers", () => {
  withSession(600, (s) => {
    const size = statSync(s.transcript).size;
    const first = run(s, QUERIES);
    assert.deepEqual(first.stats, { loads: 0, parsedBytes: size, saves: 1 });
    assert.ok(existsSync(join(s.dir, RECALL_INDEX_FILE)));
    const second = run(s, QUERIES);
    assert.deepEqual(second.stats, { loads: 1, parsedBytes: 0, saves: 0 }, "nothing re-indexed");
    assert.deepEqual(second.answers, first.answers);
    // The answers are real ones: hits, slices, the saved file, the call without a result.
    assert.match(first.answers[0]!, /^recall: [\d,]+ match\(es\) for "AssertionError 💥"/);
    assert.match(first.answers[3]!, /toolu_57 \(bash\) \[saved file\]/);
    assert.match(first.answers[7]!, /"path": "src\/never-answered.py"/);
  });
});

test("the transcript grew: a new process indexes only the bytes appended since (a line still being written waits)", () => {
  withSession(300, (s) => {
    run(s, [{ query: "warm" }]);
    const before = statSync(s.transcript).size;
    const w = openTranscript(s.transcript);
    w.appendMessage(calls(["bash", { command: "make grown-needle" }, "toolu_grown"]));
    w.appendMessage(results(["toolu_grown", "grown output"]));
    w.close();
    const grown = statSync(s.transcript).size;
    writeFileSync(s.transcript, '{"type":"message","uuid":"half","ts":"t","message":{"role":"user","content":"half-written', { flag: "a" });
    const r = run(s, [{ query: "grown-needle" }, { id: "toolu_grown" }, { query: "half-written" }]);
    assert.equal(r.stats.loads, 1);
    assert.equal(r.stats.parsedBytes, grown - before);
    assert.match(r.answers[0]!, /1 match/);
    assert.match(r.answers[1]!, /\ngrown output\n/);
    assert.match(r.answers[2]!, /no match/);
    writeFileSync(s.transcript, ' done"}}\n', { flag: "a" });
    const done = run(s, [{ query: "half-written done" }]);
    assert.equal(done.stats.parsedBytes, statSync(s.transcript).size - before, "what the index on disk does not cover");
    assert.match(done.answers[0]!, /1 match/);
  });
});

test("an index that no longer describes its transcript (replaced, damaged, another version) is rebuilt from the transcript", () => {
  withSession(300, (s) => {
    const expected = run(s, QUERIES).answers;
    const index = join(s.dir, RECALL_INDEX_FILE);
    const good = readFileSync(index);
    // Cut short.
    writeFileSync(index, good.subarray(0, good.length >> 1));
    let r = run(s, QUERIES);
    assert.deepEqual([r.stats.loads, r.stats.saves], [0, 1]);
    assert.deepEqual(r.answers, expected);
    // Another version.
    writeFileSync(index, good.toString("latin1").replace(/"version":\d+/, '"version":999'), "latin1");
    r = run(s, QUERIES);
    assert.deepEqual([r.stats.loads, r.stats.saves], [0, 1]);
    assert.deepEqual(r.answers, expected);
    // A value that does not fit its column (the first uuid made longer than its page), found
    // while a search names its message: the index is dropped and rebuilt, the answer the same.
    const damaged = Buffer.from(good);
    const nl = damaged.indexOf(0x0a);
    const start = nl + 1 + (JSON.parse(damaged.toString("utf8", 0, nl)) as { meta: number }).meta;
    damaged.writeInt32LE(1_000_000, start + 24 + 8 * (damaged.readDoubleLE(start + 8) + damaged.readDoubleLE(start + 16)));
    writeFileSync(index, damaged);
    r = run(s, QUERIES);
    assert.deepEqual([r.stats.loads, r.stats.saves], [1, 1]);
    assert.deepEqual(r.answers, expected);
    assert.ok(r.stats.parsedBytes > 0);
    // The transcript replaced by another, longer one: its old lines are gone from the answers.
    const text = readFileSync(s.transcript, "utf8");
    writeFileSync(s.transcript, text.replaceAll("the lexer", "the tokenizer").replaceAll("passed", "passed!"));
    r = run(s, [{ query: "lexer" }, { query: "tokenizer" }]);
    assert.equal(r.stats.loads, 0);
    assert.equal(r.stats.parsedBytes, statSync(s.transcript).size);
    assert.match(r.answers[0]!, /no match/);
    assert.match(r.answers[1]!, /match\(es\)/);
  });
});
