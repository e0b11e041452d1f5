import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { createTruncationDetector } from "../../src/tokens/truncation.ts";

/** Feed (reported, estimated) pairs; return the verdict kinds. */
function run(points: [number, number][], output = 200) {
  const d = createTruncationDetector();
  return points.map(([reported, visible]) => d.observe(reported, visible, output));
}

test("an estimator that is several times off, steadily, is not truncation (the replay's alphabet runs: 0.21 tokens per estimated token)", () => {
  const points: [number, number][] = [];
  for (let i = 1; i <= 40; i++) points.push([Math.round(i * 1_950 * 0.21), i * 1_950]);
  assert.deepEqual(new Set(run(points).map((v) => v.kind)), new Set(["counted"]));
});

test("one odd chunk (the estimator 4.7× high on it), then ordinary growth: at most a suspicion, never a verdict", () => {
  const points: [number, number][] = [
    [2_000, 2_000],
    [4_000, 4_000],
    [4_000 + 425, 6_000], // 2,000 estimated, 425 real
    [4_425 + 1_500, 7_500], // ordinary
    [4_425 + 3_000, 9_000],
  ];
  const kinds = run(points).map((v) => v.kind);
  assert.ok(!kinds.includes("truncated"), kinds.join());
  assert.deepEqual(kinds.slice(3), ["counted", "counted"], "ordinary growth clears any suspicion");
});

test("Ollama's drop-oldest cap: detected by the second capped request at the latest, with the cap as the window", () => {
  const cap = 14_000;
  const msgs: number[] = [];
  const points: [number, number][] = [];
  for (let i = 0; i < 30; i++) {
    msgs.push(900 + ((i * 37) % 400));
    const sent = msgs.reduce((a, b) => a + b, 0);
    // The server drops whole messages from the front until the rest fits.
    let kept = sent;
    for (let j = 0; kept > cap; j++) kept -= msgs[j]!;
    points.push([kept, Math.round(sent * 1.03)]);
  }
  const verdicts = run(points);
  const firstCapped = points.findIndex(([r], i) => r < points[i]![1] / 1.03 - 1);
  const at = verdicts.findIndex((v) => v.kind === "truncated");
  assert.ok(at >= firstCapped && at <= firstCapped + 1, `capped from #${firstCapped}, detected at #${at}`);
  const v = verdicts[at]!;
  assert.ok(v.kind === "truncated" && v.window > cap - 1_400 && v.window <= cap + 200, JSON.stringify(v));
});

test("a reported input that does not move while a big result arrives is detected at once", () => {
  const kinds = run([
    [8_000, 8_000],
    [10_000, 10_000],
    [10_100, 14_000],
  ]).map((v) => v.kind);
  assert.deepEqual(kinds, ["counted", "counted", "truncated"]);
});

test("a compaction after a suspicion re-anchors on the smaller request (counted in full again)", () => {
  const kinds = run([
    [8_000, 8_000],
    [10_000, 10_000],
    [10_500, 13_000], // suspicious: 500 of 3,000
    [3_000, 3_100], // compacted
    [5_000, 5_100],
  ]).map((v) => v.kind);
  assert.deepEqual(kinds, ["counted", "counted", "suspect", "counted", "counted"]);
});

test("property: a server that counts everything, at any steady ratio (0.15×..6×), with up to 8k of overhead lethe does not see, each step's text 2× off either way, is never called truncating", () => {
  fc.assert(
    fc.property(
      fc.double({ min: 0.15, max: 6, noNaN: true }),
      fc.integer({ min: 0, max: 8_000 }),
      fc.array(fc.tuple(fc.integer({ min: -3_000, max: 20_000 }), fc.double({ min: 0.5, max: 2, noNaN: true })), { minLength: 2, maxLength: 60 }),
      (ratio, overhead, steps) => {
        let visible = 1_000;
        // What the request carries besides the messages (tool schemas, a chat template): unknown to lethe.
        let real = 1_000 * ratio + overhead;
        const points: [number, number][] = [];
        for (const [step, off] of steps) {
          const next = Math.max(100, visible + step);
          // Growth is new text (its own estimator error); a shrink is a compaction (removes in proportion).
          real = next >= visible ? real + (next - visible) * ratio * off : overhead + (real - overhead) * (next / visible);
          visible = next;
          points.push([Math.max(1, Math.round(real)), visible]);
        }
        return run(points).every((v) => v.kind !== "truncated");
      },
    ),
    { numRuns: 3_000 },
  );
});

test("after a rewrite (a compaction) the figure only re-anchors: a rebuilt history estimated higher than it counts is not a cap", () => {
  const d = createTruncationDetector();
  // A session growing normally teaches the ratio.
  assert.equal(d.observe(5_000, 5_200, 100).kind, "counted");
  assert.equal(d.observe(7_000, 7_300, 100).kind, "counted");
  // A summary rewrote the history: the estimate grew by 1,500 while the count fell (the rebuilt
  // text estimates high). observe() would call it a cap; reanchor() takes it as the new base.
  assert.equal(d.observe(6_500, 8_800, 100).kind, "truncated");
  const e = createTruncationDetector();
  e.observe(5_000, 5_200, 100);
  e.observe(7_000, 7_300, 100);
  e.reanchor(6_500, 8_800);
  // Growth from the new base is judged as usual: normal growth counts, a cap is still caught.
  assert.equal(e.observe(8_500, 10_900, 100).kind, "counted");
  assert.equal(e.observe(8_600, 14_000, 100).kind, "truncated");
});

test("a drop-oldest cap on a session of small steps (each under what one step can judge): caught once the capped requests together have grown enough, not re-anchored away step by step", () => {
  const cap = 14_000;
  const msgs: number[] = [];
  const points: [number, number][] = [];
  for (let i = 0; i < 80; i++) {
    msgs.push(250 + ((i * 37) % 150)); // 250–400 tokens a step: under the 500 a single step is judged on
    const sent = msgs.reduce((a, b) => a + b, 0);
    let kept = sent;
    for (let j = 0; kept > cap; j++) kept -= msgs[j]!;
    points.push([kept, sent]);
  }
  const verdicts = run(points);
  const firstCapped = points.findIndex(([r, s]) => r < s);
  const at = verdicts.findIndex((v) => v.kind === "truncated");
  assert.ok(at >= 0, "detected");
  // Detected once the requests since the last one counted in full add up to a judgeable step (≥ 500 estimated): within 3 capped requests.
  assert.ok(at >= firstCapped && at <= firstCapped + 3, `capped from #${firstCapped}, detected at #${at}`);
});
