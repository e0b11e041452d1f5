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
  // Large enough that each summary frees something (one that gains nothing is skipped, not counted).
  const h = bashSession(60, 4_000);
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

test("an auto summary that would not make the context smaller is skipped with a line, and the next is not paid for until the context has grown a quarter", async () => {
  const { createEngine } = await import("../../src/engine/index.ts");
  let calls = 0;
  const client = { provider: "anthropic" as const, stream: async () => (calls++, { message: { role: "assistant" as const, content: [{ type: "text" as const, text: `<summary>${"A long summary that says a great deal. ".repeat(400)}</summary>` }] }, usage: { input_tokens: 10, output_tokens: 10 }, stopReason: "end_turn" as const, model: "m" }) };
  const events: { kind: string; reason?: string }[] = [];
  const engine = createEngine({ contextWindow: 100_000, maxOutputTokens: 4_000, summarizer: { client, model: "m" }, config: { threshold: { tokens: 3_000 }, summary: { presummaryShare: 0, thrashRepeats: 100 }, micro: { enabled: false } }, onEvent: (e) => events.push(e as never) });
  let h: { role: "user" | "assistant"; content: string }[] = [{ role: "user", content: "hello ".repeat(3_200) }];
  const r1 = await engine.beforeRequest(h);
  assert.equal(calls, 1);
  assert.equal(r1.history.length, 1, "kept as it was");
  assert.match(events.find((e) => e.kind === "compact_skipped")?.reason ?? "", /nothing to gain/);
  h = [...h, { role: "assistant", content: "ok" }, { role: "user", content: "more" }];
  await engine.beforeRequest(h);
  assert.equal(calls, 1, "not paid for again while the context has barely grown");
  assert.match(events.filter((e) => e.kind === "compact_skipped").at(-1)?.reason ?? "", /waits until the context passes/);
});

test("thrash is about money: summaries that cost nothing (a local model) are never stopped by it", async () => {
  const { c } = setup([SUMMARY_REPLY], { summariesCost: () => false, config: resolveConfig({ summary: { noProgressRepeats: 0 } }) });
  const h = bashSession(60, 4_000);
  for (let i = 0; i < 6; i++) {
    await c.compact(h, "summarize");
    c.observeTurn(h, 120, 100);
  }
  const priced = setup([SUMMARY_REPLY], { summariesCost: () => true, config: resolveConfig({ summary: { noProgressRepeats: 0 } }) }).c;
  for (let i = 0; i < 3; i++) {
    await priced.compact(h, "summarize");
    priced.observeTurn(h, 120, 100);
  }
  await assert.rejects(priced.compact(h, "summarize"), ThrashError);
});

test("no progress: summaries of the same work leaving the same context stop the session before the next is paid for; the same sizes with new work do not", async () => {
  const { NoProgressError } = await import("../../src/compaction/summary/compactor.ts");
  const { c, client } = setup([SUMMARY_REPLY], { config: resolveConfig({ summary: { thrashRepeats: 100 } }) });
  const h = bashSession(60, 4_000);
  for (let i = 0; i < 3; i++) await c.compact(h, "summarize");
  const paid = client.requests.length;
  await assert.rejects(c.compact(h, "summarize"), NoProgressError);
  assert.equal(client.requests.length, paid, "the fourth summary was not paid for");
  // New work each time (other files read), the same sizes: progress, never stopped.
  const fresh = setup([SUMMARY_REPLY], { config: resolveConfig({ summary: { thrashRepeats: 100 } }) }).c;
  for (let i = 0; i < 6; i++) await fresh.compact(bashSession(60, 4_000).map((m) => JSON.parse(JSON.stringify(m).replace(/file(\d+)/g, `f${i}_$1`))), "summarize");
});
