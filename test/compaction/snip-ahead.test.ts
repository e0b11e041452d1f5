// After a reply, the carry of the next request's snip is worked out ahead (src/compaction/layers/
// snip-ahead.ts): the request that snips takes it when it cuts the same messages, and the snip is
// the same with or without it.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { snip } from "../../src/compaction/layers/snip.ts";
import { snipAhead } from "../../src/compaction/layers/snip-ahead.ts";
import { middleReading } from "../../src/compaction/state/middle.ts";
import { createEngine } from "../../src/engine/index.ts";
import type { ContentBlock, Message } from "../../src/messages/types.ts";
import { arbHistory } from "../support/arbitraries.ts";
import { calls, context, hostStep, results, user } from "../support/build.ts";

const snipConfig = (keepHead: number, targetMessages: number, triggerMessages: number, cacheAware = false) => ({ snip: { minThresholdShare: 0, cacheAware, keepHead, targetMessages, triggerMessages } });

/** Whether the head message the snip bounded holds every block of the plan's carry, as the same objects. */
function tookPlan(out: Message[], from: number, carried: readonly ContentBlock[]): boolean {
  const content = out[from - 1]!.content;
  return Array.isArray(content) && carried.every((b) => content.includes(b));
}

test("property: planned after each reply (the host then appending, rewriting and dropping messages), a snip writes exactly what one worked out at the request writes, and takes the plan when the cut is the one planned", () => {
  const arbStep = fc.record({
    // 0: nothing; 1: a layer's copy of one message (micro, budget); 2: the host drops its newest
    // round; 3: the host edits a message (other words, in a new object).
    kind: fc.constantFrom(0, 0, 0, 0, 1, 2, 3),
    at: fc.nat(),
  });
  let snips = 0;
  let taken = 0;
  fc.assert(
    fc.property(arbHistory({ minRounds: 30, maxRounds: 70 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 12 }), fc.boolean(), fc.array(arbStep, { minLength: 60, maxLength: 200 }), (full, keepHead, extra, cacheAware, steps) => {
      const target = keepHead + 2 + extra;
      const config = snipConfig(keepHead, target, target + 6, cacheAware);
      const ctx = context({ config });
      ctx.middle = middleReading();
      let h: Message[] = [full[0]!];
      let next = 1;
      for (const s of steps) {
        // What the host did since the reply, then the round (the reply and what answers it) arrives.
        h = hostStep(h, s.kind, s.at);
        if (next < full.length) {
          h = [...h, ...full.slice(next, next + 2)];
          next += 2;
        }
        if (h.length % 2 === 0) continue; // the host asks with a user message last
        const plan = ctx.middle.plan;
        const ahead = snip(h, ctx);
        const now = snip(h, context({ config }));
        assert.equal(JSON.stringify(ahead.history), JSON.stringify(now.history));
        assert.deepEqual(ahead.event, now.event);
        assert.equal(ahead.freedTokens, now.freedTokens);
        if (ahead.event) {
          snips++;
          if (plan && plan.head === ahead.event.from && plan.tail === ahead.event.to && tookPlan(ahead.history, ahead.event.from, plan.carry.carried)) taken++;
          assert.equal(ctx.middle.plan, undefined, "a snip uses a plan once, or drops it");
        }
        h = ahead.history;
        // The reply to this request: the next round's assistant message, when there is one.
        if (next < full.length) snipAhead([...h, full[next]!], ctx);
      }
      return true;
    }),
    { numRuns: 50 },
  );
  // The property held over snips, most of them planned.
  assert.ok(snips > 100, `${snips} snips`);
  assert.ok(taken > snips / 3, `${taken} of ${snips} snips took their plan`);
});

test("the request that snips takes the carry planned after the last reply; one that cuts other messages, or under other budgets, works its own out", () => {
  const config = snipConfig(3, 10, 40);
  const round = (i: number): Message[] => [calls(["bash", { command: `python -m pytest tests/test_${i}.py` }, `t${i}`]), results([`t${i}`, `ok ${i}\nexit code: ${i % 3 === 0 ? 1 : 0}`])];
  const start = (): Message[] => {
    let h: Message[] = [user("Fix the failing test in src/app.ts")];
    for (let i = 0; i < 39; i++) h = [...h, ...round(i)];
    return h; // 79 messages: the next round's request snips (past the trigger of 40)
  };

  // The carry planned after the reply to a history of 79 messages, in an engine's reading.
  const [reply, answer] = round(39);
  const planned = () => {
    const ctx = context({ config });
    ctx.middle = middleReading();
    const h = start();
    assert.equal(snipAhead([...h, reply!], ctx), true, "planned");
    return { ctx, h, carried: ctx.middle.plan!.carry.carried, tail: ctx.middle.plan!.tail };
  };
  const fresh = (h: Message[], window = context({ config }).window) => JSON.stringify(snip(h, { ...context({ config }), window }).history);

  // Taken: the head carries the plan's blocks themselves.
  const a = planned();
  const r = snip([...a.h, reply!, answer!], a.ctx);
  assert.ok(r.event, "snipped");
  assert.ok(tookPlan(r.history, r.event.from, a.carried), "the plan's blocks are carried");
  assert.match(JSON.stringify(r.history[r.event.from - 1]), /pytest tests\/test_\d+\.py/);
  assert.equal(JSON.stringify(r.history), fresh([...a.h, reply!, answer!]));

  // A message of the part replaced after the plan (a new object, other words): not taken.
  const b = planned();
  const edited = b.h.slice();
  edited[10] = results([`t4`, "ok 4\nexit code: 0\nuse the new API"]);
  const r2 = snip([...edited, reply!, answer!], b.ctx);
  assert.ok(r2.event && !tookPlan(r2.history, r2.event.from, b.carried), "not the plan's");
  assert.equal(JSON.stringify(r2.history), fresh([...edited, reply!, answer!]));

  // Two rounds arrived instead of one: the cut moved, the plan is not taken.
  const c = planned();
  const r3 = snip([...c.h, reply!, answer!, ...round(40)], c.ctx);
  assert.ok(r3.event && r3.event.to !== c.tail && !tookPlan(r3.history, r3.event.from, c.carried));

  // The window changed between the reply and the request (other budgets): not taken.
  const d = planned();
  const window = { contextWindow: 32_000, maxOutputTokens: 8_000 };
  const r4 = snip([...d.h, reply!, answer!], { ...d.ctx, window });
  assert.ok(r4.event && !tookPlan(r4.history, r4.event.from, d.carried));
  assert.equal(JSON.stringify(r4.history), fresh([...d.h, reply!, answer!], window));
});

test("no plan when the next request would not snip: too few messages, under the gate, or snip off", () => {
  const round = (i: number): Message[] => [calls(["bash", { command: `make step${i}` }, `t${i}`]), results([`t${i}`, `ok ${i}`])];
  let h: Message[] = [user("Build it")];
  for (let i = 0; i < 20; i++) h = [...h, ...round(i)];
  const reply = round(20)[0]!;
  // Past the trigger, but far under the pressure gate of a 200k window (a few hundred tokens).
  const gated = context({ config: { snip: { cacheAware: false, keepHead: 3, targetMessages: 10, triggerMessages: 12 } } });
  gated.middle = middleReading();
  assert.equal(snipAhead([...h, reply], gated), false);
  const short = context({ config: snipConfig(3, 10, 60) });
  short.middle = middleReading();
  assert.equal(snipAhead([...h.slice(0, 21), reply], short), false);
  const off = context({ config: { snip: { enabled: false } } });
  off.middle = middleReading();
  assert.equal(snipAhead([...h, reply], off), false);
  // Without the engine's reading there is nowhere to keep a plan.
  assert.equal(snipAhead([...h, reply], context({ config: snipConfig(3, 10, 12) })), false);
});

test("engine: with observe after each reply, beforeRequest returns the same requests and events as an engine that works every snip out at the request", async () => {
  const make = () => createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, config: { summary: { auto: "off" } } });
  const planned = make();
  const alone = make();
  let h: Message[] = [user("Fix the failing tests in src/")];
  let snips = 0;
  for (let i = 0; i < 120; i++) {
    const a = await planned.beforeRequest(h, { fixedTokens: 1_500 });
    const b = await alone.beforeRequest(h, { fixedTokens: 1_500 });
    assert.equal(JSON.stringify(a.history), JSON.stringify(b.history), `request ${i}`);
    assert.deepEqual(a.events, b.events);
    snips += a.events.filter((e) => e.kind === "snip").length;
    const reply = calls(["bash", { command: `pytest tests/test_${i}.py -x` }, `t${i}`]);
    planned.observe(a.history, reply, { input_tokens: a.tokens, output_tokens: 40 });
    h = [...a.history, reply, results([`t${i}`, `${"collected 12 items\n".repeat(40)}FAILED test_${i} (exit code: 1)`])];
  }
  assert.ok(snips >= 5, `${snips} snips`);
});
