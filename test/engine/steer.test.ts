// Steering compaction from the library: a switch to a smaller window (setWindow), a preview that
// changes nothing and can then be applied without a second model call, and undo (uncompact).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine } from "../../src/engine/index.ts";
import type { Message } from "../../src/messages/types.ts";
import { loadTranscript, openTranscript } from "../../src/session/transcript.ts";
import { uncompactTranscript } from "../../src/session/uncompact.ts";
import { calls, results, said, user } from "../support/build.ts";
import { SUMMARY_REPLY, scriptedClient } from "../support/scripted-client.ts";

/** A session of `rounds` bash rounds of ~`size` chars each, with a user message every 5 rounds. */
function session(rounds: number, size: number): Message[] {
  const h: Message[] = [user("Fix the failing parser test in src/parse.ts")];
  for (let i = 0; i < rounds; i++) {
    if (i > 0 && i % 5 === 0) h.push(said(`Round ${i} done.`), user(`Also check case ${i} of the tokenizer`));
    h.push(calls(["bash", { command: `cat src/part${i}.ts` }, `t${i}`]));
    h.push(results([`t${i}`, Array.from({ length: Math.ceil(size / 40) }, (_, j) => `export const v${i}_${j} = compute(${j}, "${i}");`).join("\n").slice(0, size)]));
  }
  return h;
}

const textOf = (h: readonly Message[]) => JSON.stringify(h);

test("setWindow to a quarter of the window: the next request fits it, the user's messages are carried, and the summary was written from the whole session", async () => {
  const client = scriptedClient([SUMMARY_REPLY]);
  const events: string[] = [];
  const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, summarizer: { client, model: "m" }, config: { micro: { enabled: false }, snip: { enabled: false } }, onEvent: (e) => events.push(e.kind) });
  const history = session(30, 6_000);
  const first = await engine.beforeRequest(history);
  assert.ok(first.tokens > 50_000 && first.tokens < engine.threshold, `a session between the two windows (${first.tokens})`);
  assert.equal(client.requests.length, 0);

  engine.setWindow(50_000, 8_000);
  assert.equal(engine.contextWindow, 50_000);
  assert.ok(engine.threshold < 50_000 - 8_000);
  const next = [...first.history, user("Now run the whole suite")];
  const r = await engine.beforeRequest(next);
  assert.ok(r.tokens <= engine.threshold, `fits the new window: ${r.tokens} <= ${engine.threshold}`);
  assert.ok(engine.counter.messages(r.history) <= 50_000 - 8_000);
  for (const m of ["Fix the failing parser test in src/parse.ts", "Also check case 25 of the tokenizer", "Now run the whole suite"]) assert.ok(textOf(r.history).includes(m), `carries "${m}"`);
  assert.equal(client.requests.length, 1, "one summary call");
  // The summary was written by the model that can still read the whole session: nothing dropped.
  assert.ok(engine.counter.messages(client.requests[0]!.messages) > 50_000, "the summary request held the whole session, more than the new window");
  const summary = r.events.find((e) => e.kind === "summarize");
  assert.ok(summary && summary.kind === "summarize" && summary.droppedForOverflow === 0);
  assert.deepEqual(events.slice(0, 2), ["window_set", "summary_call"]);
  const set = r.events.find((e) => e.kind === "window_set");
  assert.ok(set && set.kind === "window_set" && set.previous === 200_000 && set.contextWindow === 50_000);
});

test("setWindow also compacts for a host whose auto-compact is off (the switch asked for it); a larger window compacts nothing", async () => {
  const client = scriptedClient([SUMMARY_REPLY]);
  const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, summarizer: { client, model: "m" }, config: { micro: { enabled: false }, snip: { enabled: false }, summary: { auto: "off" } } });
  const history = session(30, 6_000);
  engine.setWindow(50_000, 8_000);
  const r = await engine.beforeRequest(history);
  assert.ok(r.tokens <= engine.threshold);
  assert.equal(client.requests.length, 1);
  // Back to a larger one: nothing to do.
  engine.setWindow(200_000, 32_000);
  const again = await engine.beforeRequest([...r.history, said("ok"), user("go on")]);
  assert.equal(client.requests.length, 1);
  assert.equal(again.events.filter((e) => e.kind === "summarize").length, 0);
  assert.throws(() => engine.setWindow(0, 10), /setWindow/);
  assert.throws(() => engine.setWindow(10_000, 20_000), /setWindow/);
});

test("preview changes nothing: twice the same answer (one model call), and the next beforeRequest equals a fresh engine's; applying it needs no second call", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-steer-"));
  try {
    const client = scriptedClient([SUMMARY_REPLY]);
    const opts = { contextWindow: 200_000, maxOutputTokens: 32_000, config: { micro: { enabled: false }, snip: { enabled: false } } };
    const engine = createEngine({ ...opts, sessionDir: join(dir, "a"), summarizer: { client, model: "m" } });
    const history = session(20, 6_000);
    const p1 = await engine.preview(history, { focus: "the parser" });
    const p2 = await engine.preview(history, { focus: "the parser" });
    assert.deepEqual(p2, p1);
    assert.equal(client.requests.length, 1, "the second preview reuses the first's summary");
    assert.ok(p1.tokensAfter < p1.tokensBefore);
    assert.equal(p1.focus, "the parser");
    assert.match(p1.summary, /fix the failing build/);
    assert.ok(p1.removed.messages > 0 && p1.removed.toolResults.length > 0);
    assert.ok(p1.removed.toolResults.some((t) => t.toolUseId === "t0" && t.tokens > 0));
    assert.equal(p1.kept.userMessages, 4);
    assert.ok(p1.kept.readFiles.length >= 0);

    const fresh = createEngine({ ...opts, sessionDir: join(dir, "b"), summarizer: { client: scriptedClient([SUMMARY_REPLY]), model: "m" } });
    const next = [...history, said("ok"), user("go on")];
    const ours = await engine.beforeRequest(next);
    const theirs = await fresh.beforeRequest(next);
    assert.deepEqual(textOf(ours.history).replaceAll(join(dir, "a"), "D"), textOf(theirs.history).replaceAll(join(dir, "b"), "D"));
    assert.equal(ours.tokens, theirs.tokens);

    // Applying the preview: the very summary, no new call, the history it showed.
    const applied = await engine.compact(history, { preview: p1 });
    assert.equal(client.requests.length, 1);
    assert.deepEqual(applied.history, p1.history);
    const ev = applied.events.find((e) => e.kind === "manual");
    assert.ok(ev && ev.kind === "manual" && ev.fromPreview === true && ev.focus === "the parser");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a preview of a history that has changed since is not applied as it was: compact summarises afresh", async () => {
  const client = scriptedClient([SUMMARY_REPLY]);
  const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, summarizer: { client, model: "m" }, config: { micro: { enabled: false }, snip: { enabled: false } } });
  const history = session(20, 6_000);
  const p = await engine.preview(history);
  const other = session(21, 6_000);
  other[0] = user("A different task altogether");
  await engine.compact(other, { preview: p });
  assert.equal(client.requests.length, 2);
});

test("uncompact puts back the exact history from before the last compaction, with what came after; refuses with one line when it does not fit", async () => {
  const client = scriptedClient([SUMMARY_REPLY]);
  const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, summarizer: { client, model: "m" }, config: { micro: { enabled: false }, snip: { enabled: false } } });
  const history = session(20, 6_000);
  const before = engine.prepare(history).history;
  const c = await engine.compact(history);
  const manual = c.events.find((e) => e.kind === "manual");
  assert.ok(manual && manual.kind === "manual" && c.tokens < manual.tokensBefore);
  const after = [...c.history, said("Done with that."), user("Now the lexer")];
  const u = await engine.uncompact(after);
  assert.deepEqual(u.history, [...before, said("Done with that."), user("Now the lexer")]);
  assert.ok(u.tokens > c.tokens);
  assert.equal(u.events[0]?.kind, "uncompact");
  // Nothing left to undo.
  await assert.rejects(engine.uncompact(u.history), (e: Error) => /^lethe: nothing to undo/.test(e.message));

  // Compacted, then switched to a window the old history does not fit: refused, in one line.
  const small = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, summarizer: { client: scriptedClient([SUMMARY_REPLY]), model: "m" }, config: { micro: { enabled: false }, snip: { enabled: false } } });
  const c2 = await small.compact(history);
  small.setWindow(40_000, 8_000);
  await assert.rejects(small.uncompact(c2.history), (e: Error) => /^lethe: cannot undo the last compaction: /.test(e.message) && !e.message.includes("\n"));
});

test("uncompactTranscript: the history before the last summary from what the transcript kept, plus what came after; the undo is recorded and resume starts from it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-steer-"));
  try {
    const path = join(dir, "t.jsonl");
    const transcript = openTranscript(path, { header: { id: "s", cwd: dir } });
    const client = scriptedClient([SUMMARY_REPLY]);
    const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, summarizer: { client, model: "m" }, transcript, transcriptHoldsHistory: true, config: { micro: { enabled: false }, snip: { enabled: false } } });
    const history = session(12, 6_000);
    for (const m of history) transcript.appendMessage(m);
    const c = await engine.compact(history);
    const more = [said("Done."), user("Next step")];
    for (const m of more) transcript.appendMessage(m);
    const entries = loadTranscript(path).entries;
    const u = uncompactTranscript(entries);
    assert.ok(u);
    assert.deepEqual(u.history, [...history, ...more]);
    assert.equal(u.kind, "manual");
    assert.ok(c.history.length < u.history.length);
    // Recorded: the transcript's resume point is now the restored history.
    transcript.appendBoundary({ kind: "uncompact", tokens_before: 0, tokens_after: 0, history: u.history });
    transcript.close();
    const { resumeContext } = await import("../../src/session/transcript.ts");
    assert.deepEqual(resumeContext(loadTranscript(path).entries), u.history);
    assert.equal(uncompactTranscript(loadTranscript(path).entries), undefined, "an undo is not undone again");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("uncompact after the next prompt was merged into the rebuilt history's last user message: that prompt is kept, after the restored history", async () => {
  const client = scriptedClient([SUMMARY_REPLY]);
  const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, summarizer: { client, model: "m" }, config: { micro: { enabled: false }, snip: { enabled: false } } });
  const history = session(20, 6_000);
  const before = engine.prepare(history).history;
  const c = await engine.compact(history);
  assert.equal(c.history.at(-1)!.role, "user");
  // The loop appends the next prompt right after the rebuilt history: roles alternate, so repair merges it in.
  const next = await engine.beforeRequest([...c.history, user("Now the lexer")]);
  assert.equal(next.history.length, c.history.length);
  const u = await engine.uncompact(next.history);
  const text = textOf(u.history);
  assert.ok(text.endsWith(`${JSON.stringify("Now the lexer")}}]}]`) || text.includes("Now the lexer"), "the new prompt is kept");
  assert.deepEqual(u.history.slice(0, before.length - 1), before.slice(0, -1));
  assert.match(JSON.stringify(u.history.at(-1)), /Now the lexer/);
});

test("uncompact on a conversation store: a fresh engine (another request, another worker) undoes the last summary from what the store kept; the next engine sends the history from before it", async () => {
  const { connectStore } = await import("../../src/store/connect.ts");
  const dir = mkdtempSync(join(tmpdir(), "lethe-steer-store-"));
  try {
    const store = await connectStore(join(dir, "store"));
    const opts = { contextWindow: 200_000, maxOutputTokens: 32_000, summarizerMode: "digest" as const, config: { micro: { enabled: false }, snip: { enabled: false } }, now: () => 1, store, conversationId: "chat-7" };
    const host = session(20, 6_000);
    // Request 1: the host compacts (a /compact in its UI).
    const a = await createEngine(opts).compact(JSON.parse(JSON.stringify(host)));
    assert.ok(a.events.some((e) => e.kind === "manual"));
    host.push(said("Compacted."), user("Undo that, please"));
    // Request 2, a new engine: undo, from the store.
    const u = await createEngine(opts).uncompact(JSON.parse(JSON.stringify(host)));
    assert.equal(u.events[0]?.kind, "uncompact");
    assert.deepEqual(u.history, host);
    // Request 3, a new engine: the history goes out uncompacted (the store's state is the undo's).
    host.push(said("Done."), user("Next"));
    const c = await createEngine(opts).beforeRequest(JSON.parse(JSON.stringify(host)));
    assert.deepEqual(c.history, host);
    // Nothing further to undo.
    await assert.rejects(createEngine(opts).uncompact(JSON.parse(JSON.stringify(host))), (e: Error) => /^lethe: nothing to undo/.test(e.message));
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bad input to the steering calls is a one-line LetheInputError, never a TypeError", async () => {
  const engine = createEngine({ contextWindow: 100_000, maxOutputTokens: 8_000, summarizer: { client: scriptedClient([SUMMARY_REPLY]), model: "m" } });
  const history = session(3, 500);
  const bad = (re: RegExp) => (e: Error) => e.name === "LetheInputError" && re.test(e.message) && !e.message.includes("\n");
  await assert.rejects(engine.preview(history, { focus: 5 as never }), bad(/preview: focus must be a string/));
  await assert.rejects(engine.compact(history, { focus: {} as never }), bad(/compact: focus must be a string/));
  await engine.compact(history);
  await assert.rejects(engine.uncompact(null as never), bad(/uncompact: history: must be an array of messages/));
  await assert.rejects(engine.uncompact([{ role: "user" }] as never), bad(/uncompact: history\[0\]/));
  assert.throws(() => engine.setWindow(Number.NaN, 1), bad(/setWindow: contextWindow must be a positive whole number/));
});
