// The cheap layers' boundary lines are written after beforeRequest returns (TranscriptWriter.defer):
// before any later line, at close, or on the next turn of the event loop, so the transcript holds
// the same lines in the same order as when they were written at once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine } from "../../src/engine/index.ts";
import type { Message } from "../../src/messages/types.ts";
import { type TranscriptWriter, loadTranscript, openTranscript } from "../../src/session/transcript.ts";
import { calls, results, user } from "../support/build.ts";

const turn = () => new Promise<void>((done) => setImmediate(done));
const lines = (path: string) => readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
const names = (path: string) => lines(path).map((l) => (l.type === "event" ? `event:${l.name}` : l.type === "message" ? `message:${l.uuid}` : String(l.type)));

test("a deferred line is written before the writer's next line, on the next turn of the loop, or at close, in order; what it throws is thrown by the next append, never lost on the loop", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-defer-"));
  try {
    const path = join(dir, "transcript.jsonl");
    const t = openTranscript(path, { header: { id: "s", cwd: dir } });
    assert.equal(typeof t.defer, "function", "the file writer defers");
    // Before the next line, in the order asked; one deferred from inside another comes after it.
    t.defer!(() => {
      t.appendEvent("a");
      t.defer!(() => t.appendEvent("c"));
    });
    t.defer!(() => t.appendEvent("b"));
    assert.deepEqual(names(path), ["session"], "nothing written yet");
    t.appendMessage(user("next"), { uuid: "m1" });
    assert.deepEqual(names(path), ["session", "event:a", "event:b", "event:c", "message:m1"]);
    // On the next turn of the loop, with nothing else appended.
    t.defer!(() => t.appendEvent("d"));
    await turn();
    assert.deepEqual(names(path).slice(-1), ["event:d"]);
    // A deferred write that throws: the next append throws it and writes nothing; the one after works.
    t.defer!(() => {
      throw new Error("disk full");
    });
    t.defer!(() => t.appendEvent("e"));
    assert.throws(() => t.appendMessage(user("lost?"), { uuid: "m2" }), /disk full/);
    assert.deepEqual(names(path).slice(-1), ["event:e"], "the writes after the one that threw still ran");
    t.appendMessage(user("again"), { uuid: "m3" });
    assert.deepEqual(names(path).slice(-2), ["event:e", "message:m3"]);
    // Thrown on a turn of the loop: kept (no uncaught exception) for the next append.
    t.defer!(() => {
      throw new Error("EIO");
    });
    await turn();
    assert.throws(() => t.appendEvent("f"), /EIO/);
    // At close.
    t.defer!(() => t.appendEvent("g"));
    t.close();
    assert.deepEqual(names(path).slice(-1), ["event:g"]);
    // A closed writer, or something that is not a function: one clear line.
    assert.throws(() => t.defer!(() => undefined), /transcript .* is closed/);
    const u = openTranscript(path);
    for (const bad of [undefined, "write", { call: 1 }]) assert.throws(() => u.defer!(bad as never), (e: Error) => e.message === "lethe: transcript.defer: takes a function that writes lines");
    u.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A read-heavy session (budget moves a huge result to a file, micro clears, snips) at `path`, its
 * messages under fixed uuids and a fixed clock; `now`: a writer without defer (every line at once).
 * Returns, per request that snipped, whether the snip's line was in the file when beforeRequest returned.
 */
async function session(path: string, now: boolean): Promise<boolean[]> {
  const opened = openTranscript(path, { header: { id: "s", cwd: "/w", created: "2026-01-01T00:00:00.000Z" }, now: () => 0 });
  const transcript: TranscriptWriter = now ? { ...opened, defer: undefined } : opened;
  const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, transcript, transcriptHoldsHistory: true, summarizerMode: "digest", sessionDir: join(path, ".."), now: () => 0 });
  const host: Message[] = [user("read the logs and tell me what failed")];
  const written = new Set<Message>();
  const inFile: boolean[] = [];
  let n = 0;
  for (let k = 0; k < 70; k++) {
    const body = k === 7 ? "x".repeat(120_000) : `line ${k} `.repeat(k % 4 === 0 ? 1_500 : 100);
    host.push(calls(["bash", { command: `cat log${k}` }, `toolu_${k}`]), results([`toolu_${k}`, body]));
    for (const m of host) if (!written.has(m)) (opened.appendMessage(m, { uuid: `m${n++}` }), written.add(m));
    const snips = () => lines(path).filter((l) => l.type === "boundary" && l.kind === "snip").length;
    const before = snips();
    const r = await engine.beforeRequest(host);
    if (r.events.some((e) => e.kind === "snip")) inFile.push(snips() > before);
    // The host appends to its own list, as an agent does, before the deferred line is written.
    host.push({ role: "assistant", content: [{ type: "text", text: `looked at log${k}` }] });
  }
  opened.close();
  return inFile;
}

test("beforeRequest returns before a snip's boundary line is written, and the transcript ends up with the same lines, in the same order, as a writer that writes each at once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-defer-"));
  try {
    const later = join(dir, "later", "transcript.jsonl");
    const atOnce = join(dir, "now", "transcript.jsonl");
    const deferred = await session(later, false);
    const direct = await session(atOnce, true);
    assert.ok(deferred.length >= 3, `the session snips (${deferred.length})`);
    assert.ok(deferred.every((x) => !x), "no snip's line was written before its request went out");
    assert.ok(direct.every((x) => x), "a writer without defer has it at once");
    // Same entries: the head ids (a random prefix per writer) and the session folders aside.
    const same = (path: string, folder: string) => {
      const ids = new Map<string, string>();
      const id = (v: string) => (ids.has(v) ? ids.get(v)! : (ids.set(v, `id${ids.size}`), `id${ids.size - 1}`));
      const loaded = loadTranscript(path);
      assert.deepEqual([loaded.warnings, loaded.errors], [[], []]);
      return JSON.parse(JSON.stringify(loaded.entries).replaceAll(folder, "<dir>").replace(/"(head_id|id)":"([0-9a-f]{12})"/g, (_, k: string, v: string) => `"${k}":"${id(v)}"`)) as unknown[];
    };
    const a = same(later, join(dir, "later"));
    assert.ok(a.filter((e) => (e as { kind?: string }).kind === "snip").length === deferred.length);
    assert.deepEqual(a, same(atOnce, join(dir, "now")));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
