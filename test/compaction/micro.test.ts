import { test } from "node:test";
import assert from "node:assert/strict";
import { micro } from "../../src/compaction/layers/micro.ts";
import { isClearedPlaceholder } from "../../src/compaction/layers/markers.ts";
import { bashSession, calls, context, contentOf, results, said, user } from "../support/build.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { estimateTokens } from "../../src/tokens/estimate.ts";

const cleared = (c: unknown) => typeof c === "string" && isClearedPlaceholder(c);

test("clears old seen results, keeps the newest 3, only past the minimum savings", () => {
  const h = bashSession(10, 20_000); // ~5k tokens each
  const ctx = context();
  const r = micro(h, ctx);
  assert.ok(r.event);
  assert.equal(r.event.trigger, "size");
  // The last result message (index 20) is unseen; of the 9 seen, the newest 3 stay.
  const states = h.map((_, i) => (i % 2 === 0 && i > 0 ? cleared(contentOf(r.history[i])) : null)).filter((x) => x !== null);
  assert.deepEqual(states, [true, true, true, true, true, true, false, false, false, false]);
  assert.ok(r.freedTokens >= 20_000);
  const text = contentOf(r.history[2]) as string;
  assert.match(text, /bash "cat file0.txt"/);
  assert.match(text, /recall "t0"/);
});

test("does nothing when the savings are under the gate (prompt cache stays warm)", () => {
  const h = bashSession(6, 8_000); // 2 clearable × ~2k tokens < 20k
  const r = micro(h, context());
  assert.equal(r.event, null);
  assert.equal(r.history, h);
});

test("never touches results the model has not seen yet", () => {
  const h = [user("go"), calls(...Array.from({ length: 8 }, (_, i) => ["bash", {}, `p${i}`] as [string, unknown, string])),
    results(...Array.from({ length: 8 }, (_, i) => [`p${i}`, "y".repeat(30_000)] as [string, string]))];
  assert.equal(micro(h, context()).event, null);
});

test("skips small results and tools that are not compactable", () => {
  const h = [user("go")];
  for (let i = 0; i < 8; i++) {
    h.push(calls([i % 2 ? "write_file" : "bash", {}, `w${i}`]));
    h.push(results([`w${i}`, i % 2 ? "k".repeat(40_000) : "short"]));
  }
  h.push(said("done"), user("thanks"));
  assert.equal(micro(h, context()).event, null);
});

test("idle past the cache lifetime: clears everything older than the newest N, whatever the savings", () => {
  const h = [...bashSession(6, 2_000), said("ok"), user("next")];
  const now = 10_000_000;
  const warm = micro(h, context({ now, lastResponseAt: now - 60_000 }));
  assert.equal(warm.event, null);
  const cold = micro(h, context({ now, lastResponseAt: now - 6 * 60_000 }));
  assert.equal(cold.event?.trigger, "idle");
  assert.equal(cold.event?.cleared.length, 3);
  assert.equal(micro(cold.history, context({ now, lastResponseAt: now - 6 * 60_000 })).event, null);
});

test("a persisted marker that gets cleared keeps the path where the full output is", () => {
  const marker = "<persisted-output>\nThis tool result was too large to keep in context (1 chars, ~1 tokens). The full output is saved at /s/tool-results/a.txt; read it\n</persisted-output>";
  const h = [user("go"), calls(["bash", {}, "a"]), results(["a", marker]), ...bashSession(4, 100).slice(1), said("ok"), user("more")];
  const r = micro(h, context({ now: 1e9, lastResponseAt: 0 }));
  assert.match(contentOf(r.history[2]) as string, /\/s\/tool-results\/a\.txt/);
});

test("the error flag of a cleared result is kept", () => {
  const h = [user("go")];
  for (let i = 0; i < 10; i++) h.push(calls(["bash", {}, `e${i}`]), results([`e${i}`, "fail ".repeat(4_000), true]));
  h.push(said("ok"), user("go on"));
  const r = micro(h, context());
  assert.ok(r.event);
  assert.equal((r.history[2]!.content as { is_error?: boolean }[])[0]!.is_error, true);
});

test("cache-aware: clearing that would rewrite a large cached suffix for little gain waits", () => {
  // Four big bash results (the oldest is clearable), then more context after them.
  const h = [...bashSession(4, 20_000)];
  for (let i = 0; i < 4; i++) h.push(calls(["write_file", { path: `x${i}` }, `w${i}`]), results([`w${i}`, "z ".repeat(2_000)]));
  h.push(said("ok"), user("go on"));
  const lazy = micro(h, context({ config: { micro: { minSavingsTokens: 1_000 } } }));
  assert.equal(lazy.event, null, "~6k saved × ~10 turns < 1.15 × ~25k rewritten");
  const eager = micro(h, context({ config: { micro: { minSavingsTokens: 1_000, cacheAware: false } } }));
  assert.ok(eager.event);
  // The same clearing in a session that has already run many turns pays.
  const long = [...h];
  for (let i = 0; i < 120; i++) long.push(said(`step ${i}`), user("next"));
  assert.ok(micro(long, context({ config: { micro: { minSavingsTokens: 1_000 } } })).event);
});

test("with the transcript holding the history, micro writes nothing and points at recall", () => {
  const h = bashSession(10, 20_000);
  const ctx = { ...context(), archived: true };
  const r = micro(h, ctx);
  assert.ok(r.event);
  assert.equal(ctx.store.files.size, 0);
  assert.match(contentOf(r.history[2]) as string, /recall "t0" to read the original from the session transcript/);
});

test("micro remembers what it stored: the same history again, as new objects (a host that deserialises it each call), saves nothing again; a changed result is saved anew", () => {
  const h = bashSession(10, 20_000);
  const ctx = { ...context(), cleared: new Map<string, { digest: string; path: string }>() };
  let saves = 0;
  const save = ctx.store.save.bind(ctx.store);
  ctx.store.save = (id, text) => (saves++, save(id, text));
  const first = micro(h, ctx);
  const n = first.event!.cleared.length;
  assert.ok(n >= 5 && saves === n, `${saves} saves for ${n} cleared`);
  for (let k = 0; k < 5; k++) {
    const again = micro(structuredClone(h), ctx);
    assert.deepEqual(again.history, first.history, "the same output");
  }
  assert.equal(saves, n, "no result written twice");
  // The first cleared result's text changes under the same id: that one is saved again.
  const changed = structuredClone(h);
  (changed[2]!.content as { content: string }[])[0]!.content += " (changed)";
  micro(changed, ctx);
  assert.equal(saves, n + 1);
  // Without the memory (the layer alone), every call writes them all again: what the memory saves.
  const bare = context();
  let bareSaves = 0;
  const bareSave = bare.store.save.bind(bare.store);
  bare.store.save = (id, text) => (bareSaves++, bareSave(id, text));
  micro(h, bare);
  micro(structuredClone(h), bare);
  assert.equal(bareSaves, 2 * n);
});

test("a placeholder that needs no file written (the transcript holds the original, or budget's file does) is priced once, as sent; one that does is looked at first with a long path, so nothing is saved in vain", () => {
  const h = bashSession(10, 20_000);
  for (const archived of [true, false]) {
    const placeholders: string[] = [];
    const ctx = { ...context(), archived, tokens: createTokenCounter((t) => (isClearedPlaceholder(t) && placeholders.push(t), estimateTokens(t))) };
    const r = micro(h, ctx);
    const n = r.event?.cleared.length ?? 0;
    assert.ok(n >= 5, `it clears (${n})`);
    assert.equal(placeholders.length, archived ? n : 2 * n, archived ? "one count per cleared result" : "the look first, then the placeholder sent");
    assert.equal(ctx.store.files.size, archived ? 0 : n, archived ? "nothing saved: the transcript has it" : "each original saved before it is cleared");
  }
});
