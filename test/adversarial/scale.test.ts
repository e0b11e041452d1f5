// Issue 9, hangs: repair used to be quadratic (40k messages sharing one tool_use id: 85 s; 100k
// same-role messages: 25 s). The timings are bench:repair's job; this test only guards against a
// hang (a quadratic repair takes minutes here) and checks the result is right.
import { test } from "node:test";
import assert from "node:assert/strict";
import { repair } from "../../src/messages/repair.ts";
import { validate } from "../../src/messages/validate.ts";
import type { Message } from "../../src/messages/types.ts";

const GUARD = { timeout: 60_000 };

test("100k messages sharing one tool_use id: repaired, every id unique and answered once", GUARD, () => {
  const h: Message[] = [{ role: "user", content: [{ type: "text", text: "go" }] }];
  for (let i = 0; h.length < 100_000; i++) {
    h.push({ role: "assistant", content: [{ type: "tool_use", id: "toolu_same", name: "bash", input: { command: `echo ${i}` } }] });
    h.push({ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_same", content: `out ${i}` }] });
  }
  const r = repair(h);
  assert.deepEqual(validate(r.history), []);
  const ids = r.history.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id);
  assert.equal(new Set(ids).size, ids.length);
  // Each result still follows its own call: the 1000th output answers the 1000th command.
  assert.match(JSON.stringify(r.history[2000]), /out 999/);
  assert.match(JSON.stringify(r.history[1999]), /echo 999/);
});

test("100k same-role messages: merged into one, one fix for the run, nothing lost", GUARD, () => {
  const h: Message[] = [];
  for (let i = 0; i < 100_000; i++) h.push({ role: "user", content: [{ type: "text", text: `line ${i}` }] });
  const r = repair(h);
  assert.equal(r.history.length, 1);
  assert.equal((r.history[0]!.content as unknown[]).length, 100_000);
  assert.equal(r.fixes.length, 1);
  assert.match(r.fixes[0]!.message, /merged user messages 1–99999/);
});
