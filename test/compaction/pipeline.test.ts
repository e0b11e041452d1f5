import { test } from "node:test";
import assert from "node:assert/strict";
import { prepare, LAYERS } from "../../src/compaction/pipeline.ts";
import { bashSession, calls, context, results, said, user } from "../support/build.ts";

test("layers run in SPEC order: budget, snip, micro", () => {
  assert.deepEqual(LAYERS.map((l) => l.name), ["budget", "snip", "micro"]);
});

test("reports what each layer did and the tokens after", () => {
  const h = [...bashSession(60, 12_000), calls(["bash", {}, "huge"]), results(["huge", "h".repeat(500_000)])];
  // Snip (on message count here) leaves ten messages; with the newest result alone kept whole,
  // micro has old ones to clear.
  const ctx = context({ config: { micro: { keepRecent: 1 }, snip: { cacheAware: false, triggerMessages: 30, targetMessages: 10 } } });
  const r = prepare(h, ctx);
  assert.deepEqual(r.reports.map((x) => x.layer), ["budget", "snip", "micro"]);
  assert.deepEqual(r.events.map((e) => e.kind), ["budget", "snip", "micro"]);
  assert.equal(r.tokens, ctx.tokens.messages(r.history));
  const before = ctx.tokens.messages(h);
  const freed = r.reports.reduce((s, x) => s + x.freedTokens, 0);
  assert.equal(before - freed, r.tokens);
  assert.equal(r.overThreshold, false);
});

test("budget saves the full text before micro could clear it", () => {
  // A huge seen result that micro would clear: the original must still be on disk.
  const big = "B".repeat(120_000);
  const h = [user("go"), calls(["bash", {}, "big"]), results(["big", big]), ...bashSession(10, 20_000).slice(1), said("ok"), user("again")];
  // Snip off: at ~60k tokens it would take the middle out before micro looks at it.
  const ctx = context({ config: { snip: { enabled: false } } });
  const r = prepare(h, ctx);
  assert.ok(r.events.some((e) => e.kind === "micro"));
  assert.ok([...ctx.store.files.values()].includes(big));
  assert.match(JSON.stringify(r.history[2]), /tool-results\/big\.txt/);
});

test("overThreshold when the cheap layers cannot bring it under", () => {
  const h = [user("word ".repeat(200_000))];
  const r = prepare(h, context());
  assert.equal(r.overThreshold, true);
  assert.equal(r.threshold, 167_000);
});
