// An engine on a conversation store: a host that builds a fresh engine for every request (a
// route handler, a serverless function, a worker) pays for what is new and never summarises
// again what was summarised.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine } from "../../src/engine/index.ts";
import type { Message } from "../../src/messages/types.ts";
import { validate } from "../../src/messages/invariants.ts";
import { connectStore } from "../../src/store/connect.ts";
import { parseLedger } from "../../src/compaction/state/ledger.ts";
import { calls, results, user } from "../support/build.ts";

const WINDOW = { contextWindow: 16_000, maxOutputTokens: 2_000 };
const CONFIG = { snip: { enabled: false }, micro: { enabled: false } };

/** Turn k of a session: a tool call and its result (every 9th result huge, so budget acts). */
function turn(k: number): Message[] {
  return [calls(["bash", { command: `step ${k}` }, `toolu_${k}`]), results([`toolu_${k}`, k % 9 === 4 ? `big ${k}\n`.repeat(6_000) : `line ${k} `.repeat(300)])];
}

test("a fresh engine per request on a files store, handed the whole history as JSON: as many summaries as one long-lived engine, every request valid and under the window", async () => {
  const root = mkdtempSync(join(tmpdir(), "lethe-stored-"));
  try {
    const store = await connectStore(join(root, "store"));
    const long = createEngine({ ...WINDOW, summarizerMode: "digest", config: CONFIG, now: () => 1 });
    const host: Message[] = [user("fix the bug")];
    let longSummaries = 0;
    let freshSummaries = 0;
    for (let k = 0; k < 40; k++) {
      host.push(...turn(k));
      const a = await long.beforeRequest(host);
      longSummaries += a.events.filter((e) => e.kind === "summarize").length;
      // The route handler: the history arrives as JSON, the engine is new.
      const engine = createEngine({ ...WINDOW, summarizerMode: "digest", config: CONFIG, now: () => 1, store, conversationId: "chat/1 \"x\"" });
      const b = await engine.beforeRequest(JSON.parse(JSON.stringify(host)));
      freshSummaries += b.events.filter((e) => e.kind === "summarize").length;
      assert.deepEqual(validate(b.history), [], `request ${k}`);
      assert.ok(b.tokens <= engine.threshold, `request ${k}: ${b.tokens} over ${engine.threshold}`);
    }
    assert.ok(longSummaries >= 2, `the scenario summarises (${longSummaries})`);
    assert.equal(freshSummaries, longSummaries);
    // The store recorded each message once, in order.
    const c = await store.conversation("chat/1 \"x\"");
    assert.equal(await c.messageCount(), host.length);
    const lines = await c.lines();
    const messages = lines.filter((l) => l.type === "message");
    assert.equal(messages.length, host.length);
    assert.deepEqual(messages.map((m) => (m as { message: Message }).message), host);
    assert.equal(lines.filter((l) => l.type === "boundary" && l.kind === "summarize").length, freshSummaries);
    assert.ok(((await c.state())?.version ?? 0) >= freshSummaries, "a state saved at least at each summary");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the route handler: 40 requests, each a new process given the full history as JSON, summarise no more than one long-lived engine; every request valid and under the window", async () => {
  const { builtBin } = await import("../cli/support.ts");
  builtBin(); // dist/ must be built from this src/ (npm test builds it)
  const { spawn } = await import("node:child_process");
  const root = mkdtempSync(join(tmpdir(), "lethe-route-"));
  const request = (body: unknown) =>
    new Promise<{ summaries: number; tokens: number; threshold: number; violations: number }>((resolve, reject) => {
      const child = spawn(process.execPath, [join(import.meta.dirname, "../support/route-request.mjs")], { stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`request process exited ${code}: ${err.slice(-500)}`))));
      child.stdin.end(JSON.stringify(body));
    });
  try {
    const long = createEngine({ ...WINDOW, summarizerMode: "digest", config: CONFIG, now: () => 1 });
    const host: Message[] = [user("fix the bug")];
    let longSummaries = 0;
    let routeSummaries = 0;
    for (let k = 0; k < 40; k++) {
      host.push(...turn(k));
      longSummaries += (await long.beforeRequest(host)).events.filter((e) => e.kind === "summarize").length;
      const r = await request({ store: join(root, "store"), conversationId: "chat-42", history: host, window: WINDOW, config: CONFIG });
      routeSummaries += r.summaries;
      assert.equal(r.violations, 0, `request ${k}`);
      assert.ok(r.tokens <= r.threshold, `request ${k}: ${r.tokens} over ${r.threshold}`);
    }
    assert.ok(longSummaries >= 2, `the scenario summarises (${longSummaries})`);
    assert.ok(routeSummaries <= longSummaries, `${routeSummaries} summaries in 40 processes, ${longSummaries} in one engine`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a host passing back lethe's history plus what is new (the adapters): the store records the host's own messages, each once, never lethe's rebuilt ones; a fresh engine on the full list adopts the state", async () => {
  const root = mkdtempSync(join(tmpdir(), "lethe-stored-"));
  try {
    const store = await connectStore(join(root, "store"));
    const engine = createEngine({ ...WINDOW, summarizerMode: "digest", config: CONFIG, now: () => 1, store, conversationId: "own" });
    const host: Message[] = [user("fix the bug")];
    let own: Message[] = host.slice();
    let summaries = 0;
    for (let k = 0; k < 30; k++) {
      const add = turn(k);
      host.push(...add);
      const r = await engine.beforeRequest([...own, ...add]);
      summaries += r.events.filter((e) => e.kind === "summarize").length;
      own = r.history;
    }
    assert.ok(summaries >= 1, "the scenario summarises");
    const c = await store.conversation("own");
    const recorded = (await c.lines()).filter((l) => l.type === "message").map((l) => (l as { message: Message }).message);
    assert.deepEqual(recorded, host);
    // A fresh engine handed the host's full list picks up the state: no summary, the same request.
    const fresh = createEngine({ ...WINDOW, summarizerMode: "digest", config: CONFIG, now: () => 1, store, conversationId: "own" });
    const next = turn(30);
    host.push(...next);
    const a = await fresh.beforeRequest(structuredClone(host));
    const b = await engine.beforeRequest([...own, ...next]);
    assert.equal(a.events.filter((e) => e.kind === "summarize").length, 0);
    assert.deepEqual(a.history, b.history);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("loadStored: a fresh engine on the conversation reads back a tool result another engine moved out (what a host's recall tool needs on a fleet); readStored, synchronous, knows only its own", async () => {
  const root = mkdtempSync(join(tmpdir(), "lethe-stored-"));
  try {
    const store = await connectStore(join(root, "store"));
    const host: Message[] = [user("fix the bug")];
    for (let k = 0; k < 6; k++) host.push(...turn(k));
    const first = createEngine({ ...WINDOW, summarizerMode: "digest", config: CONFIG, now: () => 1, store, conversationId: "recall" });
    const r = await first.beforeRequest(host);
    assert.ok(r.events.some((e) => e.kind === "budget"), "budget moved the huge result out");
    const fresh = createEngine({ ...WINDOW, summarizerMode: "digest", config: CONFIG, now: () => 1, store, conversationId: "recall" });
    assert.equal(fresh.readStored("toolu_4"), undefined);
    assert.equal(await fresh.loadStored("toolu_4"), `big 4\n`.repeat(6_000));
    assert.equal(await fresh.loadStored("toolu_nope"), undefined);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("what a reply taught the meter is in the store: a fresh engine measures with the provider's correction and knows when the last reply came (micro's idle path), and a later reply elsewhere wins over an older one here", async () => {
  const root = mkdtempSync(join(tmpdir(), "lethe-meter-"));
  try {
    const store = await connectStore(join(root, "store"));
    const t0 = 1_800_000_000_000;
    const opts = (now: number, config: object = { micro: { enabled: false }, snip: { enabled: false } }) => ({ ...WINDOW, model: "claude-x", summarizerMode: "digest" as const, config, now: () => now, store, conversationId: "metered" });
    const host: Message[] = [user("fix the bug")];
    for (let k = 0; k < 6; k++) host.push(...turn(k * 2 + 1));
    const a = createEngine(opts(t0));
    const sent = (await a.beforeRequest(JSON.parse(JSON.stringify(host)))).history;
    const estimate = a.counter.messages(sent);
    // The provider counts 40% more than lethe's estimate (another tokenizer).
    a.observe(sent, { role: "assistant", content: [{ type: "text", text: "ok" }] }, { input_tokens: Math.round(estimate * 1.4), output_tokens: 5 });
    await a.flush();
    const saved = await (await store.conversation("metered")).meter();
    assert.equal(saved?.lastResponseAt, t0);
    assert.ok(Math.abs(saved!.factor - 1.4) < 0.01, `factor ${saved?.factor}`);

    // A fresh engine: the history grows to where the estimate is under the threshold but the provider's count is over it.
    const small = (k: number): Message[] => [calls(["bash", { command: `step ${k}` }, `toolu_s${k}`]), results([`toolu_s${k}`, `line ${k} `.repeat(60)])];
    while (a.counter.messages(host) * 1.4 < a.threshold * 1.05) host.push(...small(host.length));
    assert.ok(a.counter.messages(host) < a.threshold, "the bare estimate is under the threshold");
    const b = createEngine(opts(t0 + 60_000));
    const r = await b.beforeRequest(JSON.parse(JSON.stringify(host)));
    assert.ok(Math.abs(b.meter.correction() - 1.4) < 0.01, `the store's correction is adopted (${b.meter.correction()})`);
    assert.ok(r.events.some((e) => e.kind === "summarize"), "measured with the correction, the history is over the threshold: summarised");

    // Micro's idle path: ten minutes after the stored reply, a fresh engine knows the cache is cold.
    const isIdle = (e: { kind: string; trigger?: string }) => e.kind === "micro" && e.trigger === "idle";
    const micro = { micro: { enabled: true, idleClearMs: 5 * 60_000, keepRecent: 1, minResultTokens: 100_000 }, snip: { enabled: false } };
    const short: Message[] = [user("look at the logs"), ...turn(1), ...turn(3), ...turn(5), { role: "assistant", content: [{ type: "text", text: "read them" }] }, user("and now?")];
    const idleRun = await createEngine({ ...opts(t0 + 10 * 60_000, micro), conversationId: "never-answered" }).beforeRequest(short);
    assert.ok(!idleRun.events.some(isIdle), "no reply on record in this conversation: not idle");
    const c = createEngine({ ...opts(t0, micro), conversationId: "idle" });
    const sentC = (await c.beforeRequest(short)).history;
    c.observe(sentC, { role: "assistant", content: [{ type: "text", text: "ok" }] }, { input_tokens: c.counter.messages(sentC), output_tokens: 1 });
    await c.flush();
    const late = await createEngine({ ...opts(t0 + 10 * 60_000, micro), conversationId: "idle" }).beforeRequest(JSON.parse(JSON.stringify(short)));
    assert.ok(late.events.some(isIdle), "ten minutes after the stored reply: the idle path clears old results");

    // A long-lived engine that last saw a reply at t0, while another engine saw one at t0 + 9 min:
    // at t0 + 10 min the store's later reply wins, and the cache is warm.
    let clock = t0;
    const first = createEngine({ ...opts(t0, micro), now: () => clock, conversationId: "warm" });
    const sentF = (await first.beforeRequest(short)).history;
    first.observe(sentF, { role: "assistant", content: [{ type: "text", text: "ok" }] }, { input_tokens: first.counter.messages(sentF), output_tokens: 1 });
    await first.flush();
    const other = createEngine({ ...opts(t0 + 9 * 60_000, micro), conversationId: "warm" });
    const sentO = (await other.beforeRequest(short)).history;
    other.observe(sentO, { role: "assistant", content: [{ type: "text", text: "ok" }] }, { input_tokens: other.counter.messages(sentO), output_tokens: 1 });
    await other.flush();
    clock = t0 + 10 * 60_000;
    const warm = await first.beforeRequest(short);
    assert.ok(!warm.events.some(isIdle), "a reply 1 minute ago elsewhere: the cache is warm");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the file ledger is data: a summary's boundary and the stored state list every file read and modified, whole, while the context carries it capped", async () => {
  const root = mkdtempSync(join(tmpdir(), "lethe-ledger-"));
  try {
    const store = await connectStore(join(root, "store"));
    const host: Message[] = [user("read the whole tree")];
    const files = Array.from({ length: 400 }, (_, i) => `src/module-${String(i).padStart(3, "0")}/implementation-of-the-feature.ts`);
    for (const [i, f] of files.entries()) host.push(calls(["Read", { file_path: f }, `toolu_r${i}`]), results([`toolu_r${i}`, `contents of ${f}\n`.repeat(40)]));
    host.push(calls(["Edit", { file_path: "src/app.ts", old_string: "a", new_string: "b" }, "toolu_edit"]), results(["toolu_edit", "edited"]));
    host.push({ role: "assistant", content: [{ type: "text", text: "read them all" }] }, user("now summarise"));
    const engine = createEngine({ contextWindow: 64_000, maxOutputTokens: 8_000, summarizerMode: "digest", config: { snip: { enabled: false }, micro: { enabled: false } }, store, conversationId: "tree" });
    const r = await engine.compact(JSON.parse(JSON.stringify(host)), { kind: "manual" });
    assert.ok(r.events.some((e) => e.kind === "manual"), "summarised");
    const c = await store.conversation("tree");
    const boundary = (await c.lines()).find((l) => l.type === "boundary" && l.kind === "manual") as { details: { ledger?: { read: string[]; modified: string[] } } } | undefined;
    assert.deepEqual(boundary?.details.ledger?.read, files, "the boundary lists every file read, in order");
    assert.deepEqual(boundary?.details.ledger?.modified, ["src/app.ts"]);
    assert.deepEqual((await c.state())?.ledger, boundary?.details.ledger, "and so does the stored state");
    const carried = parseLedger(JSON.parse(JSON.stringify(r.history[0]!.content)).map((b: { text?: string }) => b.text ?? "").join("\n"));
    assert.ok(carried.read.size > 0 && carried.read.size < files.length, `the context carries the ledger capped (${carried.read.size} of ${files.length} reads), the record is whole`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a host that keeps what lethe returned (a checkpointed agent state) and builds a fresh engine each turn: each message recorded once, in order; no more summaries than one long-lived engine", async () => {
  const root = mkdtempSync(join(tmpdir(), "lethe-own-"));
  try {
    const store = await connectStore(join(root, "store"));
    const long = createEngine({ ...WINDOW, summarizerMode: "digest", config: CONFIG, now: () => 1 });
    let longState: Message[] = [user("fix the bug")];
    let state: Message[] = [user("fix the bug")];
    const produced: Message[] = [user("fix the bug")];
    let longSummaries = 0;
    let freshSummaries = 0;
    for (let k = 0; k < 40; k++) {
      const fresh = turn(k);
      produced.push(...fresh);
      const a = await long.beforeRequest([...longState, ...fresh]);
      longSummaries += a.events.filter((e) => e.kind === "summarize").length;
      longState = a.history;
      // The checkpoint: JSON, then a fresh engine (as another process).
      const engine = createEngine({ ...WINDOW, summarizerMode: "digest", config: CONFIG, now: () => 1, store, conversationId: "agent-thread" });
      const b = await engine.beforeRequest(JSON.parse(JSON.stringify([...state, ...fresh])));
      freshSummaries += b.events.filter((e) => e.kind === "summarize").length;
      assert.deepEqual(validate(b.history), [], `turn ${k}`);
      assert.ok(b.tokens <= engine.threshold, `turn ${k}: ${b.tokens} over ${engine.threshold}`);
      state = b.history;
    }
    assert.ok(longSummaries >= 2, `the scenario summarises (${longSummaries})`);
    assert.ok(freshSummaries <= longSummaries, `${freshSummaries} summaries, one long-lived engine ${longSummaries}`);
    const lines = await (await store.conversation("agent-thread")).lines();
    const recorded = lines.filter((l) => l.type === "message").map((l) => (l as { message: Message }).message);
    assert.equal(recorded.length, produced.length, "every message once");
    assert.deepEqual(recorded, produced, "in order");
    assert.equal(lines.filter((l) => l.type === "event" && (l as { name?: string }).name === "rewritten").length, 0);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
