// Run time, beside the type test: every block kind of @anthropic-ai/sdk 1.x's MessageParam goes
// through the engine as it came (documents, search results, server tools and their results, a
// tool result holding documents and search results), and what comes back is the SDK's type.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createEngine } from "../../src/index.ts";
import { validate } from "../../src/messages/invariants.ts";
import { everyBlock } from "./anthropic-loop.ts";

test("every MessageParam block kind passes through beforeRequest unchanged, counted, and valid", async () => {
  const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 8_000 });
  const ready = await engine.beforeRequest(structuredClone(everyBlock));
  assert.deepEqual(ready.history, everyBlock);
  assert.ok(ready.tokens > 50, `counted (${ready.tokens} tokens)`);
  assert.deepEqual(validate(ready.history as never), []);
});
