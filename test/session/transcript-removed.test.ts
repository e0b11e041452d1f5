// A snip boundary writes the lines it removed as runs (src/session/transcript-removed.ts): every
// reader gives back what the whole form held, and a damaged or hostile run is a warning, not a throw.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine } from "../../src/engine/index.ts";
import type { Message } from "../../src/messages/types.ts";
import { type BoundaryEntry, type TranscriptWriter, loadTranscript, openTranscript, parseTranscript, resumeContext } from "../../src/session/transcript.ts";
import { loadTranscriptTail } from "../../src/session/transcript-tail.ts";
import { SessionCache } from "../../src/cli/view/session-cache.ts";
import { calls, results, user } from "../support/build.ts";

/**
 * A read-heavy session (budget moves one huge result to a file, micro clears old ones, snips) on
 * a transcript at `path`, its messages under fixed uuids. `whole`: the writer does not say where
 * its lines are, so boundaries list every uuid and result as before.
 */
async function session(path: string, whole: boolean): Promise<void> {
  const opened = openTranscript(path, { header: { id: "s", cwd: "/w" } });
  const transcript: TranscriptWriter = whole ? { ...opened, lineOf: undefined } : opened;
  const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, transcript, transcriptHoldsHistory: true, summarizerMode: "digest", sessionDir: join(path, "..") });
  const host: Message[] = [user("read the logs and tell me what failed")];
  const written = new Set<Message>();
  let n = 0;
  for (let k = 0; k < 70; k++) {
    const body = k === 7 ? "x".repeat(120_000) : `line ${k} `.repeat(k % 4 === 0 ? 1_500 : 100);
    host.push(calls(["bash", { command: `cat log${k}` }, `toolu_${k}`]), results([`toolu_${k}`, body]));
    for (const m of host) if (!written.has(m)) (opened.appendMessage(m, { uuid: `m${n++}` }), written.add(m));
    await engine.beforeRequest(host);
  }
  opened.close();
}

/** The snip boundaries' removed and carried, the session folder's path in them made `<dir>` (the two sessions live in two folders). */
const snipsOf = (entries: readonly unknown[], dir: string) =>
  JSON.parse(JSON.stringify((entries as BoundaryEntry[]).filter((e) => e.type === "boundary" && e.kind === "snip").map((b) => ({ removed: b.removed, carried: b.carried }))).replaceAll(dir, "<dir>")) as { removed: unknown; carried: unknown }[];

test("a snip's boundary line names the lines it removed as runs; loading and the viewer's pages give back the whole form, as a writer listing everything wrote it, and a resume from the tail reads none of them", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-removed-"));
  try {
    const runs = join(dir, "runs", "transcript.jsonl");
    const lists = join(dir, "lists", "transcript.jsonl");
    await session(runs, false);
    await session(lists, true);
    const loaded = loadTranscript(runs);
    assert.deepEqual([loaded.warnings, loaded.errors], [[], []]);
    const expected = snipsOf(loadTranscript(lists).entries, join(dir, "lists"));
    assert.ok(expected.length >= 3 && expected.every((s) => (s.removed as { tool_results: unknown[] }).tool_results.length > 0), `the session snips, removing results (${expected.length})`);
    assert.ok(expected.some((s) => JSON.stringify(s.removed).includes("tool-results")), "one removed result is in a file (budget moved it)");
    assert.deepEqual(snipsOf(loaded.entries, join(dir, "runs")), expected, "loadTranscript");

    // On disk: runs, and no list of uuids or results; the lines are smaller.
    const raw = (p: string) => readFileSync(p, "utf8").trim().split("\n").filter((l) => l.includes('"kind":"snip"'));
    for (const l of raw(runs)) {
      const r = (JSON.parse(l) as { removed: Record<string, unknown> }).removed;
      assert.ok(Array.isArray(r.lines) && r.uuids === undefined && r.tool_results === undefined && !("carried" in JSON.parse(l)), "a snip line holds runs");
    }
    const bytes = (p: string) => raw(p).reduce((a, l) => a + l.length, 0);
    assert.ok(bytes(runs) < 0.8 * bytes(lists), `snip lines ${bytes(runs)} bytes against ${bytes(lists)}`);

    // Resuming reads the tail only, and not the lines a snip there removed (it needs the head):
    // its boundary keeps the runs, and the context is the same.
    const tail = loadTranscriptTail(runs);
    assert.ok(tail.from > 0, "the resume reads from the last snip on");
    const fromTail = snipsOf(tail.entries, join(dir, "runs"));
    assert.ok(fromTail.length >= 1 && fromTail.every((s) => Array.isArray((s.removed as { lines?: unknown }).lines)), "runs, as written");
    assert.deepEqual(tail.warnings, []);
    assert.deepEqual(resumeContext(tail.entries), resumeContext(loaded.entries));

    // The viewer parses each page on its own.
    const cache = new SessionCache(runs);
    cache.refresh();
    const pages = [];
    for (let i = 0; i < cache.total; i++) pages.push(...(JSON.parse(cache.page(i, 1, 1 << 20).json) as unknown[]));
    assert.deepEqual(snipsOf(pages, join(dir, "runs")), expected, "the viewer's pages");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a snip line with damaged or hostile runs is kept as written with a warning: nothing throws, nothing is read past a cap, the resume point still works", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-removed-"));
  try {
    const msg = (uuid: string, text: string) => JSON.stringify({ type: "message", uuid, ts: "t", message: { role: "user", content: [{ type: "text", text }] } });
    const snip = (removed: unknown) => JSON.stringify({ type: "boundary", ts: "t", kind: "snip", tokens_before: 10, tokens_after: 5, removed, head: [{ role: "user", content: "task" }], tail_from: "c" });
    const head = [JSON.stringify({ type: "session", id: "s", created: "t", cwd: "/w", version: 1 }), msg("a", "one"), msg("b", "two"), msg("c", "three")];
    const at = head.slice(0, 1).join("\n").length + 1;
    // null: read back whole; "kept": not this format (kept as it is, as any field a reader does not know).
    const cases: [unknown, RegExp | null | "kept"][] = [
      [{ messages: 2, lines: [{ first: "a", last: "b", at, end: at + 10 }] }, null], // found among the lines before it
      [{ messages: 2, lines: "a..b" }, "kept"],
      [{ messages: 2, lines: [1, 2] }, /not runs/],
      [{ messages: 2, lines: [{ first: "a", last: "b", at: -1, end: 5 }] }, /not runs/],
      [{ messages: 2, lines: [{ first: "a", last: "b", at: 5, end: 5 }] }, /not runs/],
      [{ messages: 2, lines: [{ first: "a", last: "b", at: 0, end: 2 ** 40 }] }, /longer than a reader reads/],
      [{ messages: 3, lines: [0, 1, 2].map(() => ({ first: "a", last: "b", at: 0, end: 2 ** 27 })) }, /longer than a reader reads/],
      [{ messages: 1, lines: [{ first: "a", last: "a", at, end: at + 5 }, { first: "b", last: "b", at, end: at + 5 }] }, /more runs than messages/],
      [{ messages: "2", lines: [] }, /no message count/],
      [{ messages: 2, lines: [{ first: "x", last: "y", at, end: at + 40 }] }, /not where it says/],
      [{ messages: 5, lines: [{ first: "a", last: "b", at, end: at + 10 }] }, /hold 2 messages, not 5/],
      [{ messages: 2, lines: [{ first: "a", last: "b", at, end: at + 1 }], persisted: [{ tool_use_id: 1 }] }, /places are not a list/],
    ];
    for (const [removed, warned] of cases) {
      const path = join(dir, "t.jsonl");
      writeFileSync(path, [...head, snip(removed), ""].join("\n"));
      const t = loadTranscript(path);
      const b = t.entries.find((e) => e.type === "boundary") as BoundaryEntry;
      assert.ok(b, "the boundary is kept");
      if (warned === null) {
        assert.deepEqual(t.warnings, []);
        assert.deepEqual((b.removed as { uuids: string[] }).uuids, ["a", "b"]);
      } else if (warned === "kept") {
        assert.deepEqual([t.warnings, b.removed], [[], removed]);
      } else {
        assert.equal(t.warnings.length, 1, JSON.stringify(removed));
        assert.match(t.warnings[0]!, warned);
        assert.match(t.warnings[0]!, /^.*t\.jsonl:5: /);
        assert.deepEqual(b.removed, removed, "kept as written");
      }
      assert.deepEqual(resumeContext(t.entries).map((m) => m.content), ["task", [{ type: "text", text: "three" }]], "the resume point still works");
      // A part of a file parsed on its own, with no way to read the rest: kept as written, no warning.
      const part = parseTranscript(snip(removed));
      assert.equal(part.warnings.filter((w) => /not where it says|hold 2/.test(w)).length, 0);
    }
    // A run read from the file past a line a crash cut short (a failed write, then the writer's
    // torn-tail note): the fragment is passed over, as a parse passes it over.
    {
      const torn = '{"type":"message","uuid":"z","ts":"t","message":{"ro';
      const note = JSON.stringify({ type: "event", ts: "t", name: "torn-tail" });
      const lines = [head[0]!, head[1]!, torn, note, head[2]!, head[3]!];
      const text = `${lines.join("\n")}\n`;
      const from = lines[0]!.length + 1, to = lines.slice(0, 5).join("\n").length + 1;
      const bytes = Buffer.from(text);
      const line = snip({ messages: 2, lines: [{ first: "a", last: "b", at: from, end: to }] });
      const t = parseTranscript(line, "page", { readBytes: (at, end) => bytes.toString("utf8", at, end) });
      assert.deepEqual([t.warnings, ((t.entries[0] as BoundaryEntry).removed as { uuids: string[] }).uuids], [[], ["a", "b"]]);
    }
    // A head read back may hold a text block without a string: it carries nothing, and nothing throws.
    const path = join(dir, "t.jsonl");
    const odd = JSON.stringify({ type: "boundary", ts: "t", kind: "snip", tokens_before: 10, tokens_after: 5, removed: { messages: 2, lines: [{ first: "a", last: "b", at, end: at + 10 }] }, head: [{ role: "user", content: [{ type: "text", text: 5 }, { type: "text", text: "<lethe-todos>\n- [ ] x\n</lethe-todos>" }] }], tail_from: "c" });
    writeFileSync(path, [...head, odd, ""].join("\n"));
    const t = loadTranscript(path);
    const b = t.entries.find((e) => e.type === "boundary") as BoundaryEntry;
    assert.deepEqual([t.warnings, (b.carried as { todos: boolean }).todos, (b.removed as { uuids: string[] }).uuids], [[], true, ["a", "b"]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
