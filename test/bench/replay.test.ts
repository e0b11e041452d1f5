import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runReplay } from "../../bench/replay/harness.ts";
import { ALL_POLICIES } from "../../bench/replay/policies/index.ts";
import { SEED, microCompact, snipCompact } from "../../bench/replay/policies/seed.ts";
import { commonPrefixMessages } from "../../bench/replay/pricing.ts";
import { standinRebuild } from "../../bench/replay/standin-summary.ts";
import type { Session } from "../../bench/replay/types.ts";
import { validate } from "../../src/messages/invariants.ts";
import type { Message } from "../../src/messages/types.ts";

const text = (role: "user" | "assistant", t: string): Message => ({ role, content: [{ type: "text", text: t }] });
const use = (id: string, command: string): Message => ({
  role: "assistant",
  content: [
    { type: "text", text: `Running ${command}` },
    { type: "tool_use", id, name: "bash", input: { command } },
  ],
});
const result = (id: string, out: string): Message => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: out }] });
const output = (i: number, chars: number) => Array.from({ length: chars }, (_, k) => (k % 61 === 60 ? "\n" : String.fromCharCode(97 + ((i * 7 + k) % 26)))).join("");

/** A bash session of `rounds` tool calls with `chars`-char outputs; ends with a text reply or an unanswered call. */
function session(id: string, rounds: number, chars: number, trailingCall: boolean): Session {
  const messages: Message[] = [text("user", `Task ${id}: find out why the build fails and fix it.`)];
  for (let i = 0; i < rounds; i++) {
    messages.push(use(`${id}_t${i}`, `cat src/file${i}.py`));
    messages.push(result(`${id}_t${i}`, output(i, chars)));
  }
  messages.push(trailingCall ? use(`${id}_last`, "npm test") : text("assistant", "Fixed: the import path was wrong."));
  return { id, system: "You are a coding agent.", messages };
}

const assistants = (ss: Session[]) => ss.reduce((n, s) => n + s.messages.filter((m) => m.role === "assistant").length, 0);

test("replay: every policy, every window: requests, tokens, cost, summaries, invariants", () => {
  const sessions = [session("a", 30, 3_000, false), session("b", 6, 800, true)];
  const before = JSON.stringify(sessions);
  const tmp = mkdtempSync(join(tmpdir(), "lethe-replay-test-"));
  try {
    const r = runReplay(sessions, { windows: [4_000, 200_000], policies: ALL_POLICIES, warmup: true, repeat: 2, tmpRoot: tmp });
    assert.deepEqual(readdirSync(tmp), [], "the work directory is removed");
    assert.equal(JSON.stringify(sessions), before, "the recorded corpus is untouched");
    assert.deepEqual(r.runs.map((x) => x.window), [4_000, 200_000]);
    for (const run of r.runs) {
      assert.deepEqual(Object.keys(run.policies), ["lethe", "seed", "claude-code"]);
      for (const [name, m] of Object.entries(run.policies)) {
        const at = `${name} @ ${run.window}`;
        assert.deepEqual(
          Object.keys(m).sort(),
          ["cost_usd", "input_tokens_total", "invariant_violations", "over_window", "prepare_ms_p50", "prepare_ms_p99", "requests", "retention", "summary_calls"],
          at,
        );
        assert.equal(m.requests, assistants(sessions), `${at}: one request per recorded assistant message`);
        assert.ok(m.input_tokens_total > 0, at);
        assert.ok(m.cost_usd > 0, at);
        assert.ok(m.prepare_ms_p50 >= 0 && m.prepare_ms_p99 >= m.prepare_ms_p50, at);
        assert.equal(m.retention, null, at);
        const d = r.detail.find((x) => x.window === run.window)!.policies[name]!;
        assert.ok(d.repetitions_identical, `${at}: repetitions replay the same thing`);
        assert.equal(d.cache_read_tokens + d.cache_write_tokens, m.input_tokens_total, at);
      }
      assert.equal(run.policies.lethe!.invariant_violations, 0);
      assert.equal(run.policies["claude-code"]!.invariant_violations, 0);
    }
    const small = r.runs[0]!.policies;
    const large = r.runs[1]!.policies;
    assert.ok(small.seed!.summary_calls > 0, "the seed summarises on a tiny window");
    assert.ok(small["claude-code"]!.summary_calls > 0);
    assert.equal(large.seed!.summary_calls, 0, "nothing to summarise at 200k");
    assert.equal(large["claude-code"]!.summary_calls, 0);
    // Without any compaction, the request after a request shares all of it: mostly cache reads.
    const cc = r.detail[1]!.policies["claude-code"]!;
    assert.ok(cc.cache_read_tokens > cc.cache_write_tokens);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("stand-in rebuild: valid, stand-in first, newest whole rounds, stubs when one round is too big", () => {
  const s = session("c", 10, 2_000, false).messages.slice(0, -1); // ends with a user message (results)
  const tokens = (m: Message) => JSON.stringify(m).length / 4;
  const r = standinRebuild(s, 8_000, tokens); // keeps ≤ 2,000 "tokens": a few rounds
  assert.equal(r.mode, "rounds");
  assert.deepEqual(validate(r.history), []);
  assert.equal(r.history[1]!.role, "assistant");
  assert.match(JSON.stringify(r.history[0]), /stand-in for a summary of \d+ earlier messages/);
  assert.equal(r.replaced + r.history.length - 1, s.length);
  assert.ok(r.history.length >= 3);

  const tiny = standinRebuild(s, 400, tokens); // not even the newest round fits
  assert.notEqual(tiny.mode, "rounds");
  assert.deepEqual(validate(tiny.history), []);
  assert.ok(!JSON.stringify(tiny.history).includes(output(9, 2_000)), "the big result became a stub");

  const none = standinRebuild(s, 4, tokens);
  assert.equal(none.mode, "latest-user-only");
  assert.deepEqual(validate(none.history), []);
  assert.equal(none.history.length, 1);
});

test("seed: the course's snip makes two user messages adjacent; micro keeps the 3 newest results", () => {
  const h = session("d", 40, 500, false).messages.slice(0, -1);
  const snipped = snipCompact(h);
  // first 3 + placeholder + last 47, the tail moved back by one so the last 47 do not start with a result
  assert.equal(snipped.length, 52);
  assert.equal(snipped[4]!.role, "assistant");
  assert.ok(validate(snipped).some((v) => v.kind === "role_order"), "faithful to the course: placeholder after a user message");
  const m = microCompact(h);
  const results = m.flatMap((x) => (typeof x.content === "string" ? [] : x.content.filter((b) => b.type === "tool_result")));
  const cleared = results.filter((b) => b.type === "tool_result" && b.content === SEED.microPlaceholder);
  assert.equal(cleared.length, results.length - 3);
  assert.notEqual(m, h);
  assert.ok(h.every((x) => typeof x.content === "string" || x.content.every((b) => b.type !== "tool_result" || b.content !== SEED.microPlaceholder)), "input untouched");
});

test("pricing: common prefix by identity, then by JSON equality", () => {
  const a = text("user", "hi");
  const b = text("assistant", "hello");
  assert.equal(commonPrefixMessages(null, [a, b]), 0);
  assert.equal(commonPrefixMessages([a, b], [a, b, a]), 2);
  assert.equal(commonPrefixMessages([a, b], [a, { ...b, content: [{ type: "text", text: "hello" }] }]), 2);
  assert.equal(commonPrefixMessages([a, b], [a, text("assistant", "changed")]), 1);
});

test("replay: huge results are persisted by each policy's own rule", () => {
  const big = (i: number) => output(i, 80_000);
  const s: Session = {
    id: "huge",
    system: "",
    messages: [
      text("user", "Read the three logs."),
      {
        role: "assistant",
        content: [0, 1, 2].map((i) => ({ type: "tool_use" as const, id: `h${i}`, name: "bash", input: { command: `cat log${i}` } })),
      },
      { role: "user", content: [0, 1, 2].map((i) => ({ type: "tool_result" as const, tool_use_id: `h${i}`, content: big(i) })) },
      text("assistant", "The logs say the disk is full."),
    ],
  };
  const tmp = mkdtempSync(join(tmpdir(), "lethe-replay-test-"));
  try {
    const r = runReplay([s], { windows: [200_000], policies: ALL_POLICIES, warmup: false, repeat: 1, tmpRoot: tmp });
    const d = r.detail[0]!.policies;
    const m = r.runs[0]!.policies;
    assert.equal(d["claude-code"]!.acted.persist, 1, "claude-code: three results over 50,000 chars, one request");
    assert.equal(d.seed!.acted.budget, 1, "seed: the message is over 200,000 chars");
    assert.equal(d.lethe!.acted.budget, 1);
    for (const name of ["lethe", "seed", "claude-code"]) assert.equal(m[name]!.invariant_violations, 0, name);
    // claude-code persisted all three, the seed only the largest (then the total is under 200k).
    assert.ok(m["claude-code"]!.input_tokens_total < m.seed!.input_tokens_total);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
