import { test } from "node:test";
import assert from "node:assert/strict";
import { createTokenCounter, IMAGE_TOKENS } from "../../src/tokens/count.ts";
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
