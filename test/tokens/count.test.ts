import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { createTokenCounter, IMAGE_TOKENS } from "../../src/tokens/count.ts";
import { estimateTokens, estimateUnrounded } from "../../src/tokens/estimate.ts";
import { bashSession, user } from "../support/build.ts";

test("per-block memo: a turn costs O(new messages)", () => {
  const seen: string[] = [];
  const counter = createTokenCounter((s) => { seen.push(s); return s.length; });
  const h = bashSession(50, 100);
  counter.messages(h);
  const first = seen.length;
  assert.ok(first >= h.length);
  const next = [...h, user("one more")];
  counter.messages(next);
  assert.equal(seen.length - first, 1, "only the new message's text was counted");
});

test("blocks of every kind are counted, images at a fixed cost", () => {
  const c = createTokenCounter((s) => s.length);
  assert.equal(c.block({ type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }), IMAGE_TOKENS);
  assert.ok(c.block({ type: "thinking", thinking: "abcdef", signature: "sig" }) > 6);
  assert.ok(c.block({ type: "redacted_thinking", data: "x".repeat(300) }) >= 100);
  assert.ok(c.block({ type: "tool_use", id: "a", name: "bash", input: { command: "ls -la" } }) > 10);
  assert.ok(c.block({ type: "tool_result", tool_use_id: "a", content: [{ type: "text", text: "hello" }, { type: "image", source: { type: "url", url: "u" } }] }) > IMAGE_TOKENS);
  assert.equal(c.message({ role: "user", content: "abc" }), c.message({ role: "user", content: [{ type: "text", text: "abc" }] }));
});

test("a big tool result is estimated once by content: a deserialised copy (new objects, same text) is not estimated again", () => {
  const seen: number[] = [];
  const counter = createTokenCounter((t) => (seen.push(t.length), Math.ceil(t.length / 4)));
  const big = "row of output\n".repeat(1_000);
  const block = { type: "tool_result" as const, tool_use_id: "toolu_1", content: big };
  const first = counter.block(block);
  const copy = JSON.parse(JSON.stringify(block));
  assert.equal(counter.block(copy), first);
  assert.equal(seen.filter((n) => n === big.length).length, 1, "estimated once");
  // A small one costs less to count than to look up: counted each time, as before.
  const small = { type: "tool_result" as const, tool_use_id: "toolu_2", content: "ok" };
  counter.block(small);
  counter.block({ ...small });
  assert.equal(seen.filter((n) => n === 2).length, 2);
});

// lethe's own records (the file ledger, the work record) are rendered again at every snip with a
// few lines changed: the engine's counter counts them line by line, each line memoised.
const recordLine = fc.oneof(
  fc.constantFrom("read: src/index.ts", "modified: README.md", "$ npm test  → ok", "noted: the parser drops the last line", "$ python -m pytest tests/test_io.py -x  → exit 1: AssertionError: 3 != 4"),
  // Every line of a record starts with its kind and holds no newline, and none is blank.
  fc.tuple(fc.constantFrom("$ ", "noted: ", "read: ", "modified: "), fc.string({ minLength: 1, maxLength: 80 })).map(([kind, s]) => `${kind}${s.replace(/\s+/g, " ").trim() || "x"}`),
  fc.stringMatching(/^(?:read|modified): [\w./-]{1,60}$/),
);
const record = fc.array(recordLine, { maxLength: 40 }).map((lines) => ["<lethe-work>", ...lines, "</lethe-work>"].join("\n"));

test("a record that starts with a lineCounted prefix costs the sum of its lines' unrounded estimates, rounded once; other texts, and other counters, count whole", () => {
  const c = createTokenCounter(undefined, { lineCounted: ["<lethe-work>", "<lethe-files>"] });
  fc.assert(
    fc.property(record, (text) => {
      let sum = 0;
      for (const line of text.split(/(?<=\n)/)) sum += estimateUnrounded(line);
      assert.equal(c.text(text), Math.round(sum));
      // Outside a record the same text is one estimate, and a counter of its own ignores the option.
      assert.equal(c.text(` ${text}`), estimateTokens(` ${text}`));
      const own = createTokenCounter((s) => s.length, { lineCounted: ["<lethe-work>"] });
      assert.equal(own.text(text), text.length);
      assert.equal(own.recordLine, undefined);
    }),
    { numRuns: 150 },
  );
});

test("counting a record line by line stays within a token of estimating it whole (the estimator's pieces do not span a newline but for blank lines, which a record has none of)", () => {
  const c = createTokenCounter(undefined, { lineCounted: ["<lethe-work>"] });
  fc.assert(
    fc.property(record, (text) => {
      assert.ok(Math.abs(c.text(text) - estimateTokens(text)) <= 1, `${c.text(text)} vs ${estimateTokens(text)}`);
    }),
    { numRuns: 300 },
  );
});

test("recordLine: a record costs the sum of its lines' in order, rounded once, whether they were counted ahead or not; a counter without records has no recordLine", () => {
  fc.assert(
    fc.property(record, fc.array(recordLine, { maxLength: 10 }), (text, extra) => {
      const primed = createTokenCounter(undefined, { lineCounted: ["<lethe-work>"] });
      const cold = createTokenCounter(undefined, { lineCounted: ["<lethe-work>"] });
      for (const line of [...text.split("\n"), ...extra]) primed.recordLine!(line);
      assert.equal(primed.text(text), cold.text(text));
      const lines = text.split("\n");
      let sum = 0;
      lines.forEach((l, i) => (sum += cold.recordLine!(l, i === lines.length - 1)));
      assert.equal(Math.round(sum), cold.text(text));
    }),
    { numRuns: 100 },
  );
  assert.equal(createTokenCounter().recordLine, undefined);
});

test("messages(history, from, to) is the sum over that range, and stays exact as a history is appended to, cut and replaced (the running sums of the last history)", () => {
  const pool = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? user(`message ${i} `.repeat(i + 1)) : { role: "assistant" as const, content: [{ type: "text" as const, text: `reply ${i} `.repeat(2 * i + 1) }] }));
  const naive = (c: ReturnType<typeof createTokenCounter>, h: readonly (typeof pool)[number][], from: number, to: number) => {
    let n = 0;
    for (let i = from; i < to; i++) n += c.message(h[i]!);
    return n;
  };
  // Each step: append, cut the middle (as snip does), or replace one message with a new object.
  const step = fc.oneof(
    fc.record({ op: fc.constant("append" as const), picks: fc.array(fc.nat(pool.length - 1), { minLength: 1, maxLength: 4 }) }),
    fc.record({ op: fc.constant("cut" as const), a: fc.nat(30), b: fc.nat(30) }),
    fc.record({ op: fc.constant("replace" as const), at: fc.nat(30), pick: fc.nat(pool.length - 1) }),
  );
  fc.assert(
    fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), fc.nat(40), fc.nat(40), (steps, x, y) => {
      const c = createTokenCounter();
      let h = pool.slice(0, 10);
      for (const s of steps) {
        if (s.op === "append") h = [...h, ...s.picks.map((k) => pool[k]!)];
        else if (s.op === "cut") {
          const [a, b] = [Math.min(s.a, s.b, h.length), Math.min(Math.max(s.a, s.b), h.length)];
          h = [...h.slice(0, a), ...h.slice(b)];
        } else if (s.at < h.length) h = h.map((m, i) => (i === s.at ? { ...pool[s.pick]! } : m));
        assert.equal(c.messages(h), naive(c, h, 0, h.length));
        const [from, to] = [Math.min(x, y, h.length), Math.min(Math.max(x, y), h.length)];
        assert.equal(c.messages(h, from, to), naive(c, h, from, to));
        // Out of range, fractional or not a number: read as slice() reads it (negatives as 0).
        assert.equal(c.messages(h, from + 0.5, to + 100), naive(c, h, from, h.length));
        assert.equal(c.messages(h, -3, Number.NaN), 0);
      }
    }),
    { numRuns: 200 },
  );
});
