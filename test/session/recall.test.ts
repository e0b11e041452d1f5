import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "../../src/messages/types.ts";
import { createSessionDir, type SessionPaths } from "../../src/session/paths.ts";
import { RECALL_MAX_CHARS, type RecallResult, type RecallSearch, type RecallSlice, recall } from "../../src/session/recall.ts";
import { createFileStore } from "../../src/session/tool-results.ts";
import { openTranscript } from "../../src/session/transcript.ts";
import { persistedMarker } from "../../src/compaction/layers/markers.ts";
import { calls, results, said, user } from "../support/build.ts";

function slice(r: RecallResult): RecallSlice {
  assert.equal(r.kind, "slice", r.text);
  return r as RecallSlice;
}
function found(r: RecallResult): RecallSearch {
  assert.equal(r.kind, "search", r.text);
  return r as RecallSearch;
}
function failed(r: RecallResult, re: RegExp): void {
  assert.equal(r.kind, "error");
  assert.match(r.text, /^recall: /);
  assert.ok(!r.text.includes("\n"), `one line: ${r.text}`);
  assert.match(r.text, re);
}

/** 60,000 chars with emoji (surrogate pairs) everywhere and a needle at 30,000. */
const BIG = (() => {
  let s = "";
  for (let i = 0; s.length < 30_000; i++) s += `row ${i} 🎉 `;
  s = s.slice(0, 30_000);
  if (s.charCodeAt(29_999) >= 0xd800 && s.charCodeAt(29_999) <= 0xdbff) s = `${s.slice(0, 29_999)}x`;
  s += "NEEDLE-in-the-haystack ";
  for (let i = 0; s.length < 60_000; i++) s += `tail ${i} 日本 `;
  return s;
})();

interface Fixture {
  ws: string;
  s: SessionPaths;
  uuids: Record<string, string>;
}

function withSession(fn: (f: Fixture) => void) {
  return () => {
    const ws = mkdtempSync(join(tmpdir(), "lethe-recall-"));
    try {
      const s = createSessionDir(ws, "20250101-000000-000-0123456789");
      const w = openTranscript(s.transcript, { header: { id: s.id, cwd: ws } });
      const store = createFileStore(s.toolResults);
      const uuids: Record<string, string> = {};
      const add = (name: string, m: Message) => (uuids[name] = w.appendMessage(m).uuid);
      add("ask", user("Fix the Login bug in src/auth.ts please"));
      add("call", calls(["grep", { pattern: "TODO-marker", path: "src" }, "toolu_big"], ["bash", { command: "npm test" }, "toolu_small"]));
      add("res", results(["toolu_big", BIG], ["toolu_small", "3 passing\n1 failing: login rejects valid token", true]));
      // The budget layer saved the big one before replacing it in the context.
      const path = store.save("toolu_big", BIG);
      w.appendBoundary({
        kind: "budget",
        tokens_before: 20_000,
        tokens_after: 1_000,
        history: [
          user("Fix the Login bug in src/auth.ts please"),
          calls(["grep", { pattern: "TODO-marker", path: "src" }, "toolu_big"], ["bash", { command: "npm test" }, "toolu_small"]),
          results(["toolu_big", persistedMarker({ toolUseId: "toolu_big", path, chars: BIG.length, tokens: 15_000, preview: BIG.slice(0, 100) })], ["toolu_small", "3 passing\n1 failing: login rejects valid token", true]),
        ],
      });
      add("blocks", calls(["read_file", { file_path: "a.png" }, "toolu_img"]));
      add("img", results(["toolu_img", [{ type: "text", text: "an image follows" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }]]));
      add("fix", said("The login bug is fixed now."));
      w.close();
      fn({ ws, s, uuids });
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  };
}

// ───────────────────────── by id ─────────────────────────

test("by tool_use id: the saved file, in bounded slices that say how to get the next", withSession(({ s }) => {
  const r = slice(recall(s.dir, { id: "toolu_big" }));
  assert.equal(r.source, "tool-result-file");
  assert.equal(r.path, join(s.toolResults, "toolu_big.txt"));
  assert.equal(r.unit, "chars");
  assert.equal(r.offset, 0);
  assert.equal(r.total, BIG.length);
  assert.ok(r.content.length <= RECALL_MAX_CHARS && r.content.length >= RECALL_MAX_CHARS - 1);
  assert.equal(r.content, BIG.slice(0, r.end));
  assert.equal(r.next, r.end);
  assert.match(r.text, /chars 0–[\d,]+ of 60,0\d\d/);
  assert.ok(r.text.includes(`recall id "toolu_big" offset ${r.end}`), r.text);
}));

test("slices with offset walk the whole original exactly, never splitting a character", withSession(({ s }) => {
  let offset: number | null = 0;
  let all = "";
  let n = 0;
  while (offset !== null) {
    const r = slice(recall(s.dir, { id: "toolu_big", offset, limit: 7_777 }));
    assert.equal(r.offset, offset);
    assert.ok(r.content.length <= 7_777);
    assert.ok(!/^[\udc00-\udfff]/.test(r.content) && !/[\ud800-\udbff]$/.test(r.content), "no split pair");
    all += r.content;
    offset = r.next;
    n++;
  }
  assert.equal(all, BIG);
  assert.ok(n >= 8);
  const last = slice(recall(s.dir, { id: "toolu_big", offset: BIG.length - 10 }));
  assert.equal(last.next, null);
  assert.match(last.text, /end of toolu_big/);
  // A limit above the bound is capped.
  assert.ok(slice(recall(s.dir, { id: "toolu_big", limit: 1_000_000 })).content.length <= RECALL_MAX_CHARS);
  // The saved file name (or its path, as a marker names it) works as an id too.
  assert.equal(slice(recall(s.dir, { id: join(s.toolResults, "toolu_big.txt") })).id, "toolu_big");
}));

test("by tool_use id without a saved file: the transcript's original tool_result", withSession(({ s }) => {
  const r = slice(recall(s.dir, { id: "toolu_small" }));
  assert.equal(r.source, "tool_result");
  assert.equal(r.path, s.transcript);
  assert.equal(r.content, "3 passing\n1 failing: login rejects valid token");
  assert.equal(r.next, null);
  // A block-list result comes back as its exact JSON (what the budget layer would save).
  const img = slice(recall(s.dir, { id: "toolu_img" }));
  assert.deepEqual(JSON.parse(img.content), [{ type: "text", text: "an image follows" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }]);
}));

test("by message uuid: the message as text, tool results as pointers to their ids", withSession(({ s, uuids }) => {
  const ask = slice(recall(s.dir, { id: uuids.ask! }));
  assert.equal(ask.source, "message");
  assert.equal(ask.content, "Fix the Login bug in src/auth.ts please");
  const call = slice(recall(s.dir, { id: uuids.call! }));
  assert.match(call.content, /\[tool_use grep toolu_big\] \{"pattern":"TODO-marker","path":"src"\}/);
  const res = slice(recall(s.dir, { id: uuids.res! }));
  assert.match(res.content, /\[tool_result toolu_big: 60,0\d\d chars; recall id "toolu_big"\]/);
  assert.match(res.content, /\[tool_result toolu_small \(error\)/);
}));

test("unit lines: offset/limit count lines; an over-long line continues by chars", () => {
  const ws = mkdtempSync(join(tmpdir(), "lethe-recall-"));
  try {
    const s = createSessionDir(ws, "s1");
    const text = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n") + "\n";
    createFileStore(s.toolResults).save("toolu_lines", text);
    const r = slice(recall(s.dir, { id: "toolu_lines", unit: "lines", offset: 10, limit: 5 }));
    assert.equal(r.content, "line 10\nline 11\nline 12\nline 13\nline 14\n");
    assert.equal(r.total, 1000);
    assert.equal(r.next, 15);
    assert.match(r.text, /lines 10–15 of 1,000/);
    assert.ok(r.text.includes('recall id "toolu_lines" unit "lines" offset 15'), r.text);
    // Without a limit: as many whole lines as fit in the bound.
    const all = slice(recall(s.dir, { id: "toolu_lines", unit: "lines" }));
    assert.ok(all.content.length <= RECALL_MAX_CHARS && all.content.endsWith("\n"));
    assert.equal(all.content, text.slice(0, all.content.length));
    // One line longer than the bound.
    createFileStore(s.toolResults).save("toolu_long", `short\n${"z".repeat(20_000)}\nend\n`);
    const long = slice(recall(s.dir, { id: "toolu_long", unit: "lines", offset: 1 }));
    assert.equal(long.content.length, RECALL_MAX_CHARS);
    assert.ok(long.text.includes(`unit "chars" offset ${6 + RECALL_MAX_CHARS}`), long.text);
    assert.equal(long.next, 2);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

// ───────────────────────── by query ─────────────────────────

test("by query: case-insensitive, over saved files, tool inputs and message text; hits name their id and offset", withSession(({ s, uuids }) => {
  const needle = found(recall(s.dir, { query: "needle-IN-the" }));
  assert.equal(needle.hits.length, 1);
  const h = needle.hits[0]!;
  assert.equal(h.id, "toolu_big");
  assert.equal(h.source, "tool-result-file");
  assert.equal(h.tool, "grep");
  assert.equal(h.at, 30_000);
  assert.match(h.snippet, /NEEDLE-in-the-haystack/);
  assert.ok(needle.text.includes("toolu_big"));
  // The hit's offset fetches the match.
  assert.ok(slice(recall(s.dir, { id: h.id, offset: h.at })).content.startsWith("NEEDLE"));

  const input = found(recall(s.dir, { query: "todo-MARKER" }));
  assert.equal(input.hits[0]?.id, uuids.call);
  assert.equal(input.hits[0]?.toolUseId, "toolu_big");
  assert.equal(input.hits[0]?.tool, "grep");

  const small = found(recall(s.dir, { query: "rejects valid" }));
  assert.deepEqual(small.hits.map((x) => [x.id, x.source]), [["toolu_small", "tool_result"]]);
}));

test("by query: newest first; /regex/ works; the persisted result is searched once, not twice", withSession(({ s, uuids }) => {
  const r = found(recall(s.dir, { query: "/login [a-z]+/" }));
  const ids = r.hits.map((x) => x.id);
  // "The login bug is fixed" (newest), then the failing test output, then the first request.
  assert.deepEqual(ids, [uuids.fix, "toolu_small", uuids.ask]);
  assert.equal(r.totalMatches, 3);
  assert.equal(found(recall(s.dir, { query: "NEEDLE" })).totalMatches, 1, "saved file and transcript copy count once");
  const none = found(recall(s.dir, { query: "zebra" }));
  assert.equal(none.hits.length, 0);
  assert.match(none.text, /^recall: no match for "zebra"/);
}));

test("by query: bounded in hits and size, says what it left out", () => {
  const ws = mkdtempSync(join(tmpdir(), "lethe-recall-"));
  try {
    const s = createSessionDir(ws, "s1");
    const w = openTranscript(s.transcript);
    for (let i = 0; i < 100; i++) w.appendMessage(i % 2 ? said(`foo ${i} ${"pad ".repeat(200)}`) : user(`FOO ${i} ${"x".repeat(1000)} foo foo foo foo`));
    w.close();
    const r = found(recall(s.dir, { query: "foo" }));
    assert.ok(r.hits.length <= 20);
    assert.ok(r.text.length <= RECALL_MAX_CHARS, `${r.text.length}`);
    assert.equal(r.totalMatches, 50 * 1 + 50 * 5);
    assert.ok(r.truncated);
    assert.match(r.text, /300 match\(es\) .* in 100 item\(s\)/);
    // Newest first: the first hit is message 99.
    assert.match(r.hits[0]!.snippet, /^foo 99 /);
    // No more than 3 hits from one item.
    const per = new Map<string, number>();
    for (const h of r.hits) per.set(h.id, (per.get(h.id) ?? 0) + 1);
    assert.ok([...per.values()].every((n) => n <= 3));
    // Tighter bounds are honoured too.
    const small = found(recall(s.dir, { query: "foo", maxHits: 4, maxChars: 2_000 }));
    assert.ok(small.hits.length <= 4 && small.text.length <= 2_000);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test("a saved file the transcript does not mention is still searchable and readable", () => {
  const ws = mkdtempSync(join(tmpdir(), "lethe-recall-"));
  try {
    const s = createSessionDir(ws, "s1");
    writeFileSync(join(s.toolResults, "toolu_orphan.txt"), "orphaned output with a KEYWORD");
    const r = found(recall(s.dir, { query: "keyword" }));
    assert.equal(r.hits[0]?.id, "toolu_orphan");
    assert.equal(slice(recall(s.dir, { id: "toolu_orphan" })).content, "orphaned output with a KEYWORD");
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

// ───────────────────────── never throws ─────────────────────────

test("bad input gives a one-line error text, never an exception", withSession(({ s, ws }) => {
  failed(recall(s.dir, { query: "/(/" }), /invalid regex/);
  failed(recall(s.dir, { query: "/a*/" }), /empty string/);
  failed(recall(s.dir, { query: "   " }), /give an id .* or a query/);
  failed(recall(s.dir, {}), /give an id/);
  failed(recall(s.dir, { id: "toolu_nope" }), /nothing with id "toolu_nope"/);
  failed(recall(s.dir, { id: "toolu_big", offset: -1 }), /offset must be an integer/);
  failed(recall(s.dir, { id: "toolu_big", limit: 0 }), /limit must be/);
  failed(recall(s.dir, { id: "toolu_big", unit: "words" as never }), /unit must be/);
  failed(recall(join(ws, "missing"), { query: "x" }), /no session folder/);
  failed(recall(s.dir, { id: 42 as never, query: 7 as never }), /give an id/);
  // Characters that mean something in a regex are literal in a plain query.
  assert.equal(found(recall(s.dir, { query: "src/auth.ts please" })).hits.length, 1);
  assert.equal(found(recall(s.dir, { query: "(" })).kind, "search");
}));

test("a damaged transcript still answers, and says lines were skipped", withSession(({ s }) => {
  writeFileSync(s.transcript, `{"type":"message", garbage\n${JSON.stringify({ type: "message", uuid: "u", ts: "t", message: user("still here") })}\n{"torn`, { flag: "a" });
  const r = found(recall(s.dir, { query: "still here" }));
  assert.equal(r.hits[0]?.id, "u");
  assert.match(r.text, /1 damaged transcript line\(s\) skipped/);
}));

test("recall keeps its index of a transcript: a later query sees lines appended since (read from where it stopped), a replaced file is indexed again", () => {
  const base = mkdtempSync(join(tmpdir(), "lethe-recall-index-"));
  try {
    const paths = createSessionDir(base);
    const w = openTranscript(paths.transcript, { header: { id: paths.id, cwd: base } });
    w.appendMessage(user("first request: alpha"));
    w.appendMessage(calls(["bash", { command: "make alpha" }, "toolu_a"]));
    w.appendMessage(results(["toolu_a", "alpha built"]));
    assert.equal(found(recall(paths.dir, { query: "alpha built" })).hits.length, 1);
    const none = recall(paths.dir, { query: "beta" });
    assert.ok(none.kind !== "search" || none.hits.length === 0);
    // Appended after the first query, one line left half-written (a writer mid-line).
    w.appendMessage(calls(["bash", { command: "make beta" }, "toolu_b"]));
    w.appendMessage(results(["toolu_b", "beta built"]));
    w.close();
    writeFileSync(paths.transcript, '{"type":"message","uuid":"x","ts":"t","message":{"role":"user","content":"gamma half', { flag: "a" });
    assert.equal(found(recall(paths.dir, { query: "beta built" })).hits.length, 1);
    assert.match(slice(recall(paths.dir, { id: "toolu_b" })).text, /\nbeta built\n/);
    // The rest of the half-written line arrives: it is read once complete.
    writeFileSync(paths.transcript, ' done"}}\n', { flag: "a" });
    assert.equal(found(recall(paths.dir, { query: "gamma half done" })).hits.length, 1);
    // The file is replaced by a different, shorter one: indexed from the start again.
    const v = openTranscript(`${paths.transcript}.new`, { header: { id: paths.id, cwd: base } });
    v.appendMessage(user("delta only"));
    v.close();
    rmSync(paths.transcript);
    writeFileSync(paths.transcript, readFileSync(`${paths.transcript}.new`));
    assert.equal(found(recall(paths.dir, { query: "delta only" })).hits.length, 1);
    const gone = recall(paths.dir, { query: "alpha built" });
    assert.ok(gone.kind !== "search" || gone.hits.length === 0, "the replaced file's old lines are gone");
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("recall's regex prefilter: the literal every match must contain, or none when unsure", async () => {
  const { requiredLiteral } = await import("../../src/session/recall-search.ts");
  const cases: [string, string | null][] = [
    ["assert\\w+\\(", "assert"],
    ["Traceback \\(most", "Traceback (most"],
    ["\\bimport\\s+os\\b", "import"],
    ["colou?r", "colo"],
    ["x{0,3}abcd", "abcd"],
    ["foo(bar)?baz", "foo"],
    ["a|bcdef", null],
    ["ab+cd", null],
    ["[abc]def", "def"],
  ];
  for (const [p, want] of cases) assert.equal(requiredLiteral(p), want, p);
  // The prefilter never hides a match: every item the regex matches contains the literal.
  const base = mkdtempSync(join(tmpdir(), "lethe-recall-pre-"));
  try {
    const paths = createSessionDir(base);
    const w = openTranscript(paths.transcript, { header: { id: paths.id, cwd: base } });
    w.appendMessage(user("ASSERTEqual( one"));
    w.appendMessage(said("assert_x( two, and colour"));
    w.appendMessage(user("nothing here"));
    w.close();
    assert.equal(found(recall(paths.dir, { query: "/assert\\w+\\(/" })).totalMatches, 2);
    assert.equal(found(recall(paths.dir, { query: "/colou?r/" })).totalMatches, 1);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("recall runs a line-bound /regex/ only on the lines holding its literal, with the same matches as on the whole text", async () => {
  const { withinLines } = await import("../../src/session/recall-search.ts");
  assert.equal(withinLines("assert\\w+\\(", ""), true);
  for (const [p, f] of [["foo\\s+bar", ""], ["^def ", ""], ["a.b", "s"], ["[^x]y", ""], ["[\\t-\\r]", ""], ["a\\nb", ""]] as const) assert.equal(withinLines(p, f), false, p);
  assert.equal(withinLines("^def ", "m"), true);
  const base = mkdtempSync(join(tmpdir(), "lethe-recall-lines-"));
  try {
    const paths = createSessionDir(base);
    const w = openTranscript(paths.transcript, { header: { id: paths.id, cwd: base } });
    const lines = Array.from({ length: 400 }, (_, i) => (i % 37 === 5 ? `x assertEqual(${i}) and assert_true(${i})` : `line ${i} assert nothing`));
    w.appendMessage(user(lines.join("\n")));
    w.close();
    const hits = found(recall(paths.dir, { query: "/assert\\w+\\(/", maxHits: 100 }));
    // Two per matching line, on the 11 lines i % 37 == 5.
    assert.equal(hits.totalMatches, 22);
    const text = lines.join("\n");
    const expected = [...text.matchAll(/assert\w+\(/gi)].map((m) => m.index);
    assert.deepEqual(hits.hits.map((h) => h.at), expected.slice(0, 3), "the first item's hits, at the offsets of the whole text");
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
