// Issue 24 (1), first step: OpenAI Responses items and lethe's messages, both ways. Reasoning
// items (with encrypted_content) go through the engine and come back byte-identical; calls pair
// by call_id.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createEngine } from "../../src/engine/index.ts";
import { validate } from "../../src/messages/invariants.ts";
import { fromResponses, toResponses } from "../../src/messages/responses.ts";

const reasoning = { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "I should read the file." }], encrypted_content: "gAAAAAB-opaque-ciphertext==" };
const items = [
  { role: "user", content: [{ type: "input_text", text: "What is in a.txt?" }] },
  reasoning,
  { type: "function_call", id: "fc_1", call_id: "call_1", name: "read", arguments: "{\"path\":\"a.txt\"}" },
  { type: "function_call_output", call_id: "call_1", output: "hello" },
  { role: "assistant", content: "It says hello." },
];

test("Responses items → lethe → Responses items: the same items back, the reasoning item byte-identical, calls paired by call_id", () => {
  const history = fromResponses(items);
  assert.deepEqual(history.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
  assert.deepEqual(validate(history), []);
  const back = toResponses(history);
  assert.equal(JSON.stringify(back[1]), JSON.stringify(reasoning), "verbatim");
  assert.deepEqual(back, [{ role: "user", content: [{ type: "input_text", text: "What is in a.txt?" }] }, reasoning, items[2], items[3], items[4]]);
});

test("through the engine, the reasoning item is carried unedited, and an item lethe has no block for is kept", async () => {
  const other = { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "x" } };
  const history = fromResponses([...items.slice(0, 3), other, ...items.slice(3)]);
  const ready = await createEngine({ contextWindow: 100_000, maxOutputTokens: 4_000 }).beforeRequest(history);
  const back = toResponses(ready.history);
  assert.ok(back.some((x) => JSON.stringify(x) === JSON.stringify(reasoning)));
  assert.ok(back.some((x) => JSON.stringify(x) === JSON.stringify(other)));
  assert.throws(() => fromResponses([{ role: "system", content: "x" }]), /instructions/);
});

test("an assistant message item keeps its id, and goes back as the same output message after its reasoning item (the real API needs the item that followed a reasoning item, by id)", () => {
  const output = [reasoning, { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "It says hello.", annotations: [] }] }];
  const back = toResponses([{ role: "user", content: "What is in a.txt?" }, ...fromResponses(output), { role: "user", content: "Thanks." }]);
  assert.deepEqual(back.slice(1, 3), output);
  assert.deepEqual(back.at(-1), { role: "user", content: [{ type: "input_text", text: "Thanks." }] });
});
