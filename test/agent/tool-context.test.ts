// The tools' context of a run (src/agent/tool-context.ts): runAgent never writes into the
// caller's ToolContext; the tools get a new object with the run's signal and runSubagent, over
// the same session state (readState, todos).
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { runAgent } from "../../src/agent/loop.ts";
import { createEngine } from "../../src/engine/index.ts";
import { createToolset } from "../../src/tools/index.ts";
import type { Tool, ToolContext } from "../../src/tools/types.ts";
import { setupE2E } from "../support/e2e.ts";
import type { Step } from "../support/fakes/common.ts";

const MODEL = "claude-sonnet-4-6";

/** A tool that keeps the context it was run with, as it starts and as it ends. */
function spy() {
  const seen: { tag: string; ctx: ToolContext }[] = [];
  const tool: Tool<{ tag: string }> = {
    name: "spy",
    description: "looks at its context",
    schema: z.object({ tag: z.string() }),
    readOnly: true,
    async run({ tag }, c) {
      seen.push({ tag, ctx: c });
      c.readState.set(`/seen/${tag}`, { mtimeMs: 1, size: 2 });
      // Let a concurrent run take its turn in between.
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      seen.push({ tag, ctx: c });
      return { content: `spied ${tag}` };
    },
  };
  return { seen, tool: tool as Tool };
}

test("runAgent leaves the caller's ToolContext as it was (no signal or runSubagent written into it); the tools share its readState and todos", async () => {
  const script = (body: any): Step => {
    if (body.messages.length === 1) return { toolUses: [{ name: "spy", input: { tag: "a" } }, { name: "todo_write", input: { todos: [{ content: "write the test", status: "in_progress" }] } }] };
    return { text: "done" };
  };
  const e = await setupE2E({ provider: "anthropic", fake: { script }, engine: { contextWindow: 200_000, maxOutputTokens: 8_000 } });
  try {
    const s = spy();
    const askPermission = async () => true;
    const ctx: ToolContext = { workspace: e.dir, sessionDir: e.sessionDir, readState: new Map(), todos: [], askPermission };
    const before = { ...ctx };
    const controller = new AbortController();
    const toolset = [s.tool, ...createToolset()];
    const r = await runAgent([], "go", {
      engine: e.engine, client: e.client, model: MODEL, toolset, toolContext: ctx, transcript: e.transcript, maxOutputTokens: 2_000, signal: controller.signal,
      subagents: { sessionDir: e.sessionDir, toolset, createEngine: () => createEngine({ contextWindow: 200_000, maxOutputTokens: 8_000, workspace: e.dir }) },
    });
    assert.equal(r.text, "done");
    // The caller's object: the same keys, the same values.
    assert.deepEqual(Object.keys(ctx), Object.keys(before));
    for (const k of Object.keys(before) as (keyof ToolContext)[]) assert.equal(ctx[k], before[k], k);
    assert.ok(!("signal" in ctx) && !("runSubagent" in ctx));
    // The tool ran with a context of its own: the run's signal and subagents, the caller's session state.
    const used = s.seen[0]!.ctx;
    assert.notEqual(used, ctx);
    assert.equal(used.signal, controller.signal);
    assert.equal(typeof used.runSubagent, "function");
    assert.equal(used.readState, ctx.readState);
    assert.equal(used.todos, ctx.todos);
    assert.equal(used.workspace, e.dir);
    assert.equal(used.sessionDir, e.sessionDir);
    // What the tools recorded is in the caller's state.
    assert.ok(ctx.readState.has("/seen/a"));
    assert.deepEqual(ctx.todos, [{ content: "write the test", status: "in_progress" }]);
  } finally {
    await e.close();
  }
});

test("two runs over one ToolContext at once: each run's tools see that run's own signal", async () => {
  const script = (body: any): Step => {
    if (body.messages.length > 1) return { text: "done" };
    const tag = JSON.stringify(body.messages[0].content).includes("first") ? "one" : "two";
    return { toolUses: [{ name: "spy", input: { tag } }] };
  };
  const e = await setupE2E({ provider: "anthropic", fake: { script }, engine: { contextWindow: 200_000, maxOutputTokens: 8_000 } });
  try {
    const s = spy();
    const ctx: ToolContext = { workspace: e.dir, readState: new Map(), todos: [] };
    const one = new AbortController();
    const two = new AbortController();
    const opts = { engine: e.engine, client: e.client, model: MODEL, toolset: [s.tool], toolContext: ctx, maxOutputTokens: 2_000 };
    const results = await Promise.all([runAgent([], "first", { ...opts, signal: one.signal }), runAgent([], "second", { ...opts, signal: two.signal })]);
    assert.deepEqual(results.map((r) => r.text), ["done", "done"]);
    // Each tool call saw its own run's signal, before and after the other run's turn.
    assert.deepEqual(s.seen.map((x) => x.tag).sort(), ["one", "one", "two", "two"]);
    for (const { tag, ctx: c } of s.seen) assert.equal(c.signal, tag === "one" ? one.signal : two.signal, `the ${tag} run's tool saw another signal`);
    // Two contexts, both over the caller's state.
    const contexts = [...new Set(s.seen.map((x) => x.ctx))];
    assert.equal(contexts.length, 2);
    assert.ok(contexts.every((c) => c !== ctx && c.readState === ctx.readState && c.todos === ctx.todos));
    assert.ok(!("signal" in ctx));
  } finally {
    await e.close();
  }
});
