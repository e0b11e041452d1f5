// Small windows work (issue 25, item 3): a 200-step read-heavy session (3k-token reads under a
// 3.7k-token system prompt) finishes at 8k and at 16k with rare summaries, none refused. Before,
// both stopped with the thrash error after 5 reads (micro kept three reads whole, more than such a
// window holds, and each summary kept the latest read: every second step summarised).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readHeavySession } from "../support/read-heavy.ts";

for (const window of [8_000, 16_000]) {
  test(`a 200-step read-heavy session at ${window / 1000}k finishes with rare summaries`, async () => {
    const r = await readHeavySession(window);
    assert.equal(r.outcome, "finished", JSON.stringify(r));
    assert.equal(r.steps, 200);
    assert.equal(r.refused, 0);
    assert.ok(r.summaries <= 10, `${r.summaries} summaries`);
  });
}
