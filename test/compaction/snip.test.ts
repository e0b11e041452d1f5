import { test } from "node:test";
import assert from "node:assert/strict";
import { snip, snipCut } from "../../src/compaction/layers/snip.ts";
import { toolResultsOf, toolUsesOf } from "../../src/messages/blocks.ts";
import type { Message } from "../../src/messages/types.ts";
import { bashSession, context } from "../support/build.ts";

// The message-count mechanics (trigger 30 → target 10, no pressure gate, no cache rule).
const noGate = { snip: { minThresholdShare: 0, cacheAware: false, triggerMessages: 30, targetMessages: 10 } };

function pairsIntact(h: Message[]): boolean {
  for (let i = 0; i < h.length; i++) {
    for (const r of toolResultsOf(h[i]!)) {
      if (!toolUsesOf(h[i - 1] ?? { role: "assistant", content: [] }).some((u) => u.id === r.tool_use_id)) return false;
    }
    for (const u of toolUsesOf(h[i]!)) {
      if (!toolResultsOf(h[i + 1] ?? { role: "user", content: [] }).some((r) => r.tool_use_id === u.id)) return false;
    }
  }
  return true;
}

test("below the trigger nothing happens", () => {
  const h = bashSession(14, 100); // 29 messages
  const r = snip(h, context({ config: noGate }));
  assert.equal(r.event, null);
  assert.equal(r.history, h);
});

test("past the trigger it keeps head and newest messages down to the target, pairs whole", () => {
  const h = bashSession(40, 100); // 81 messages
  const ctx = context({ config: noGate });
  ctx.archivePath = "/s/transcript.jsonl";
  const r = snip(h, ctx);
  assert.ok(r.event);
  assert.ok(r.history.length <= 30, `length ${r.history.length}`);
  assert.equal(r.event.messagesAfter, r.history.length);
  assert.equal(r.event.removedMessages, h.length - r.history.length);
  assert.ok(pairsIntact(r.history));
  assert.equal(r.history[0], h[0]);
  assert.equal(r.history.at(-1), h.at(-1));
  // roles alternate
  r.history.forEach((m, i) => assert.equal(m.role, i % 2 === 0 ? "user" : "assistant"));
  const boundary = JSON.stringify(r.history[r.event.from - 1]);
  assert.match(boundary, /earlier messages/);
  assert.match(boundary, /\/s\/transcript\.jsonl/);
  assert.match(boundary, /recall/);
  assert.ok(r.freedTokens > 0);
});

test("hysteresis: the snipped history does not snip again next turn", () => {
  const h = bashSession(40, 100);
  const ctx = context({ config: noGate });
  const once = snip(h, ctx).history;
  const next = [...once, ...bashSession(1, 100).slice(1)];
  assert.equal(snip(next, ctx).event, null);
  assert.equal(snip(once, ctx).event, null);
});

test("under the pressure gate it waits: a long but light history is kept whole", () => {
  const h = bashSession(40, 100);
  assert.equal(snip(h, context()).event, null);
  // Heavy enough (over half the threshold) and it snips.
  const heavy = bashSession(40, 12_000);
  assert.ok(snip(heavy, context()).event);
});

test("snipCut never puts a tool_result at the start of the tail nor ends the head on a tool_use", () => {
  for (let n = 5; n < 120; n += 2) {
    const h = bashSession((n - 1) / 2, 10);
    for (const head of [1, 2, 3, 4, 7]) {
      const cut = snipCut(h, head, 30);
      if (!cut) continue;
      assert.equal(h[cut.head - 1]!.role, "user");
      assert.equal(h[cut.tail]!.role, "assistant");
      assert.ok(cut.tail > cut.head);
    }
  }
});

test("the boundary carries the removed part's user messages and file ledger, once, across snips", async () => {
  const { user: u, said: s, calls: c, results: r } = await import("../support/build.ts");
  const { userMessagesOf } = await import("../../src/compaction/state/retain.ts");
  const { ledgerOf } = await import("../../src/compaction/state/ledger.ts");
  const h: Message[] = [u("task"), s("ok"), u("second")];
  for (let i = 0; i < 30; i++) {
    h.push(c(["edit_file", { path: `src/f${i}.ts` }, `e${i}`]), r([`e${i}`, "ok"]));
    if (i === 5) h.push(s("noted"), u("please also update the docs"));
  }
  const ctx = context({ config: noGate });
  const once = snip(h, ctx).history;
  assert.ok(once.length < h.length);
  assert.deepEqual(userMessagesOf(once), ["task", "second", "please also update the docs"]);
  assert.equal(ledgerOf(once).modified.size, 30);
  const more = [...once];
  for (let i = 30; i < 50; i++) more.push(c(["edit_file", { path: `src/f${i}.ts` }, `e${i}`]), r([`e${i}`, "ok"]));
  const twice = snip(more, ctx).history;
  assert.deepEqual(userMessagesOf(twice), ["task", "second", "please also update the docs"]);
  assert.equal(ledgerOf(twice).modified.size, 50);
  assert.equal((JSON.stringify(twice).match(/<lethe-files>/g) ?? []).length, 1);
});

test("cache-aware: below the message trigger it snips once the middle is worth more in reads than the rewrite, and not before", () => {
  const cacheAware = { snip: { minThresholdShare: 0, cacheAware: true, triggerMessages: 60, targetMessages: 6 } };
  // 25 messages of even rounds: the middle (19 messages, ~9 rounds) is past √(25·kept·growth).
  const long = bashSession(12, 2_000);
  const r = snip(long, context({ config: cacheAware }));
  assert.ok(r.event, "snipped");
  assert.ok(r.history.length <= 6, `${r.history.length} messages`);
  assert.ok(pairsIntact(r.history));
  // 13 messages: the middle (7 messages) is not yet worth rewriting what is kept.
  assert.equal(snip(bashSession(6, 2_000), context({ config: cacheAware })).event, null);
  // A huge newest result makes the rewrite dear: the same middle waits.
  const heavyTail = bashSession(12, 2_000);
  heavyTail[heavyTail.length - 1] = { role: "user", content: [{ type: "tool_result", tool_use_id: (heavyTail.at(-2)!.content as { id: string }[])[0]!.id, content: "x ".repeat(60_000) }] };
  assert.equal(snip(heavyTail, context({ config: cacheAware })).event, null);
  // Past triggerMessages it snips whatever the rule says (a ceiling on the history's length).
  assert.ok(snip(bashSession(31, 10), context({ config: cacheAware })).event);
});

test("the ledger a snip carries is capped as a rebuild caps it (it used to grow with every snip), modified files first", async () => {
  const { renderLedger } = await import("../../src/compaction/state/ledger.ts");
  const { rebuildBudgets } = await import("../../src/compaction/config/config.ts");
  const ctx = context({ config: noGate });
  const read = new Set(Array.from({ length: 3_000 }, (_, i) => `src/module_${i}/file_${i}.py`));
  const carried = renderLedger({ read, modified: new Set(["src/app.py"]) });
  const h = bashSession(40, 100);
  // An earlier snip's note on the head's last message: 3,000 files read so far.
  h[2] = { role: "user", content: [...(h[2]!.content as never[]), { type: "text", text: carried }] };
  const r = snip(h, ctx);
  assert.ok(r.event);
  const ledger = JSON.stringify(r.history).match(/<lethe-files>[^"]*/)?.[0] ?? "";
  const cap = rebuildBudgets(ctx.window, ctx.config).ledgerTokens;
  const text = (r.history[r.event.from - 1]!.content as { type: string; text?: string }[]).find((b) => b.type === "text" && b.text!.startsWith("<lethe-files>"))!.text!;
  assert.ok(ctx.tokens.text(text) <= cap, `${ctx.tokens.text(text)} tokens, cap ${cap}`);
  assert.match(ledger, /src\/app\.py/, "the modified file stays");
});

test("a snip's ledger and work record are handed to the counter with the count their fit priced (as a rebuild's are), so neither is counted again", async () => {
  const { renderLedger } = await import("../../src/compaction/state/ledger.ts");
  const { createTokenCounter } = await import("../../src/tokens/count.ts");
  const base = createTokenCounter(undefined, { lineCounted: ["<lethe-work>", "<lethe-files>"] });
  const remembered = new Map<string, number>();
  const tokens = { ...base, rememberRecord: (t: string, n: number) => (remembered.set(t, n), base.rememberRecord!(t, n)) };
  const ctx = { ...context({ config: noGate }), tokens };
  const h = bashSession(40, 100);
  h[2] = { role: "user", content: [...(h[2]!.content as never[]), { type: "text", text: renderLedger({ read: new Set(["src/a.py", "src/b.py"]), modified: new Set(["src/c.py"]) }) }] };
  const r = snip(h, ctx);
  assert.ok(r.event);
  const texts = (r.history[r.event.from - 1]!.content as { type: string; text?: string }[]).filter((b) => b.type === "text").map((b) => b.text!);
  for (const open of ["<lethe-files>", "<lethe-work>"]) {
    const text = texts.find((t) => t.startsWith(open));
    assert.ok(text !== undefined, `the snip carries ${open}`);
    assert.ok(remembered.has(text), `${open} was handed to the counter`);
    // What was remembered is what counting it afresh gives.
    assert.equal(remembered.get(text), createTokenCounter(undefined, { lineCounted: ["<lethe-work>", "<lethe-files>"] }).text(text));
  }
});

test("a snip's carried ledger is the capped ledger rendered, and its remembered count the one counting it afresh gives, whatever the paths (newlines, the closing tag, empty)", async () => {
  const fc = (await import("fast-check")).default;
  const { boundedLedger, ledgerOf, renderLedger } = await import("../../src/compaction/state/ledger.ts");
  const { rebuildBudgets } = await import("../../src/compaction/config/config.ts");
  const { createTokenCounter } = await import("../../src/tokens/count.ts");
  const lineCounted = ["<lethe-work>", "<lethe-files>"];
  const path = fc.oneof(fc.stringMatching(/^[\w./-]{1,40}$/), fc.string({ maxLength: 20 }), fc.constantFrom("a\nread: b", "x\r", "</lethe-files>", "", "p\u2028q", "modified: z"));
  fc.assert(
    fc.property(fc.uniqueArray(path, { maxLength: 300 }), fc.uniqueArray(path, { maxLength: 20 }), (read, modified) => {
      const base = createTokenCounter(undefined, { lineCounted });
      const remembered = new Map<string, number>();
      const ctx = { ...context({ window: 32_000, config: noGate }), tokens: { ...base, rememberRecord: (t: string, n: number) => (remembered.set(t, n), base.rememberRecord!(t, n)) } };
      const h = bashSession(40, 100);
      const carried = { type: "text" as const, text: renderLedger({ read: new Set(read), modified: new Set(modified) }) };
      h[2] = { role: "user", content: [...(h[2]!.content as never[]), carried] };
      const r = snip(h, ctx);
      assert.ok(r.event);
      const texts = (r.history[r.event.from - 1]!.content as { type: string; text?: string }[]).filter((b) => b.type === "text").map((b) => b.text!);
      const ledger = ledgerOf([{ role: "user", content: [carried] }, ...h.slice(r.event.from, r.event.to)]);
      const want = ledger.read.size + ledger.modified.size > 0 ? renderLedger(boundedLedger(ledger, rebuildBudgets(ctx.window, ctx.config).ledgerTokens, createTokenCounter(undefined, { lineCounted }))) : undefined;
      assert.equal(texts.find((t) => t.startsWith("<lethe-files>")), want);
      if (want !== undefined && remembered.has(want)) assert.equal(remembered.get(want), createTokenCounter(undefined, { lineCounted }).text(want));
    }),
    { numRuns: 150 },
  );
});

test("the pressure gate: snip waits for the context a summary's rebuild would hold (a quarter of the threshold on small windows), and never past snip.maxGateTokens (16k), whatever the window", async () => {
  const { rebuildShare, snipGateTokens, autoCompactThreshold } = await import("../../src/compaction/config/config.ts");
  const { resolveConfig } = await import("../../src/compaction/config/config.ts");
  const c = resolveConfig();
  const at = (window: number, maxOutputTokens: number) => snipGateTokens(autoCompactThreshold({ contextWindow: window, maxOutputTokens }, c), c);
  // 32k (threshold 20,800): a quarter, as a rebuild takes; 200k (threshold 167,000): the 16k cap.
  assert.equal(at(32_000, 8_000), Math.floor(rebuildShare(20_800) * 20_800));
  assert.ok(at(32_000, 8_000) < 6_000, `${at(32_000, 8_000)}`);
  assert.equal(at(200_000, 32_000), 16_000);
  // On a 200k window a 21k-token session whose middle is worth snipping is snipped (it waited for
  // 32k before, and for 83.5k before that).
  const h = bashSession(14, 4_000); // 29 messages, ~21k tokens
  assert.ok(snip(h, context({ window: 200_000 })).event, "snipped at 21k tokens on a 200k window");
  assert.equal(snip(h, context({ window: 200_000, config: { snip: { maxGateTokens: 32_000 } } })).event, null, "the old cap waits");
  // At 15k tokens it is under the gate and waits, though the cache rule alone would snip.
  const small = bashSession(10, 4_000);
  assert.equal(snip(small, context({ window: 200_000 })).event, null);
  assert.ok(snip(small, context({ window: 200_000, config: { snip: { maxGateTokens: 8_000 } } })).event, "a lower cap snips it");
  // An explicit share is the user's: the old half-threshold gate comes back with the cap lifted.
  assert.equal(snip(h, context({ window: 200_000, config: { snip: { minThresholdShare: 0.5, maxGateTokens: 1_000_000 } } })).event, null);
});
