// One assistant message's tool calls (src/agent/tool-batch.ts), with real tools run through
// runToolCall: what runs together and what alone, the order of the results, the events, the
// runTool path, and cancellation.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { type CallResult, INTERRUPTED_TEXT, NOT_RUN_TEXT, NOT_STARTED_TEXT, createToolBatchRunner } from "../../src/agent/tool-batch.ts";
import type { AgentEvent } from "../../src/agent/types.ts";
import type { ToolUseBlock } from "../../src/messages/types.ts";
import type { Tool, ToolContext } from "../../src/tools/types.ts";

const ctx = (extra: Partial<ToolContext> = {}): ToolContext => ({ workspace: process.cwd(), readState: new Map(), todos: [], ...extra });
const use = (id: string, name: string, input: unknown = {}): ToolUseBlock => ({ type: "tool_use", id, name, input });
const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** Tools that log when they start and end; `ticks` says how long each call takes. */
function probes() {
  const log: string[] = [];
  let running = 0;
  let most = 0;
  const make = (name: string, readOnly: boolean): Tool<{ tag: string; ticks: number }> => ({
    name,
    description: `probe ${name}`,
    schema: z.object({ tag: z.string(), ticks: z.number() }),
    readOnly,
    async run({ tag, ticks: n }) {
      most = Math.max(most, ++running);
      log.push(`start ${tag}`);
      await ticks(n);
      log.push(`end ${tag}`);
      running--;
      return { content: `result ${tag}` };
    },
  });
  return { log, most: () => most, tools: [make("look", true), make("change", false)] as Tool[] };
}

const contents = (results: readonly CallResult[]) => results.map((r) => r.block.content);

test("consecutive read-only calls run together, a side-effect call alone and in order; results keep the call order, one per call", async () => {
  const p = probes();
  const events: AgentEvent[] = [];
  const run = createToolBatchRunner({ toolset: p.tools, ctx: ctx(), emit: (e) => events.push(e) });
  // a is slower than b: they finish out of order, the results do not.
  const uses = [
    use("t1", "look", { tag: "a", ticks: 8 }),
    use("t2", "look", { tag: "b", ticks: 1 }),
    use("t3", "change", { tag: "c", ticks: 3 }),
    use("t4", "change", { tag: "d", ticks: 1 }),
    use("t5", "look", { tag: "e", ticks: 2 }),
  ];
  const results = await run(uses);
  assert.deepEqual(results.map((r) => r.block.tool_use_id), ["t1", "t2", "t3", "t4", "t5"]);
  assert.deepEqual(contents(results), ["result a", "result b", "result c", "result d", "result e"]);
  assert.deepEqual(p.log, ["start a", "start b", "end b", "end a", "start c", "end c", "start d", "end d", "start e", "end e"]);
  assert.equal(p.most(), 2);
  // Each call is announced, and each result reported with its call.
  assert.deepEqual(events.filter((e) => e.type === "tool").map((e) => e.type === "tool" && e.use.id), ["t1", "t2", "t3", "t4", "t5"]);
  const reported = events.flatMap((e) => (e.type === "tool_result" ? [[e.use.id, e.result.tool_use_id]] : []));
  assert.deepEqual(reported.map(([a]) => a).sort(), ["t1", "t2", "t3", "t4", "t5"]);
  assert.ok(reported.every(([a, b]) => a === b));
});

test("a call the tools reject (unknown tool, bad input) is an error result in its place; the others still run", async () => {
  const p = probes();
  const run = createToolBatchRunner({ toolset: p.tools, ctx: ctx(), emit: () => {} });
  const results = await run([use("t1", "nope"), use("t2", "change", { tag: 5 }), use("t3", "change", { tag: "x", ticks: 0 })]);
  assert.deepEqual(results.map((r) => r.block.is_error ?? false), [true, true, false]);
  assert.match(String(results[0]!.block.content), /Unknown tool "nope"/);
  assert.match(String(results[1]!.block.content), /Invalid input for change/);
  assert.equal(results[2]!.block.content, "result x");
  assert.equal(results[2]!.outcome?.content, "result x");
});

test("without a toolset, runTool runs each call in turn with the signal; a throw is an error result; with neither, a call says so", async () => {
  const controller = new AbortController();
  const log: string[] = [];
  const run = createToolBatchRunner({
    signal: controller.signal,
    emit: () => {},
    runTool: async (u, signal) => {
      assert.equal(signal, controller.signal);
      log.push(`start ${u.id}`);
      await ticks(2);
      log.push(`end ${u.id}`);
      if (u.name === "boom") throw new Error("it broke");
      return { content: `ran ${u.name}`, ...(u.name === "shrink" ? { compact: { focus: "keep it" } } : {}) };
    },
  });
  const results = await run([use("t1", "first"), use("t2", "boom"), use("t3", "shrink")]);
  // Nothing is known to be read-only here: one at a time.
  assert.deepEqual(log, ["start t1", "end t1", "start t2", "end t2", "start t3", "end t3"]);
  assert.deepEqual(contents(results), ["ran first", "Error: it broke", "ran shrink"]);
  assert.equal(results[1]!.block.is_error, true);
  assert.deepEqual(results[2]!.outcome?.compact, { focus: "keep it" });

  const none = await createToolBatchRunner({ emit: () => {} })([use("t9", "anything")]);
  assert.deepEqual(none.map((r) => [r.block.content, r.block.is_error]), [["Error: no tool runner for anything", true]]);
});

test("cancelling: the running call is answered at once as interrupted, the calls after it do not run, and every call still gets its result", { timeout: 10_000 }, async () => {
  const controller = new AbortController();
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const ran: string[] = [];
  const stuck: Tool<{ n: number }> = {
    name: "stuck",
    description: "never returns on its own",
    schema: z.object({ n: z.number() }),
    readOnly: false,
    run: async ({ n }) => {
      ran.push(`stuck ${n}`);
      started();
      return new Promise(() => {});
    },
  };
  const p = probes();
  const run = createToolBatchRunner({ toolset: [stuck as Tool, ...p.tools], ctx: ctx({ signal: controller.signal }), signal: controller.signal, emit: () => {} });
  const batch = run([use("t1", "change", { tag: "before", ticks: 0 }), use("t2", "stuck", { n: 1 }), use("t3", "look", { tag: "after", ticks: 0 }), use("t4", "stuck", { n: 2 })]);
  await running;
  controller.abort();
  const results = await batch;
  assert.deepEqual(results.map((r) => r.block.tool_use_id), ["t1", "t2", "t3", "t4"]);
  // t2 was running (it may have done something); t3 and t4 never started, and are told so.
  assert.deepEqual(contents(results), ["result before", INTERRUPTED_TEXT, NOT_STARTED_TEXT, NOT_STARTED_TEXT]);
  assert.ok(results.slice(1).every((r) => r.block.is_error === true && r.outcome === undefined));
  assert.deepEqual(ran, ["stuck 1"]);
  assert.deepEqual(p.log, ["start before", "end before"]);

  // Already cancelled: nothing runs at all.
  const again = await run([use("t5", "change", { tag: "late", ticks: 0 })]);
  assert.deepEqual(contents(again), [NOT_STARTED_TEXT]);
  assert.deepEqual(p.log, ["start before", "end before"]);
});

test("Ctrl-C while a call waits at its permission question: the model is told it was not run (not 'partial effects')", async () => {
  const controller = new AbortController();
  let asked!: () => void;
  const askedP = new Promise<void>((r) => (asked = r));
  const writer: Tool = {
    name: "writer",
    description: "asks first",
    schema: z.object({}),
    readOnly: false,
    run: async (_input, c) => {
      await c.askPermission!({ tool: "writer", summary: "write a file" } as never);
      throw new Error("never reached: the question is not answered");
    },
  };
  const base = ctx({ signal: controller.signal });
  const run = createToolBatchRunner({ toolset: [writer], ctx: { ...base, askPermission: () => (asked(), new Promise(() => {})) }, signal: controller.signal, emit: () => {} });
  const batch = run([use("w1", "writer", {})]);
  await askedP;
  controller.abort();
  const [r] = await batch;
  assert.equal(r!.block.content, NOT_RUN_TEXT);
  assert.equal(r!.block.is_error, true);
});
