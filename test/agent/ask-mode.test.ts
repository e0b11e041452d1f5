// Auto-compact "ask": asked once when the threshold is crossed; a "no" keeps the session going
// without compacting (and without asking at every request) until the window is really full; then
// asked again, and a second "no" ends the turn with a message that claims no compaction.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { type AgentEvent, runAgent } from "../../src/agent/loop.ts";
import type { Tool, ToolContext } from "../../src/tools/types.ts";
import { bigOutput, setupE2E } from "../support/e2e.ts";
import type { Step } from "../support/fakes/common.ts";

test("ask mode: one question per crossing; 'no' goes on uncompacted until the window is full; the final error does not claim a compaction", async () => {
  let n = 0;
  const big: Tool<{ tag: string }> = { name: "big", description: "prints a lot", schema: z.object({ tag: z.string() }), readOnly: true, run: async ({ tag }) => ({ content: bigOutput(tag, 500) }) };
  const e = await setupE2E({
    provider: "anthropic",
    fake: { script: (): Step => ({ toolUses: [{ name: "big", input: { tag: `t${++n}` } }] }) },
    engine: { contextWindow: 24_000, maxOutputTokens: 2_000, config: { summary: { auto: "ask", presummaryShare: 0 }, micro: { enabled: false }, snip: { enabled: false } } },
  });
  try {
    const asked: { tokens: number; full: boolean }[] = [];
    const events: AgentEvent[] = [];
    const ctx: ToolContext = { workspace: e.dir, readState: new Map(), todos: [] };
    let error: Error | undefined;
    try {
      await runAgent([], "go", {
        engine: e.engine,
        client: e.client,
        model: "claude-sonnet-4-6",
        toolset: [big as Tool],
        toolContext: ctx,
        transcript: e.transcript,
        maxOutputTokens: 2_000,
        maxTurns: 120,
        onEvent: (ev) => events.push(ev),
        onCompactSuggested: async (q) => {
          asked.push({ tokens: q.tokens, full: q.full });
          return false;
        },
      });
    } catch (err) {
      error = err as Error;
    }
    const threshold = e.engine.threshold;
    assert.equal(asked.filter((a) => !a.full).length, 1, `asked once at the crossing: ${JSON.stringify(asked)}`);
    assert.equal(asked.filter((a) => a.full).length, 1, "asked again when the window was full");
    const overRequests = events.filter((ev) => ev.type === "request" && ev.tokens > threshold).length;
    assert.ok(overRequests >= 2, `the session went on over the threshold after the 'no' (${overRequests} requests over it)`);
    assert.equal(events.filter((ev) => ev.type === "compaction" && ev.record).length, 0, "nothing was compacted");
    assert.equal(events.filter((ev) => ev.type === "compacting").length, 0, "no 'compacting' notice");
    assert.ok(error, "the turn ends once the window is full and the answer is still no");
    assert.doesNotMatch(error!.message, /after compaction/);
    assert.match(error!.message, /not compacted|no compaction/i);
  } finally {
    await e.close();
  }
});
