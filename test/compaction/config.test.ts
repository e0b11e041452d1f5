import { test } from "node:test";
import assert from "node:assert/strict";
import { autoCompactThreshold, microMinSavings, resolveConfig, DEFAULT_CONFIG } from "../../src/compaction/config/config.ts";

test("threshold: 167k on a 200k model, buffer scaled on small windows", () => {
  assert.equal(autoCompactThreshold({ contextWindow: 200_000, maxOutputTokens: 32_000 }), 167_000);
  assert.equal(autoCompactThreshold({ contextWindow: 200_000, maxOutputTokens: 8_000 }), 179_000);
  // 32k window, 8k output: buffer is a tenth of the window (3.2k), not 13k.
  assert.equal(autoCompactThreshold({ contextWindow: 32_000, maxOutputTokens: 8_000 }), 20_800);
  // Never below half the window.
  assert.equal(autoCompactThreshold({ contextWindow: 8_000, maxOutputTokens: 8_000 }), 4_000);
});

test("micro's savings gate scales down on small windows", () => {
  assert.equal(microMinSavings({ contextWindow: 200_000, maxOutputTokens: 1 }, DEFAULT_CONFIG.micro), 5_000);
  assert.equal(microMinSavings({ contextWindow: 32_000, maxOutputTokens: 1 }, DEFAULT_CONFIG.micro), 3_200);
});

test("every threshold is configurable; bad values get a clear error", () => {
  const c = resolveConfig({ micro: { keepRecent: 5 }, budget: { perToolChars: { grep: 5 } } });
  assert.equal(c.micro.keepRecent, 5);
  assert.equal(c.budget.perToolChars.grep, 5);
  assert.equal(c.budget.perToolChars.bash, 30_000);
  assert.throws(() => resolveConfig({ snip: { targetMessages: 70 } }), /targetMessages \(70\) must be below snip\.triggerMessages \(60\)/);
  assert.throws(() => resolveConfig({ budget: { perResultChars: -1 } }), /budget\.perResultChars: Too small/);
});
