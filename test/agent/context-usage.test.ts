// The model can see how full its context is (issue 26, item 5): the context tool answers with the
// run's own measure, threshold and window, so the model can compact at a natural break.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runAgent } from "../../src/agent/loop.ts";
import { createToolset } from "../../src/tools/index.ts";
import { contextUsageLine } from "../../src/tools/context.ts";
import { setupE2E } from "../support/e2e.ts";

test("the context tool reports the tokens the engine measures for the request, the threshold and the window", async () => {
  const e = await setupE2E({ provider: "anthropic", fake: { script: [{ toolUses: [{ name: "context", input: {} }] }, { text: "done" }] }, engine: { contextWindow: 50_000, maxOutputTokens: 4_000 } });
  try {
    const r = await runAgent([], "How full is your context?", { engine: e.engine, client: e.client, model: "claude-sonnet-4-6", toolset: createToolset(), toolContext: { workspace: e.dir, readState: new Map(), todos: [] }, maxOutputTokens: 2_000 });
    assert.equal(r.text, "done");
    const result = (r.history[2]!.content as { type: string; content: string }[])[0]!.content;
    const m = /Context: ([\d,]+) tokens of a 50,000-token window \(\d+%\)\. Auto-compact summarises the older turns past ([\d,]+) tokens/.exec(result);
    assert.ok(m, result);
    const tokens = Number(m[1]!.replace(/,/g, ""));
    assert.equal(Number(m[2]!.replace(/,/g, "")), e.engine.threshold);
    // The first request's own measure: the system prompt, the tools and the two messages so far.
    assert.ok(tokens > 500 && tokens < 5_000, `${tokens}`);
  } finally {
    await e.close();
  }
});

test("contextUsageLine says when the context is past the threshold", () => {
  assert.match(contextUsageLine({ tokens: 900, threshold: 800, contextWindow: 1_000 }), /past the auto-compact threshold \(800\)/);
  assert.match(contextUsageLine({ tokens: 400, threshold: 800, contextWindow: 1_000 }), /400 to go \(50% of the way\)/);
});
