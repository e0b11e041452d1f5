// What arrives is read once, when it arrives (src/compaction/state/prime.ts): the lines a snip's
// work record and file ledger will carry are counted as their calls are answered, so the snip that
// carries them renders records of lines already counted.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { indexNewMessages } from "../../src/compaction/state/prime.ts";
import { commandOutcomes, outcomeOf } from "../../src/compaction/state/work.ts";
import { LEDGER_OPEN, WORK_OPEN } from "../../src/compaction/state/tags.ts";
import { snip } from "../../src/compaction/layers/snip.ts";
import { DEFAULT_CONFIG } from "../../src/compaction/config/config.ts";
import { createTokenCounter, type TokenCounter } from "../../src/tokens/count.ts";
import { createMemoryStore } from "../../src/session/tool-results.ts";
import type { LayerContext } from "../../src/compaction/types.ts";
import type { Message, ToolResultBlock } from "../../src/messages/types.ts";

const bash = (id: string, command: string): Message => ({ role: "assistant", content: [{ type: "text", text: `Running ${id}.` }, { type: "tool_use", id, name: "bash", input: { command } }] });
const read = (id: string, path: string): Message => ({ role: "assistant", content: [{ type: "tool_use", id, name: "read_file", input: { path } }] });
const answer = (id: string, output: string, isError = false): Message => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: output, ...(isError ? { is_error: true } : {}) }] });

/** The engine's counter, with every primed line recorded. */
function recording(): { counter: TokenCounter; primed: Set<string> } {
  const counter = createTokenCounter(undefined, { lineCounted: [LEDGER_OPEN, WORK_OPEN] });
  const primed = new Set<string>();
  const line = counter.recordLine!;
  return { counter: { ...counter, recordLine: (l, last) => (primed.add(l), line(l, last)) }, primed };
}

/** A session of shell commands (some failing) and file reads, as turns arrive. */
function session(steps: number, seed: number): Message[] {
  const h: Message[] = [{ role: "user", content: "Task: make the tests pass." }];
  for (let i = 0; i < steps; i++) {
    const id = `t${i}`;
    const kind = (i * 7 + seed) % 4;
    if (kind === 0) h.push(read(id, `src/mod${(i + seed) % 9}.py`), answer(id, `def f${i}():\n    return ${i}\n${"# pad\n".repeat(400)}`));
    else if (kind === 1) h.push(bash(id, `python -m pytest tests/test_${i}.py -x`), answer(id, `E   AssertionError: expected ${i}\nFAILED tests/test_${i}.py\n${"x".repeat(2_000)}`, true));
    else h.push(bash(id, `grep -rn needle${i} src/ && cat src/mod${i % 5}.py`), answer(id, `src/mod${i % 5}.py:1: needle\n${"y".repeat(2_000)}\nexit code: 0`));
  }
  return h;
}

const ctx = (tokens: TokenCounter): LayerContext => ({ config: DEFAULT_CONFIG, window: { contextWindow: 32_000, maxOutputTokens: 8_000 }, tokens, fixedTokens: 0, archivePath: "/tmp/t.jsonl", store: createMemoryStore(), now: 0 });

test("every command line and path line a snip carries in its work record and ledger was counted when its call was answered", () => {
  fc.assert(
    fc.property(fc.integer({ min: 40, max: 70 }), fc.integer({ min: 0, max: 3 }), (steps, seed) => {
      const { counter, primed } = recording();
      const h = session(steps, seed);
      const seen = new WeakSet<Message>();
      // As the engine does: a turn at a time.
      for (let n = 1; n <= h.length; n++) indexNewMessages(h.slice(0, n), seen, counter);
      const out = snip(h, ctx(counter));
      assert.ok(out.event, "the long history is snipped");
      const carried = out.history[out.event.from - 1]!.content as { type: string; text?: string }[];
      const records = carried.filter((b) => b.type === "text" && (b.text!.startsWith(WORK_OPEN) || b.text!.startsWith(LEDGER_OPEN))).map((b) => b.text!);
      assert.equal(records.length, 2, "a work record and a ledger");
      const lines = records.flatMap((r) => r.split("\n")).filter((l) => /^(?:\$ |read: |modified: )/.test(l));
      assert.ok(lines.length > 10);
      for (const l of lines) assert.ok(primed.has(l), `not counted ahead: ${l}`);
      // Its count is the one a counter that primed nothing gives.
      const cold = createTokenCounter(undefined, { lineCounted: [LEDGER_OPEN, WORK_OPEN] });
      for (const r of records) assert.equal(counter.text(r), cold.text(r));
    }),
    { numRuns: 12 },
  );
});

test("indexNewMessages reads only messages it has not seen, and without a priming counter only indexes", () => {
  const h = session(12, 1);
  const seen = new WeakSet<Message>();
  indexNewMessages(h, seen);
  assert.ok(h.every((m) => seen.has(m)));
  const { counter, primed } = recording();
  indexNewMessages(h, seen, counter);
  assert.equal(primed.size, 0, "nothing new, nothing counted");
  const next = [...h, bash("n1", "make build"), answer("n1", "ok\nexit code: 0")];
  indexNewMessages(next, seen, counter);
  assert.deepEqual([...primed], ["$ make build  -> ok"]);
});

test("a command's outcome, read once per result, is what commandOutcomes reads; the same result under another command is read again", () => {
  const h = session(20, 2);
  const results = h.flatMap((m) => (Array.isArray(m.content) ? m.content.filter((b): b is ToolResultBlock => b.type === "tool_result") : []));
  const outs = commandOutcomes(h);
  assert.deepEqual(commandOutcomes(h), outs);
  assert.ok(outs.some((o) => o.exit === "error" && o.error?.startsWith("E   AssertionError")));
  const r = results.find((x) => x.is_error)!;
  const first = outcomeOf("python -m pytest -x", r);
  assert.equal(first?.command, "python -m pytest -x");
  assert.equal(outcomeOf("make check", r)?.command, "make check");
  assert.equal(outcomeOf("   ", r), null, "no command line to keep");
});

test("a result too long to keep is not read as it arrives (budget moves it to disk first); shorter ones are", () => {
  const { counter, primed } = recording();
  const seen = new WeakSet<Message>();
  const huge = `${"log line\n".repeat(200_000)}exit code: 1`;
  const h = [{ role: "user", content: "go" } as Message, bash("big", "make all"), answer("big", huge), bash("small", "make test"), answer("small", "ok\nexit code: 0")];
  indexNewMessages(h, seen, counter);
  assert.deepEqual([...primed], ["$ make test  -> ok"]);
  // The snip still reads the long one's outcome from what it then holds.
  assert.deepEqual(commandOutcomes(h).map((o) => [o.command, o.exit]), [["make all", "1"], ["make test", "0"]]);
});
