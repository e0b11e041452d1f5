import { test } from "node:test";
import assert from "node:assert/strict";
import { resultText, blocksOf } from "../../src/messages/blocks.ts";

test("resultText keeps strings and serialises block lists exactly", () => {
  assert.equal(resultText("abc"), "abc");
  const blocks = [{ type: "text" as const, text: "x" }];
  assert.equal(resultText(blocks), JSON.stringify(blocks));
  assert.equal(resultText(undefined), "");
});

test("blocksOf turns a string into one text block", () => {
  assert.deepEqual(blocksOf({ role: "user", content: "hi" }), [{ type: "text", text: "hi" }]);
});
