// A host that keeps its own full history and passes all of it before every request gets the
// same requests as a host that passes back lethe's history, and pays for what is new only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createEngine } from "../../src/engine/index.ts";
import type { Message } from "../../src/messages/types.ts";
import { createMemoryStore } from "../../src/session/tool-results.ts";
import { validate } from "../../src/messages/invariants.ts";
import { calls, results, said, user } from "../support/build.ts";

/** Round k of a session: a bash call and its result (every 7th result huge, so budget acts). */
function round(k: number): Message[] {
  const big = k % 7 === 3;
  return [calls(["bash", { command: `step ${k}` }, `toolu_${k}`]), results([`toolu_${k}`, big ? `out ${k}\n`.repeat(12_000) : `ok ${k} `.repeat(60)])];
}

function drive(mode: "full" | "own", rounds: number) {
  const store = createMemoryStore();
  let saves = 0;
  const counting = { ...store, save: (id: string, text: string) => (saves++, store.save(id, text)) };
  const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, store: counting });
  const host: Message[] = [user("fix the bug")];
  let own: Message[] = host.slice();
  const sent: Message[][] = [];
  for (let k = 0; k < rounds; k++) {
    const add = round(k);
    host.push(...add);
    own = [...own, ...add];
    const r = engine.prepare(mode === "full" ? host : own);
    sent.push(r.history.slice());
    own = r.history;
  }
  return { sent, saves };
}

test("follow: a host passing its full history every time sends what a host passing lethe's history sends", () => {
  const full = drive("full", 120);
  const own = drive("own", 120);
  assert.equal(full.sent.length, own.sent.length);
  for (let i = 0; i < full.sent.length; i++) {
    assert.deepEqual(full.sent[i], own.sent[i], `request ${i}`);
    assert.deepEqual(validate(full.sent[i]!), []);
  }
  // The middle was snipped: the requests stay small while the host's history grows.
  assert.ok(full.sent.at(-1)!.length < 60, `last request has ${full.sent.at(-1)!.length} messages`);
});

test("follow: budget saves each huge result once, not again on every call of a full-history host", () => {
  const { saves } = drive("full", 120);
  const huge = Array.from({ length: 120 }, (_, k) => k).filter((k) => k % 7 === 3).length;
  assert.equal(saves, huge);
});

test("follow: a host that rewinds or edits its history gets that history prepared as given", () => {
  // No snip: what the host rewrites stays in the request, where the test can see it.
  const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, store: createMemoryStore(), config: { snip: { enabled: false } } });
  const host: Message[] = [user("task")];
  for (let k = 0; k < 60; k++) {
    host.push(...round(k));
    engine.prepare(host);
  }
  // The newest result rewritten (still in the context) and a round appended: the request holds the new text.
  const rewritten = host.slice();
  rewritten[rewritten.length - 1] = results([`toolu_59`, "REWRITTEN result"]);
  rewritten.push(...round(60));
  assert.match(JSON.stringify(engine.prepare(rewritten).history), /REWRITTEN result/);
  // An edit in the middle (a new object at index 5): the request must hold it.
  const edited = host.slice();
  edited[5] = said("edited turn");
  edited[6] = user("edited request");
  const r = engine.prepare([...edited.slice(0, 7)]);
  assert.ok(JSON.stringify(r.history).includes("edited request"));
  // A rewind to fewer messages than seen: prepared as given, nothing of the longer history leaks in.
  const short = host.slice(0, 5);
  const back = engine.prepare(short);
  assert.equal(back.history.length, 5);
});

test("follow: after a summary, a full-history host keeps the summary instead of paying for it again", async () => {
  const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, store: createMemoryStore(), config: { snip: { enabled: false }, micro: { enabled: false } }, summarizerMode: "digest" });
  const host: Message[] = [user("fix the bug")];
  let compactions = 0;
  for (let k = 0; k < 80; k++) {
    host.push(calls(["bash", { command: `step ${k}` }, `toolu_${k}`]), results([`toolu_${k}`, `line ${k} `.repeat(400)]));
    const r = await engine.beforeRequest(host);
    compactions += r.events.filter((e) => e.kind === "summarize").length;
    assert.ok(r.tokens <= engine.threshold, `request ${k} at ${r.tokens} tokens over ${engine.threshold}`);
  }
  // Each compaction makes room for many more rounds; without following, every call after the
  // first one would compact again.
  assert.ok(compactions >= 1 && compactions <= 20, `${compactions} compactions in 80 rounds`);
});

test("budget remembers what it moved: a host that rebuilds its history every call (new objects) has each huge result written once, with one budget event", () => {
  const store = createMemoryStore();
  let saves = 0;
  const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, store: { ...store, save: (id: string, text: string) => (saves++, store.save(id, text)) }, config: { snip: { enabled: false }, micro: { enabled: false } } });
  const host: Message[] = [user("go")];
  let budgetEvents = 0;
  for (let k = 0; k < 30; k++) {
    host.push(...round(k));
    // As if read back from a database each time: nothing keeps its identity.
    const r = engine.prepare(structuredClone(host));
    budgetEvents += r.events.filter((e) => e.kind === "budget").length;
    for (const m of r.history) for (const b of typeof m.content === "string" ? [] : m.content) if (b.type === "tool_result") assert.ok(typeof b.content !== "string" || b.content.length < 20_000, "every huge result is a marker");
  }
  const huge = Array.from({ length: 30 }, (_, k) => k).filter((k) => k % 7 === 3).length;
  assert.equal(saves, huge);
  assert.equal(budgetEvents, huge);
});

// A host that deserialises its history before every call (a route handler given JSON, a
// checkpointer, a store) hands lethe new objects each time: the engine recognises what it saw by
// content, so such a host gets exactly what a host keeping the same objects gets.

/** Every request point of a history: the prefixes that end with a user message. */
function requestPoints(h: readonly Message[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < h.length; i++) if (h[i]!.role === "user") out.push(i + 1);
  return out;
}

async function driveHost(h: readonly Message[], copy: boolean, window = 8_000) {
  const engine = createEngine({ contextWindow: window, maxOutputTokens: 1_000, store: createMemoryStore(), summarizerMode: "digest", now: () => 1_000_000 });
  const sent: Message[][] = [];
  const kinds: string[][] = [];
  for (const n of requestPoints(h)) {
    const input = copy ? structuredClone(h.slice(0, n)) : h.slice(0, n);
    try {
      const r = await engine.beforeRequest(input);
      sent.push(structuredClone(r.history));
      kinds.push(r.events.map((e) => e.kind));
    } catch (e) {
      kinds.push([`error: ${(e as Error).name}`]);
      break;
    }
  }
  return { sent, kinds };
}

test("follow by content: a host passing a deserialised copy every call gets what a host passing the same objects gets (random histories, summaries included)", async () => {
  const fc = (await import("fast-check")).default;
  const { arbHistory } = await import("../support/arbitraries.ts");
  await fc.assert(
    fc.asyncProperty(arbHistory({ minRounds: 4, maxRounds: 40, hugeRate: 0.05 }), async (h) => {
      const same = await driveHost(h, false);
      const copied = await driveHost(h, true);
      assert.deepEqual(copied.kinds, same.kinds);
      assert.deepEqual(copied.sent, same.sent);
    }),
    { numRuns: 40 },
  );
});

test("follow by content: 50 turns at a 16k window with the history JSON-parsed each call summarise as often as with the same objects, never every request", async () => {
  const drive = async (parse: boolean) => {
    // Only the summary makes room (no snip, no micro), as in the report this test comes from.
    const engine = createEngine({ contextWindow: 16_000, maxOutputTokens: 2_000, store: createMemoryStore(), summarizerMode: "digest", now: () => 1_000_000, config: { snip: { enabled: false }, micro: { enabled: false } } });
    const h: Message[] = [user("fix the bug")];
    let summaries = 0;
    for (let k = 0; k < 50; k++) {
      h.push(calls(["bash", { command: `step ${k}` }, `toolu_${k}`]), results([`toolu_${k}`, `line ${k} `.repeat(300)]));
      const r = await engine.beforeRequest(parse ? JSON.parse(JSON.stringify(h)) : h);
      summaries += r.events.filter((e) => e.kind === "summarize").length;
      assert.ok(r.tokens <= engine.threshold, `turn ${k}: ${r.tokens} tokens over ${engine.threshold}`);
    }
    return summaries;
  };
  const same = await drive(false);
  const parsed = await drive(true);
  assert.ok(same >= 1, "the scenario summarises");
  assert.equal(parsed, same);
});
