import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULTS, dataFile, stallBenchmark } from "../../bench/stall.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";

test("stall: the pre-summary run swaps in the background summary, the other waits for a foreground one", async () => {
  const r = await stallBenchmark({ ...DEFAULTS, latencyS: 0.3, turnLatencyS: 0.05, window: 16_000, maxOutputTokens: 2_000, resultTokens: 1_000, maxTurns: 60 });
  assert.deepEqual(Object.keys(r).slice(0, 3), ["latency_s", "wait_with_presummary_s", "wait_without_presummary_s"]);
  assert.equal(r.latency_s, 0.3);
  const w = r.detail.with_presummary;
  const wo = r.detail.without_presummary;
  assert.equal(w.swap_presummary, true, "the swap reused the background summary");
  assert.equal(w.swap_summarizer, "model");
  assert.notEqual(w.presummary_started_turn, null);
  assert.ok(w.presummary_started_turn! < w.swap_turn);
  assert.equal(wo.swap_presummary, false);
  assert.equal(wo.presummary_started_turn, null);
  assert.equal(wo.swap_summarizer, "model");
  // One summary request each: the background one was not repeated at the swap.
  assert.equal(w.summary_requests_to_fake, 1);
  assert.equal(wo.summary_requests_to_fake, 1);
  for (const run of [w, wo]) assert.ok(run.tokens_after < run.tokens_before && run.tokens_before > run.threshold * 0.9);
});

test("stall: data files are about the asked size", () => {
  const n = createTokenCounter().text(dataFile(3, 2_000));
  assert.ok(n > 1_500 && n < 2_600, `${n} tokens`);
});
