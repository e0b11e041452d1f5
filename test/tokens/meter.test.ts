import { test } from "node:test";
import assert from "node:assert/strict";
import { createContextMeter, usageTotal } from "../../src/tokens/meter.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { said, user } from "../support/build.ts";

test("anchors on reported usage and estimates only what is new", () => {
  let calls = 0;
  const counter = createTokenCounter((s) => { calls++; return Math.ceil(s.length / 4); });
  const meter = createContextMeter({ counter });
  const sent = [user("a".repeat(400))];
  const reply = said("b".repeat(40));
  meter.observe(sent, reply, { input_tokens: 150, output_tokens: 20, cache_read_input_tokens: 50 });
  const next = [...sent, reply, user("c".repeat(80))];
  const before = calls;
  const n = meter.measure(next);
  assert.equal(meter.anchored(), true);
  // 220 reported + the new message (20 + overheads) × correction (200 / 107 ≈ 1.87)
  assert.equal(calls - before, 1, "only the new message was counted");
  const fresh = counter.message(next[2]!);
  assert.equal(n, 220 + Math.ceil(fresh * meter.correction()));
});

test("a changed prefix drops the anchor (compaction replaced a message)", () => {
  const counter = createTokenCounter((s) => s.length);
  const meter = createContextMeter({ counter });
  const sent = [user("hello")];
  const reply = said("hi");
  meter.observe(sent, reply, { input_tokens: 1000, output_tokens: 5 });
  meter.measure([user("hello"), reply]);
  assert.equal(meter.anchored(), false);
});

test("the correction factor learns the reported/estimated ratio, smoothed and per model", () => {
  const factors = new Map<string, number>();
  const counter = createTokenCounter((s) => s.length);
  const a = createContextMeter({ counter, model: "m1", factors });
  for (let i = 0; i < 30; i++) {
    const sent = [user("x".repeat(100 + i))];
    a.observe(sent, said("y"), { input_tokens: Math.round(counter.messages(sent) * 1.2), output_tokens: 1 });
  }
  assert.ok(Math.abs(a.correction() - 1.2) < 0.01, `factor ${a.correction()}`);
  const b = createContextMeter({ counter, model: "m2", factors });
  assert.equal(b.correction(), 1);
  assert.equal(usageTotal({ input_tokens: 1, output_tokens: 2, cache_creation_input_tokens: 3, cache_read_input_tokens: 4 }), 10);
});
