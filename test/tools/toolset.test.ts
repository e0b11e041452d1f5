// The toolset: definitions for the model, runToolCall's validation and error handling, and the
// small tools (todo_write, task, compact, recall).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { TOOL_NAMES, createToolset, runToolCall, toolDefinitions } from "../../src/tools/index.ts";
import type { Tool } from "../../src/tools/types.ts";
import { fixture, text } from "./helpers.ts";

test("createToolset has every tool once; only/exclude choose a subset", () => {
  const names = createToolset().map((t) => t.name);
  assert.deepEqual(names, [...TOOL_NAMES]);
  assert.deepEqual(createToolset({ exclude: ["task"] }).map((t) => t.name), TOOL_NAMES.filter((n) => n !== "task"));
  assert.deepEqual(createToolset({ only: ["read_file", "grep"] }).map((t) => t.name), ["read_file", "grep"]);
  const ro = createToolset().filter((t) => t.readOnly).map((t) => t.name);
  assert.deepEqual(ro, ["read_file", "glob", "grep", "compact", "context", "recall"]);
});

test("toolDefinitions: JSON Schema objects without $schema noise", () => {
  const defs = toolDefinitions(createToolset());
  assert.equal(defs.length, TOOL_NAMES.length);
  for (const d of defs) {
    const json = JSON.stringify(d.input_schema);
    assert.equal(d.input_schema.type, "object", d.name);
    assert.equal(d.input_schema.additionalProperties, false, d.name);
    assert.ok(!json.includes("$schema"), d.name);
    assert.ok(!json.includes("9007199254740991"), `${d.name}: safe-integer bounds left in`);
    assert.ok(d.description.length > 40 && d.description.length < 800, `${d.name}: description length ${d.description.length}`);
  }
  const read = defs.find((d) => d.name === "read_file");
  assert.deepEqual(read?.input_schema.required, ["path"]);
  assert.deepEqual(Object.keys(read?.input_schema.properties as object), ["path", "offset", "limit"]);
  const grep = defs.find((d) => d.name === "grep")?.input_schema.properties as Record<string, { enum?: string[] }>;
  assert.deepEqual(grep.output_mode?.enum, ["content", "files_with_matches", "count"]);
});

test("runToolCall: unknown tools and invalid input become clear one-line errors", async () => {
  const f = fixture();
  try {
    const unknown = await f.call("read_files", { path: "x" });
    assert.equal(unknown.isError, true);
    assert.match(text(unknown), /^Unknown tool "read_files"\. Available tools: bash, read_file, write_file,/);

    const missing = await f.call("read_file", {});
    assert.equal(missing.isError, true);
    assert.equal(text(missing), "Invalid input for read_file: path: expected string, received undefined. Expected {path: string, offset?: integer, limit?: integer}.");

    const wrong = await f.call("read_file", { path: "a", limit: "ten", file_path: "a" });
    assert.match(text(wrong), /^Invalid input for read_file: limit: expected number, received string; Unrecognized key: "file_path"\./);

    const nested = await f.call("todo_write", { todos: [{ content: "x", status: "doing" }] });
    assert.match(text(nested), /todos\[0\]\.status: Invalid option: expected one of "pending"\|"in_progress"\|"completed"/);

    for (const input of [null, "a string", 42, []]) {
      const r = await f.call("glob", input);
      assert.equal(r.isError, true, String(input));
      assert.match(text(r), /^Invalid input for glob: /);
      assert.ok(!text(r).includes("\n"));
    }
  } finally {
    f.cleanup();
  }
});

test("runToolCall: a throwing tool becomes an error result; an aborted call does not run", async () => {
  let ran = 0;
  const boom: Tool<{ x: number }> = {
    name: "boom",
    description: "throws",
    schema: z.strictObject({ x: z.number() }),
    readOnly: true,
    async run() {
      ran++;
      throw new Error("kaput\nwith a second line");
    },
  };
  const ctx = { workspace: "/", readState: new Map(), todos: [] };
  const r = await runToolCall([boom], { name: "boom", input: { x: 1 } }, ctx);
  assert.deepEqual(r, { content: "boom failed: kaput with a second line", isError: true });
  const ac = new AbortController();
  ac.abort();
  const c = await runToolCall([boom], { name: "boom", input: { x: 1 } }, { ...ctx, signal: ac.signal });
  assert.equal(c.isError, true);
  assert.equal(ran, 1);
});

test("todo_write replaces the list in place and allows one in_progress item", async () => {
  const f = fixture();
  try {
    const r = await f.call("todo_write", {
      todos: [
        { content: "read the code", status: "completed" },
        { content: "write the fix", status: "in_progress" },
        { content: "run the tests", status: "pending" },
      ],
    });
    assert.equal(r.isError, undefined);
    assert.equal(text(r), "Todo list updated (1/3 completed):\n1. [x] read the code\n2. [>] write the fix\n3. [ ] run the tests");
    assert.equal(f.ctx.todos.length, 3);
    assert.deepEqual(f.ctx.todos[1], { content: "write the fix", status: "in_progress" });

    const two = await f.call("todo_write", {
      todos: [
        { content: "a", status: "in_progress" },
        { content: "b", status: "in_progress" },
      ],
    });
    assert.equal(two.isError, true);
    assert.match(text(two), /2 items are in_progress/);
    assert.equal(f.ctx.todos.length, 3, "list unchanged");

    await f.call("todo_write", { todos: [] });
    assert.equal(f.ctx.todos.length, 0);
  } finally {
    f.cleanup();
  }
});

test("task runs the host's subagent and returns only its final text", async () => {
  const f = fixture();
  try {
    const none = await f.call("task", { prompt: "look around" });
    assert.equal(none.isError, true);
    assert.match(text(none), /subagents are not available/);

    const seen: unknown[] = [];
    const ac = new AbortController();
    const r = await f.call("task", { prompt: "find the bug", description: "bug hunt" }, {
      signal: ac.signal,
      runSubagent: async (prompt, opts) => {
        seen.push(prompt, opts.description, opts.signal === ac.signal);
        return "The bug is in parse().";
      },
    });
    assert.deepEqual(r, { content: "The bug is in parse()." });
    assert.deepEqual(seen, ["find the bug", "bug hunt", true]);

    const failing = await f.call("task", { prompt: "x" }, {
      runSubagent: async () => {
        throw new Error("subagent crashed");
      },
    });
    assert.deepEqual(failing, { content: "task failed: subagent crashed", isError: true });
  } finally {
    f.cleanup();
  }
});

test("compact asks the loop to compact, with the focus", async () => {
  const f = fixture();
  try {
    assert.deepEqual(await f.call("compact", { focus: "the parser bug" }), {
      content: "Compaction requested; it runs after this batch of tool results.",
      compact: { focus: "the parser bug" },
    });
    assert.deepEqual((await f.call("compact", {})).compact, {});
  } finally {
    f.cleanup();
  }
});

test("recall reads the session archive in bounded slices", async () => {
  const f = fixture();
  try {
    assert.match(text(await f.call("recall", { query: "x" })), /no session archive/);
    const session = join(f.ws, ".lethe", "sessions", "s1");
    mkdirSync(join(session, "tool-results"), { recursive: true });
    writeFileSync(join(session, "tool-results", "toolu_1.txt"), `${"filler ".repeat(3_000)}THE-NEEDLE ${"more ".repeat(3_000)}`);
    const ctx = { sessionDir: session };
    const hit = await f.call("recall", { query: "the-needle" }, ctx);
    assert.equal(hit.isError, undefined, text(hit));
    assert.match(text(hit), /toolu_1/);
    const slice = await f.call("recall", { id: "toolu_1", offset: 21_000, limit: 100 }, ctx);
    assert.match(text(slice), /THE-NEEDLE/);
    const whole = await f.call("recall", { id: "toolu_1" }, ctx);
    assert.ok(text(whole).length < 8_500, `${text(whole).length} chars`);
    assert.match(text(whole), /\[more: recall id "toolu_1" offset 8000/);
    const bad = await f.call("recall", { id: "nope" }, ctx);
    assert.equal(bad.isError, true);
    assert.match(text(bad), /^recall: nothing with id "nope"/);
  } finally {
    f.cleanup();
  }
});
