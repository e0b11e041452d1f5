// After a reply, the placeholders of the results it saw are made ahead (src/compaction/layers/
// micro-ahead.ts): the request that clears them swaps them in, and clears exactly what it would
// have cleared making them itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import { microAhead } from "../../src/compaction/layers/micro-ahead.ts";
import { micro } from "../../src/compaction/layers/micro.ts";
import { isClearedPlaceholder } from "../../src/compaction/layers/markers.ts";
import type { Message, ToolResultBlock, ToolUseBlock } from "../../src/messages/types.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { estimateTokens } from "../../src/tokens/estimate.ts";
import { bashSession, context } from "../support/build.ts";

/** A context whose counter records each placeholder it counts. */
function counting(archived: boolean) {
  const counted: string[] = [];
  const ctx = { ...context(), archived, placeholders: new WeakMap<ToolResultBlock, { use: ToolUseBlock; block: ToolResultBlock }>(), tokens: createTokenCounter((t) => (isClearedPlaceholder(t) && counted.push(t), estimateTokens(t))) };
  return { ctx, counted };
}

test("made after each reply, the placeholders are what micro sends: the request that clears counts none of them, and clears what one making its own clears", () => {
  const full = bashSession(14, 20_000);
  const { ctx, counted } = counting(true);
  // The session as it forms: after each request, the reply (the next call) is observed.
  let cleared = 0;
  for (let n = 3; n <= full.length; n += 2) {
    const h = full.slice(0, n);
    const before = counted.length;
    const r = micro(h, ctx);
    const alone = micro(h, { ...context(), archived: true });
    assert.equal(JSON.stringify(r.history), JSON.stringify(alone.history));
    assert.deepEqual(r.event, alone.event);
    if (r.event) {
      cleared += r.event.cleared.length;
      assert.equal(counted.length, before, "no placeholder counted by the request that clears");
    }
    if (n < full.length) microAhead([...h, full[n]!], ctx);
  }
  assert.ok(cleared >= 5, `it cleared (${cleared})`);
});

test("a placeholder made ahead is not taken for another call, and none is made when clearing writes a file", () => {
  const full = bashSession(10, 20_000);
  const h = full.slice(0, full.length - 1);
  const { ctx } = counting(true);
  assert.ok(microAhead([...h, full[full.length - 1]!], ctx) >= 1, "made ahead");
  // The host rewrote one call (another command, a new object): its result's placeholder is made anew.
  const edited = full.slice();
  const use = (edited[3]!.content as ToolUseBlock[])[0]!;
  edited[3] = { role: "assistant", content: [{ ...use, input: { command: "cat other.txt" } }] };
  const madeAll = (hist: Message[]) => {
    for (let k = 1; k < hist.length; k += 2) microAhead(hist.slice(0, k + 1), ctx);
  };
  madeAll(full);
  const r = micro(edited, ctx);
  const alone = micro(edited, { ...context(), archived: true });
  assert.equal(JSON.stringify(r.history), JSON.stringify(alone.history));
  assert.match(JSON.stringify(r.history[4]), /cat other\.txt/);
  // Not archived and not moved by budget: clearing writes the original first, so nothing is made ahead.
  const saving = counting(false);
  assert.equal(microAhead(full, saving.ctx), 0);
  // Micro off, or no engine's memo: nothing.
  assert.equal(microAhead(full, { ...context({ config: { micro: { enabled: false } } }), archived: true, placeholders: new WeakMap() }), 0);
  assert.equal(microAhead(full, { ...context(), archived: true }), 0);
});
