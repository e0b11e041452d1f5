import { test } from "node:test";
import assert from "node:assert/strict";
import { createCompactor, ThrashError, CompactionBlockedError, samePrefix } from "../../src/compaction/summary/compactor.ts";
import { resolveConfig } from "../../src/compaction/config/config.ts";
import type { CompactionEvent } from "../../src/compaction/types.ts";
import { validate } from "../../src/messages/invariants.ts";
import { ModelError } from "../../src/model/types.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { bashSession, calls, results, said, user } from "../support/build.ts";
import { SUMMARY_REPLY, scriptedClient } from "../support/scripted-client.ts";

const window = { contextWindow: 200_000, maxOutputTokens: 32_000 };
const counter = createTokenCounter();

function setup(script: Parameters<typeof scriptedClient>[0], extra: Partial<Parameters<typeof createCompactor>[0]> = {}) {
  const events: CompactionEvent[] = [];
  const client = scriptedClient(script);
  const c = createCompactor({ window, config: resolveConfig(), counter, summarizer: { client, model: "m" }, emit: (e) => events.push(e), ...extra });
  return { c, client, events };
}

test("auto compaction with the model: summary in, history valid and smaller", async () => {
  const { c, client, events } = setup([SUMMARY_REPLY]);
  const h = bashSession(60, 6_000);
  const r = await c.compact(h, "summarize", { system: "SYS" });
  assert.equal(client.requests.length, 1);
  assert.equal(client.requests[0]!.toolChoice, "none");
  assert.equal(client.requests[0]!.system, "SYS");
  assert.equal(r.event.summarizer, "model");
  assert.ok(r.event.tokensAfter < r.event.tokensBefore / 3);
  assert.deepEqual(validate(r.history), []);
  assert.match(JSON.stringify(r.history[0]), /fix the failing build/);
  assert.equal(events.at(-1), r.event);
});

test("circuit breaker: after 3 consecutive failures digest takes over and the model is not called again", async () => {
  const fail = () => new ModelError("server", "boom");
  const { c, client, events } = setup([fail(), fail(), fail(), SUMMARY_REPLY]);
  const h = bashSession(30, 4_000);
  for (let i = 0; i < 3; i++) {
    c.observeTurn(h, 10, 100);
    c.observeTurn(h, 10, 100);
    c.observeTurn(h, 10, 100);
    c.observeTurn(h, 10, 100);
    const r = await c.compact(h, "summarize");
    assert.equal(r.event.summarizer, "digest");
    assert.deepEqual(validate(r.history), []);
  }
  assert.equal(c.breakerOpen, true);
  assert.equal(events.filter((e) => e.kind === "summary_failed").length, 3);
  const r = await c.compact(h, "manual");
  assert.equal(r.event.summarizer, "digest");
  assert.equal(client.requests.length, 3);
});

test("a success resets the failure count", async () => {
  const fail = () => new ModelError("server", "boom");
  const { c } = setup([fail(), fail(), SUMMARY_REPLY, fail(), SUMMARY_REPLY]);
  const h = bashSession(10, 1_000);
  for (let i = 0; i < 5; i++) {
    for (let t = 0; t < 4; t++) c.observeTurn(h, 10, 100);
    await c.compact(h, "manual");
  }
  assert.equal(c.breakerOpen, false);
});

test("background pre-summary from 80% of the threshold: the swap at the threshold makes no new call", async () => {
  const { c, client, events } = setup([SUMMARY_REPLY]);
  const h = bashSession(40, 4_000);
  c.observeTurn(h, 70, 100);
  assert.equal(client.requests.length, 0, "below 80%: nothing yet");
  c.observeTurn(h, 85, 100);
  assert.equal(client.requests.length, 1);
  assert.ok(events.some((e) => e.kind === "presummary_started"));
  // Two more messages arrive, then the threshold is crossed.
  const later = [...h, calls(["bash", { command: "ls" }, "late1"]), results(["late1", "a b c"])];
  const r = await c.compact(later, "summarize");
  assert.equal(client.requests.length, 1, "no second summary call");
  assert.equal(r.event.presummary, true);
  // What the pre-summary did not see is kept verbatim.
  assert.equal(r.history.at(-1), later.at(-1));
  assert.equal(r.history.at(-2), later.at(-2));
  assert.deepEqual(validate(r.history), []);
});

test("a pre-summary of a prefix that changed is not used", async () => {
  const { c, client } = setup([SUMMARY_REPLY]);
  const h = bashSession(20, 4_000);
  c.observeTurn(h, 85, 100);
  const other = [user("a different task"), ...bashSession(21, 4_100).slice(1)];
  const r = await c.compact(other, "summarize");
  assert.equal(r.event.presummary, false);
  assert.equal(client.requests.length, 2);
  assert.equal(samePrefix(h, other), false);
  assert.equal(samePrefix(h, [...h, said("x")]), true);
});

test("PreCompact hook: adds instructions, or blocks with a reason", async () => {
  const { c, client } = setup([SUMMARY_REPLY], {
    hooks: { preCompact: async ({ focus }) => (focus === "stop" ? { block: "not now" } : { instructions: "keep API names" }) },
  });
  const h = bashSession(60, 6_000);
  const r = await c.compact(h, "manual", {}, "focus on tests");
  assert.match(JSON.stringify(client.requests[0]!.messages.at(-1)), /focus on tests\\nkeep API names/);
  assert.equal(r.event.focus, "focus on tests\nkeep API names");
  await assert.rejects(c.compact(h, "manual", {}, "stop"), CompactionBlockedError);
});

test("PostCompact hook sees the summary and the token counts", async () => {
  const seen: unknown[] = [];
  const { c } = setup([SUMMARY_REPLY], { hooks: { postCompact: async (info) => void seen.push(info) } });
  await c.compact(bashSession(60, 6_000), "manual");
  assert.equal(seen.length, 1);
  assert.match(JSON.stringify(seen[0]), /tokensBefore.*tokensAfter.*fix the failing build/);
});

test("thrash: the context refilling right after each compaction stops the session", async () => {
  const { c } = setup([SUMMARY_REPLY]);
  const h = bashSession(10, 1_000);
  await c.compact(h, "summarize");
  c.observeTurn(h, 120, 100);
  await c.compact(h, "summarize");
  c.observeTurn(h, 120, 100);
  await c.compact(h, "summarize");
  c.observeTurn(h, 120, 100);
  await assert.rejects(c.compact(h, "summarize"), ThrashError);
});

test("a manual compaction that would not make the context smaller keeps the history and says so (no PostCompact)", async () => {
  const seen: unknown[] = [];
  const { c, events } = setup([SUMMARY_REPLY], { hooks: { postCompact: async (info) => void seen.push(info) } });
  const h = bashSession(2, 200);
  const r = await c.compact(h, "manual");
  assert.equal(r.skipped, true);
  assert.deepEqual(r.history, h);
  assert.equal(seen.length, 0);
  assert.equal(events.at(-1)?.kind, "compact_skipped");
});

test("digest mode never calls the model", async () => {
  const { c, client } = setup([SUMMARY_REPLY], { mode: "digest" });
  const r = await c.compact([user("task"), said("ok"), user("next")], "manual");
  assert.equal(client.requests.length, 0);
  assert.equal(r.event.summarizer, "digest");
});
