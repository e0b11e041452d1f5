// A snip reads the part it removes as it forms, a few messages a request (src/compaction/state/
// middle.ts): what it writes must be what reading the part whole at the snip writes.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { snip } from "../../src/compaction/layers/snip.ts";
import { middleReading, readMiddle, readPart } from "../../src/compaction/state/middle.ts";
import type { Message } from "../../src/messages/types.ts";
import { arbHistory } from "../support/arbitraries.ts";
import { calls, context, hostStep, results, user } from "../support/build.ts";

const snipConfig = (keepHead: number, targetMessages: number, triggerMessages: number) => ({ snip: { minThresholdShare: 0, cacheAware: false, keepHead, targetMessages, triggerMessages } });

test("property: a snip that read its part as it formed (the host appending, rewriting and dropping messages between requests) writes exactly what one reading it whole writes", () => {
  const arbStep = fc.record({
    // 0: append; else what the host does (hostStep): 1 a layer's copy of one message, 2 drop the newest round, 3 edit one.
    kind: fc.constantFrom(0, 0, 0, 0, 1, 2, 3),
    at: fc.nat(),
  });
  let total = 0;
  fc.assert(
    fc.property(arbHistory({ minRounds: 30, maxRounds: 70 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 12 }), fc.array(arbStep, { minLength: 60, maxLength: 200 }), (full, keepHead, extra, steps) => {
      const target = keepHead + 2 + extra;
      const config = snipConfig(keepHead, target, target + 6);
      const ctx = context({ config });
      ctx.middle = middleReading();
      let h: Message[] = [full[0]!];
      let next = 1;
      let snips = 0;
      for (const s of steps) {
        const changed = hostStep(h, s.kind, s.at);
        if (changed !== h) h = changed;
        else if (next < full.length) {
          // A round: the assistant's message and the user's answer.
          h = [...h, ...full.slice(next, next + 2)];
          next += 2;
        }
        if (h.length % 2 === 0) continue; // the host asks with a user message last
        const read = snip(h, ctx);
        const whole = snip(h, context({ config }));
        assert.equal(JSON.stringify(read.history), JSON.stringify(whole.history));
        assert.deepEqual(read.event, whole.event);
        assert.equal(read.freedTokens, whole.freedTokens);
        if (read.event) snips++;
        h = read.history;
      }
      total += snips;
      return true;
    }),
    { numRuns: 80 },
  );
  // The property held over snips, not only over requests that left the history whole.
  assert.ok(total > 100, `${total} snips`);
});

test("the request that snips has most of its part read already: a few messages a request, from the head to where the tail starts at the earliest", () => {
  const config = snipConfig(3, 10, 40);
  const ctx = context({ config });
  const reading = middleReading();
  ctx.middle = reading;
  let h: Message[] = [user("Fix the failing test in src/app.ts")];
  let readBefore = -1;
  for (let i = 0; i < 60; i++) {
    h = [...h, calls(["bash", { command: `python -m pytest tests/test_${i}.py` }, `t${i}`]), results([`t${i}`, `ok ${i}\nexit code: ${i % 3 === 0 ? 1 : 0}`])];
    const before = reading.start === 3 ? reading.read.length : 0;
    const r = snip(h, ctx);
    if (r.event) {
      readBefore = before;
      // The part it removed: from the head (3 messages) to the tail.
      assert.ok(before >= r.event.removedMessages - 8, `read ${before} of ${r.event.removedMessages} before the snip`);
      assert.match(JSON.stringify(r.history), /pytest tests\/test_\d+\.py/);
      break;
    }
    h = r.history;
  }
  assert.ok(readBefore > 0, "the session snipped, with its part read ahead");
});

test("a message the host replaces after it was read (a new object, other words) is carried as it is now, not as it was read", () => {
  const config = snipConfig(3, 10, 40);
  const ctx = context({ config });
  ctx.middle = middleReading();
  let h: Message[] = [user("Fix the failing test in src/app.ts")];
  for (let i = 0; i < 12; i++) {
    const answer = i === 2 ? { role: "user" as const, content: [{ type: "tool_result" as const, tool_use_id: `t${i}`, content: "ok" }, { type: "text" as const, text: "use the old API" }] } : results([`t${i}`, `ok ${i}`]);
    h = [...h, calls(["bash", { command: `make step${i}` }, `t${i}`]), answer];
    assert.equal(snip(h, ctx).event, null, "no snip yet");
  }
  assert.ok(ctx.middle.read.length > 6, "the message was read ahead");
  // The host edits what the user said: a new object in its place.
  const at = h.findIndex((m) => JSON.stringify(m).includes("use the old API"));
  h = h.slice();
  h[at] = { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "ok" }, { type: "text", text: "use the new API" }] };
  for (let i = 12; i < 40; i++) {
    h = [...h, calls(["bash", { command: `make step${i}` }, `t${i}`]), results([`t${i}`, `ok ${i}`])];
    const r = snip(h, ctx);
    if (r.event) {
      const carried = JSON.stringify(r.history[r.event.from - 1]);
      assert.match(carried, /use the new API/);
      assert.doesNotMatch(carried, /use the old API/);
      return;
    }
    h = r.history;
  }
  assert.fail("the session never snipped");
});

test("a reading finished at a part that ends with an assistant's call (read without its result) is not continued to a longer part: that part's ledger is read whole", () => {
  const h: Message[] = [
    user("Fix src/app.ts"),
    calls(["read_file", { path: "src/a.ts" }, "r1"]),
    results(["r1", "export const a = 1;"]),
    calls(["write_file", { path: "src/app.ts", content: "fixed" }, "w1"]),
    results(["w1", "wrote src/app.ts"]),
    calls(["bash", { command: "npm test" }, "b1"]),
    results(["b1", "ok"]),
  ];
  const r = middleReading();
  // Finished ahead at the write (its result is outside the part: the call counts as not run there).
  const short = readMiddle(r, h, 1, 4)!;
  assert.deepEqual([...short.ledger.modified], []);
  // The longer part has the write's result: the write counts.
  const long = readMiddle(r, h, 1, 6)!;
  const whole = readPart(h.slice(1, 6));
  assert.deepEqual([...long.ledger.modified], [...whole.ledger.modified]);
  assert.deepEqual([...long.ledger.modified], ["src/app.ts"]);
  assert.deepEqual([...long.ledger.read], [...whole.ledger.read]);
});
