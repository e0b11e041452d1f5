// Issue 9, input: the public API fuzzed with arbitrary JSON-like values, not only well-formed
// histories. Every call returns a valid result or throws LetheInputError (one line, naming where);
// nothing else escapes, nothing hangs (each property is bounded by the test's timeout).
import { test } from "node:test";
import type { Message } from "../../src/messages/types.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { createEngine } from "../../src/engine/index.ts";
import { LetheInputError } from "../../src/messages/input.ts";
import { fromOpenAI, toOpenAI } from "../../src/messages/openai.ts";
import { repair, validate } from "../../src/messages/invariants.ts";

const RUNS = 2_500; // × 4 properties = 10,000 cases
const GUARD = { timeout: 120_000 };

const junk = fc.oneof(fc.constant(null), fc.constant(undefined), fc.integer(), fc.double(), fc.boolean(), fc.string({ maxLength: 20 }), fc.array(fc.integer(), { maxLength: 3 }), fc.object({ maxDepth: 2 }));
const blockLike = fc.oneof(
  junk,
  fc.record(
    {
      type: fc.oneof(fc.constantFrom("text", "tool_use", "tool_result", "image", "thinking", "redacted_thinking", "future_kind"), junk),
      text: fc.oneof(fc.string({ maxLength: 50 }), junk),
      id: fc.oneof(fc.constantFrom("t1", "t2", "t1"), junk),
      name: fc.oneof(fc.constant("bash"), junk),
      input: fc.oneof(fc.constant({ command: "ls" }), junk),
      tool_use_id: fc.oneof(fc.constantFrom("t1", "t2", "t3"), junk),
      content: fc.oneof(fc.string({ maxLength: 50 }), fc.array(fc.oneof(junk, fc.record({ type: fc.constant("text"), text: fc.oneof(fc.string(), junk) })), { maxLength: 3 }), junk),
      source: fc.oneof(fc.constant({ type: "base64", media_type: "image/png", data: "AA==" }), junk),
      thinking: fc.oneof(fc.string({ maxLength: 20 }), junk),
      data: fc.oneof(fc.string({ maxLength: 20 }), junk),
    },
    { requiredKeys: ["type"] },
  ),
);
const messageLike = fc.oneof(
  { weight: 1, arbitrary: junk },
  { weight: 6, arbitrary: fc.record({ role: fc.oneof(fc.constantFrom("user", "assistant", "system"), junk), content: fc.oneof(fc.string({ maxLength: 40 }), fc.array(blockLike, { maxLength: 4 }), junk) }) },
);
const historyLike = fc.oneof({ weight: 1, arbitrary: junk }, { weight: 8, arbitrary: fc.array(messageLike, { maxLength: 12 }) });

/** Runs `fn`; only a LetheInputError with a one-line message may come out. */
function guarded(fn: () => unknown): unknown {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof LetheInputError)) throw new Error(`not a LetheInputError: ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`);
    assert.ok(!e.message.includes("\n"), e.message);
    return undefined;
  }
}

test("repair and validate: a valid history out, or LetheInputError", GUARD, () => {
  fc.assert(
    fc.property(historyLike, (h) => {
      const r = guarded(() => repair(h as never)) as ReturnType<typeof repair> | undefined;
      if (r) assert.deepEqual(validate(r.history), []);
      guarded(() => validate(h as never));
    }),
    { numRuns: RUNS },
  );
});

test("engine.prepare: a valid history out, or LetheInputError", GUARD, () => {
  const engine = createEngine({ contextWindow: 8_000, maxOutputTokens: 1_000 });
  fc.assert(
    fc.property(historyLike, (h) => {
      const r = guarded(() => engine.prepare(h as never)) as { history: Message[] } | undefined;
      if (r) assert.deepEqual(validate(r.history), []);
    }),
    { numRuns: RUNS },
  );
});

test("engine.observe and createEngine: arbitrary arguments never throw anything but LetheInputError", GUARD, () => {
  const engine = createEngine({ contextWindow: 8_000, maxOutputTokens: 1_000 });
  fc.assert(
    fc.property(historyLike, messageLike, fc.oneof(junk, fc.record({ input_tokens: fc.integer(), output_tokens: fc.integer() })), fc.anything(), (sent, reply, usage, opts) => {
      guarded(() => engine.observe(sent as never, reply as never, usage as never));
      guarded(() => createEngine(opts as never));
    }),
    { numRuns: RUNS },
  );
});

test("toOpenAI / fromOpenAI: converted, or LetheInputError", GUARD, () => {
  fc.assert(
    fc.property(historyLike, fc.oneof(junk, fc.array(fc.oneof(junk, fc.record({ role: fc.oneof(fc.constantFrom("user", "assistant", "tool", "system"), junk), content: fc.oneof(fc.string(), junk), tool_call_id: fc.oneof(fc.string(), junk), tool_calls: fc.oneof(junk, fc.array(junk)) })), { maxLength: 6 })), (h, oa) => {
      guarded(() => toOpenAI(h as never));
      guarded(() => fromOpenAI(oa as never));
    }),
    { numRuns: RUNS },
  );
});
