// The viewer keeps its parsed session between requests and pages the transcript: no response is
// over 2 MB however long the session, the pages together are every entry exactly as
// loadTranscript reads them, and what is appended (or a replaced file) is seen by the next request.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startViewer } from "../../src/cli/view/server.ts";
import type { Message } from "../../src/messages/types.ts";
import { sessionPaths } from "../../src/session/paths.ts";
import { loadTranscript, openTranscript } from "../../src/session/transcript.ts";
import { calls, results, said, user } from "../support/build.ts";
import { makeWorkspace } from "./support.ts";

const ID = "20260101-000000-pages1";
const MB2 = 2 * 1024 * 1024;

async function get(url: string): Promise<{ bytes: number; body: any }> {
  const r = await fetch(url);
  assert.equal(r.status, 200, url);
  const buf = Buffer.from(await r.arrayBuffer());
  return { bytes: buf.length, body: JSON.parse(buf.toString("utf8")) };
}

/** Every page from `from` on, following `next`. */
async function allPages(base: string, query = ""): Promise<{ entries: any[]; largest: number; pages: number }> {
  let from: number | null = 0, largest = 0, pages = 0;
  const entries: any[] = [];
  while (from !== null) {
    const r = await get(`${base}api/entries?from=${from}${query}`);
    largest = Math.max(largest, r.bytes);
    pages++;
    assert.equal(r.body.from, from);
    entries.push(...r.body.entries);
    from = r.body.next;
  }
  return { entries, largest, pages };
}

/** A long session: requests, big tool results, snips (heads written once) and a summary with its rebuilt history. */
function writeLongSession(dir: string): string {
  const s = join(dir, ".lethe", "sessions", ID);
  mkdirSync(s, { recursive: true });
  const w = openTranscript(join(s, "transcript.jsonl"), { header: { id: ID, cwd: dir } });
  const task = user(`Port the parser. ${"Spec line. ".repeat(2_000)}`);
  w.appendMessage(task);
  let tail = "";
  for (let k = 0; k < 1_500; k++) {
    const a = w.appendMessage(calls(["bash", { command: `run step ${k}` }, `toolu_${k}`]));
    if (k % 100 === 0) tail = a.uuid;
    // Now and then an output near a page's size on its own.
    w.appendMessage(results([`toolu_${k}`, k % 250 === 7 ? `big ${k} `.repeat(120_000) : `step ${k} output é\n`.repeat(60)]));
    w.append({ type: "event", ts: "2026-01-01T00:00:00.000Z", name: "request", input_tokens: 1_000 + k, threshold: 150_000, context_window: 200_000, cost_usd: 0.001 });
    if (k % 100 === 50) w.appendBoundary({ kind: "snip", tokens_before: 9, tokens_after: 3, details: { kind: "snip" }, head: [task, said(`note ${k}`)], tail_from: tail });
    if (k === 1_000) w.appendBoundary({ kind: "summarize", tokens_before: 190_000, tokens_after: 30_000, summary: "so far", history: Array.from({ length: 40 }, (_, j): Message => user(`kept ${j} ${"x".repeat(30_000)}`)) });
  }
  w.close();
  return join(s, "transcript.jsonl");
}

test("/api/entries in pages: each response under 2 MB, together every entry as loadTranscript reads it, in order; /api/session is the chart's data only", async () => {
  const ws = makeWorkspace();
  try {
    const path = writeLongSession(ws.dir);
    const expected = loadTranscript(path).entries;
    const v = await startViewer(sessionPaths(ws.dir, ID));
    try {
      const session = await get(`${v.url}api/session`);
      assert.ok(session.bytes < MB2, `${session.bytes} bytes`);
      assert.equal(session.body.total, expected.length);
      assert.equal(session.body.requests.i.length, 1_500);
      assert.equal(session.body.boundaries.length, 16);
      const { entries, largest, pages } = await allPages(v.url);
      assert.ok(largest < MB2, `largest page ${largest} bytes`);
      assert.ok(pages >= 10, `${pages} pages`);
      assert.deepEqual(entries.map((e) => e.i), expected.map((_, i) => i));
      assert.deepEqual(entries.map(({ i: _, ...e }) => e), JSON.parse(JSON.stringify(expected)));
      // Smaller pages, and pages from anywhere: the same entries.
      const small = await allPages(v.url, "&limit=7");
      assert.deepEqual(small.entries, entries);
      const one = await get(`${v.url}api/entries?from=${session.body.boundaries[3].i}&limit=1`);
      assert.deepEqual(one.body.entries, [entries[session.body.boundaries[3].i]]);
      const past = await get(`${v.url}api/entries?from=${expected.length + 5}`);
      assert.deepEqual([past.body.entries, past.body.next], [[], null]);
    } finally {
      await v.close();
    }
  } finally {
    ws.cleanup();
  }
});

test("the viewer keeps its parse: lines appended since are read by the next request (a line half-written waits), a replaced file is read again", async () => {
  const ws = makeWorkspace();
  try {
    const s = join(ws.dir, ".lethe", "sessions", ID);
    mkdirSync(s, { recursive: true });
    const path = join(s, "transcript.jsonl");
    const w = openTranscript(path, { header: { id: ID, cwd: ws.dir } });
    w.appendMessage(user("first"));
    const v = await startViewer(sessionPaths(ws.dir, ID));
    try {
      assert.equal((await get(`${v.url}api/session`)).body.total, 1);
      w.appendMessage(said("second"));
      w.append({ type: "event", name: "request", input_tokens: 5, cost_usd: 0.5 });
      w.close();
      writeFileSync(path, '{"type":"message","uuid":"h","ts":"t","message":{"role":"user","content":"half', { flag: "a" });
      let r = await get(`${v.url}api/session`);
      assert.equal(r.body.total, 3);
      assert.deepEqual(r.body.requests.i, [2]);
      assert.equal((await get(`${v.url}api/entries`)).body.entries[1].message.content[0].text, "second");
      writeFileSync(path, ' done"}}\n', { flag: "a" });
      r = await get(`${v.url}api/entries`);
      assert.deepEqual([r.body.total, r.body.entries[3].message.content], [4, "half done"]);
      // Replaced by a shorter file: nothing of the old one is left.
      const fresh = openTranscript(`${path}.new`, { header: { id: ID, cwd: ws.dir } });
      fresh.appendMessage(user("only this"));
      fresh.close();
      writeFileSync(path, readFileSync(`${path}.new`));
      r = await get(`${v.url}api/session`);
      assert.deepEqual([r.body.total, r.body.requests.i], [1, []]);
      assert.equal((await get(`${v.url}api/entries`)).body.entries[0].message.content[0].text, "only this");
    } finally {
      await v.close();
    }
  } finally {
    ws.cleanup();
  }
});
