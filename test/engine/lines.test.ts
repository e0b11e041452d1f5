import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine } from "../../src/engine/index.ts";
import type { Message } from "../../src/messages/types.ts";
import { type TranscriptEntry, loadTranscript, openTranscript, resumeContext } from "../../src/session/transcript.ts";
import { ModelError } from "../../src/model/types.ts";
import { calls, results, user } from "../support/build.ts";

interface Line {
  type: string;
  kind?: string;
  uuid?: string;
  message?: Message;
  removed?: { messages: number; uuids: string[]; tool_results: { tool_use_id: string; message_uuid?: string }[] };
}

/** The tool_use ids whose result each message line holds, by the line's uuid. */
function resultsByLine(lines: Line[]): Map<string, Set<string>> {
  const by = new Map<string, Set<string>>();
  for (const l of lines) {
    if (l.type !== "message" || !l.uuid || typeof l.message?.content === "string") continue;
    by.set(l.uuid, new Set(l.message!.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : []))));
  }
  return by;
}

/** The transcript's entries as a reader gets them (snip boundaries' removed lines given back whole), none of it lost. */
function readBack(dir: string): Line[] {
  const t = loadTranscript(join(dir, "transcript.jsonl"));
  assert.deepEqual([t.warnings, t.errors], [[], []]);
  return t.entries as Line[];
}

/** A temp session folder with a transcript and an engine (32k window, the digest as summarizer; `opts` added, `sessionDir: true` for the folder) on it, removed after `body`. */
async function inSession(opts: Record<string, unknown>, body: (s: { dir: string; transcript: ReturnType<typeof openTranscript>; engine: ReturnType<typeof createEngine> }) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "lethe-lines-"));
  try {
    const transcript = openTranscript(join(dir, "transcript.jsonl"), { header: { id: "s", cwd: dir } });
    const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, transcript, transcriptHoldsHistory: true, summarizerMode: "digest", ...opts, sessionDir: opts.sessionDir ? dir : undefined });
    await body({ dir, transcript, engine });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a boundary names the transcript line of every message it removed, those budget or micro rewrote before it included (each removed result points at the line holding it)", () =>
  inSession({ sessionDir: true }, async ({ dir, transcript, engine }) => {
    // Rounds of reads: every fourth result is large (micro clears those once they are old), one is
    // huge (budget moves it to a file), and the host appends to its own list, as an agent does.
    const host: Message[] = [user("read the logs and tell me what failed")];
    const written = new Set<Message>();
    const kinds: string[] = [];
    for (let k = 0; k < 60; k++) {
      const body = k === 5 ? "x".repeat(120_000) : `line ${k} `.repeat(k % 4 === 0 ? 1_500 : 100);
      host.push(calls(["bash", { command: `cat log${k}` }, `toolu_${k}`]), results([`toolu_${k}`, body]));
      for (const m of host) if (!written.has(m)) (transcript.appendMessage(m), written.add(m));
      kinds.push(...(await engine.beforeRequest(host)).events.map((e) => e.kind));
    }
    host.push(user("now summarise"));
    transcript.appendMessage(host.at(-1)!);
    kinds.push(...(await engine.compact(host)).events.map((e) => e.kind));
    for (const kind of ["budget", "micro", "snip", "manual"]) assert.ok(kinds.includes(kind), `the session ${kind}s (${[...new Set(kinds)].join(", ")})`);

    const lines = readBack(dir);
    const byLine = resultsByLine(lines);
    let named = 0;
    for (const b of lines) {
      if (b.type !== "boundary" || !b.removed) continue;
      const uuids = new Set(b.removed.uuids);
      for (const u of uuids) assert.ok(byLine.has(u), `${b.kind}: ${u} is a message line`);
      for (const r of b.removed.tool_results) {
        assert.ok(r.message_uuid, `${b.kind}: the result of ${r.tool_use_id} names its line`);
        assert.ok(byLine.get(r.message_uuid)?.has(r.tool_use_id), `${b.kind}: the line named for ${r.tool_use_id} holds its result`);
        assert.ok(uuids.has(r.message_uuid), `${b.kind}: the line of a removed result is among the removed lines`);
        named++;
      }
      // A snip also counts the head's last message, which it rewrote (its line's blocks go on in the new one).
      if (b.kind === "snip") assert.equal(b.removed.uuids.length, b.removed.messages, `snip: lines named for the messages removed`);
    }
    assert.ok(named > 20, `results named: ${named}`);
  }));

test("after the reactive path cut results in place (the provider refused the prompt), the summary that follows names the lines those results are on", () =>
  inSession({ config: { snip: { enabled: false }, micro: { enabled: false } } }, async ({ dir, transcript, engine }) => {
    const host: Message[] = [user("read the logs")];
    for (let k = 0; k < 8; k++) host.push(calls(["bash", { command: `cat log${k}` }, `toolu_${k}`]), results([`toolu_${k}`, `entry ${k} `.repeat(900)]));
    host.push(user("what failed?"));
    for (const m of host) transcript.appendMessage(m);
    const r = await engine.recover(host, new ModelError("prompt_too_long", "prompt is too long: 30000 tokens > 24000 maximum", { actualTokens: 30_000, limitTokens: 24_000 }));
    const kinds = r.events.map((e) => e.kind);
    assert.ok(kinds.includes("budget") && kinds.includes("reactive"), `results cut, then summarised (${kinds.join(", ")})`);
    const lines = readBack(dir);
    const byLine = resultsByLine(lines);
    const summary = lines.find((l) => l.type === "boundary" && l.kind === "reactive");
    assert.ok(summary?.removed && summary.removed.tool_results.length > 0, "the summary removed results");
    for (const t of summary.removed.tool_results) assert.ok(t.message_uuid && byLine.get(t.message_uuid)?.has(t.tool_use_id), `the result of ${t.tool_use_id} names its line`);
    assert.equal(summary.removed.uuids.length, summary.removed.messages, "every removed message is named");
  }));

test("a resumed session's boundaries name the lines of the messages it read back: the writer is told them (transcript.adoptLines), and a snip after the resume lists them", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-lines-"));
  const path = join(dir, "transcript.jsonl");
  const round = (k: number): Message[] => [calls(["bash", { command: `cat log${k}` }, `toolu_${k}`]), results([`toolu_${k}`, `line ${k} `.repeat(300)])];
  const run = async (host: Message[], from: number, to: number, written: Set<Message>, readBack?: TranscriptEntry[]) => {
    const transcript = openTranscript(path, { header: { id: "s", cwd: dir } });
    if (readBack) transcript.adoptLines?.(readBack);
    const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, transcript, transcriptHoldsHistory: true, summarizerMode: "digest", config: { micro: { enabled: false } } });
    for (let k = from; k < to; k++) {
      host.push(...round(k));
      for (const m of host) if (!written.has(m)) (transcript.appendMessage(m), written.add(m));
      await engine.beforeRequest(host);
    }
    transcript.close();
  };
  try {
    await run([user("read the logs")], 0, 6, new Set());
    // Resumed in a new process: the context read back from the file (its messages are lines already), a new writer on it.
    const { entries } = loadTranscript(path);
    const resumed = resumeContext(entries);
    assert.ok(resumed.length >= 12, "the rounds before the resume are in the context");
    await run(resumed, 6, 40, new Set(resumed), entries);
    const lines = loadTranscript(path).entries as Line[];
    const before = new Set(lines.slice(0, 13).flatMap((l) => (l.type === "message" ? [l.uuid!] : [])));
    const snips = lines.filter((l) => l.type === "boundary" && l.kind === "snip");
    assert.ok(snips.length > 0, "the resumed session snips");
    const named = new Set(snips.flatMap((b) => b.removed!.uuids));
    const results = snips.flatMap((b) => b.removed!.tool_results);
    assert.ok([...before].filter((u) => named.has(u)).length >= 10, `the lines written before the resume are named when removed (${[...before].filter((u) => named.has(u)).length})`);
    for (const r of results) assert.ok(r.message_uuid, `the result of ${r.tool_use_id} names its line`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("when budget and snip act in the same request, the snip's boundary lists what snip removed, not the message budget rewrote (it is still in the context)", () =>
  inSession({ sessionDir: true, config: { micro: { enabled: false } } }, async ({ dir, transcript, engine }) => {
    const host: Message[] = [user("read the logs")];
    for (let k = 0; k < 40; k++) host.push(calls(["bash", { command: `cat log${k}` }, `toolu_${k}`]), results([`toolu_${k}`, `line ${k} `.repeat(80)]));
    // The newest result is huge: budget moves it to a file in the request that also snips.
    host.push(calls(["bash", { command: "cat big.log" }, "toolu_big"]), results(["toolu_big", "y".repeat(120_000)]));
    for (const m of host) transcript.appendMessage(m);
    const r = await engine.beforeRequest(host);
    const snip = r.events.find((e) => e.kind === "snip");
    assert.ok(snip && r.events.some((e) => e.kind === "budget"), `budget and snip both acted (${r.events.map((e) => e.kind).join(", ")})`);
    // The cheap layers' lines are written once the request is on its way: the next turn of the loop.
    await new Promise((done) => setImmediate(done));
    const lines = readBack(dir);
    const boundary = lines.find((l) => l.type === "boundary" && l.kind === "snip")!;
    const bigLine = lines.find((l) => l.type === "message" && JSON.stringify(l.message).includes("toolu_big") && l.message!.role === "user")!.uuid!;
    assert.ok(!boundary.removed!.uuids.includes(bigLine), "the result budget moved is still in the context: not listed as removed");
    assert.equal(boundary.removed!.messages, snip.removedMessages + 1, "the messages snip removed, and the head message it rewrote");
  }));

test("adoptLines from a hostile or careless caller: junk entries are skipped, a non-list is one clear error, and nothing it was not given is adopted", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-lines-"));
  try {
    const transcript = openTranscript(join(dir, "transcript.jsonl"), { header: { id: "s", cwd: dir } });
    const good = user("kept");
    const noUuid = user("no uuid");
    const junk = [null, 7, "x", { type: "message" }, { type: "message", uuid: 5, message: noUuid }, { type: "message", uuid: "u-str", message: "not an object" }, { type: "boundary", uuid: "b", message: user("b") }, { type: "message", uuid: "u-good", message: good }];
    transcript.adoptLines!(junk as never);
    assert.equal(transcript.uuidOf!(good), "u-good");
    assert.equal(transcript.uuidOf!(noUuid), undefined, "an entry without a string uuid is not adopted");
    for (const bad of [undefined, null, "entries", { length: 1, 0: { type: "message", uuid: "u", message: good } }]) {
      assert.throws(() => transcript.adoptLines!(bad as never), (e: Error) => e.message === "lethe: transcript.adoptLines: takes the list of entries read back (loadTranscript(path).entries)");
    }
    assert.equal(transcript.uuidOf!(good), "u-good", "a refused call changes nothing");
    transcript.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
