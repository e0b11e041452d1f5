// Subagents (src/agent/subagent.ts), run by the real loop through the real SDK client against
// the fake Anthropic server: their own engine and transcript, what they are given, what comes
// back (the final text, how the run ended), and failures.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { runAgent } from "../../src/agent/loop.ts";
import { type SubagentParent, createSubagentRunner } from "../../src/agent/subagent.ts";
import type { AgentEvent, AgentOptions, CompactionRecord, SubagentEngineArgs, SubagentOptions } from "../../src/agent/types.ts";
import { createEngine } from "../../src/engine/index.ts";
import { ModelError } from "../../src/model/types.ts";
import { loadTranscript } from "../../src/session/transcript.ts";
import { createToolset } from "../../src/tools/index.ts";
import type { ToolContext } from "../../src/tools/types.ts";
import { type E2E, setupE2E } from "../support/e2e.ts";
import type { Step } from "../support/fakes/common.ts";

const MODEL = "claude-sonnet-4-6";

const isSub = (body: any) => JSON.stringify(body.system ?? "").includes("SUBAGENT");
/** The text of a request's first user message (the subagent's prompt). */
const promptOf = (body: any) => JSON.stringify(body.messages[0]?.content ?? "");

/** A runner over `e` with the real loop (recording the options it gets) and a real engine per subagent. */
function runnerFor(e: E2E, extra: { opts?: Partial<SubagentOptions>; parent?: Partial<SubagentParent> } = {}) {
  const events: AgentEvent[] = [];
  const records: CompactionRecord[] = [];
  const engines: SubagentEngineArgs[] = [];
  const runs: AgentOptions[] = [];
  const runner = createSubagentRunner(
    {
      sessionDir: e.sessionDir,
      toolset: createToolset(),
      system: "SUBAGENT",
      createEngine: (args) => {
        engines.push(args);
        return createEngine({ contextWindow: 200_000, maxOutputTokens: 8_000, workspace: e.dir, ...(args.sessionDir ? { sessionDir: args.sessionDir } : {}), ...(args.transcript ? { transcript: args.transcript } : {}) });
      },
      ...extra.opts,
    },
    {
      run: (history, prompt, opts) => {
        runs.push(opts);
        return runAgent(history, prompt, opts);
      },
      client: e.client,
      model: () => MODEL,
      maxOutputTokens: 2_000,
      retry: { sleep: async () => {} },
      workspace: e.dir,
      parentTranscript: e.transcript,
      onEvent: (x) => events.push(x),
      onCompaction: (r) => records.push(r),
      ...extra.parent,
    },
  );
  return { runner, events, records, engines, runs };
}

test("a subagent runs on its own engine and transcript under <session>/subagents/<id>/, with the tools minus task, and returns only its final text", async () => {
  const e = await setupE2E({ provider: "anthropic", fake: { script: (body: any): Step => ({ text: isSub(body) ? "  sub: the answer is 42 \n" : "parent?" }) }, engine: { contextWindow: 200_000, maxOutputTokens: 8_000 } });
  try {
    let model = MODEL;
    const r = runnerFor(e, { parent: { model: () => model } });
    const text = await r.runner("find the answer", { description: "find it" });
    assert.equal(text, "sub: the answer is 42");

    const start = r.events[0]!;
    assert.ok(start.type === "subagent" && start.phase === "start" && start.description === "find it");
    const id = start.id;
    const dir = join(e.sessionDir, "subagents", id);
    assert.equal(start.transcript, join(dir, "transcript.jsonl"));
    assert.ok(existsSync(join(dir, "tool-results")));
    const end = r.events.at(-1)!;
    assert.ok(end.type === "subagent" && end.phase === "end" && end.id === id);
    // Everything in between is the subagent's own, relayed under its id.
    const inner = r.events.slice(1, -1);
    assert.ok(inner.length > 0 && inner.every((x) => x.type === "subagent_event" && x.id === id));
    assert.ok(inner.some((x) => x.type === "subagent_event" && x.event.type === "response"));

    // Its engine was built for its folder and transcript.
    assert.equal(r.engines.length, 1);
    assert.equal(r.engines[0]!.sessionDir, dir);
    assert.equal(r.engines[0]!.transcript?.path, start.transcript);
    // Its transcript: a header naming the parent session, then its own messages.
    const t = loadTranscript(start.transcript!);
    assert.equal(t.header?.id, id);
    assert.equal(t.header?.parent, basename(e.sessionDir));
    assert.equal(t.header?.description, "find it");
    assert.equal(t.header?.model, MODEL);
    assert.deepEqual(t.entries.filter((x) => x.type === "message").map((x) => x.type === "message" && x.message.role), ["user", "assistant"]);
    // The parent's transcript got none of it.
    assert.equal(loadTranscript(e.transcriptPath).entries.filter((x) => x.type === "message").length, 0);

    // What the model was sent: the subagent's system prompt, tools without task, the parent's output limit.
    const body = e.fake.requests[0];
    assert.ok(isSub(body));
    assert.equal(body.max_tokens, 2_000);
    const names = body.tools.map((x: { name: string }) => x.name);
    assert.ok(names.includes("bash") && names.includes("read_file"));
    assert.ok(!names.includes("task"));
    // Its loop: a fresh tool context in its own folder, the default turn limit.
    const ctx = r.runs[0]!.toolContext!;
    assert.equal(ctx.workspace, e.dir);
    assert.equal(ctx.sessionDir, dir);
    assert.equal(ctx.readState.size, 0);
    assert.equal(r.runs[0]!.maxTurns, 50);

    // The next subagent: a new id, folder and engine, on the parent's model of the moment.
    model = "claude-opus-4-1";
    await r.runner("again", {});
    assert.equal(r.engines.length, 2);
    assert.notEqual(r.engines[1]!.sessionDir, dir);
    assert.equal(e.fake.requests[1].model, "claude-opus-4-1");
  } finally {
    await e.close();
  }
});

test("subagent ids count per runner: two runners in one process both start at agent-1", async () => {
  const e = await setupE2E({ provider: "anthropic", fake: { script: [{ text: "ok" }] }, engine: { contextWindow: 200_000, maxOutputTokens: 8_000 } });
  try {
    const ids = (events: AgentEvent[]) => events.flatMap((x) => (x.type === "subagent" && x.phase === "start" ? [x.id] : []));
    const a = runnerFor(e);
    const b = runnerFor(e);
    await a.runner("one", {});
    await a.runner("two", {});
    await b.runner("three", {});
    const [a1, a2] = ids(a.events);
    const [b1] = ids(b.events);
    assert.match(a1!, /^agent-1-[0-9a-f]{6}$/);
    assert.match(a2!, /^agent-2-[0-9a-f]{6}$/);
    assert.match(b1!, /^agent-1-[0-9a-f]{6}$/);
    assert.notEqual(a1, b1);
  } finally {
    await e.close();
  }
});

test("how the subagent's run ended is in its text: the turn limit, the output limit; an interrupted one throws aborted; the end event comes every time", async () => {
  const script = (body: any): Step => {
    if (promptOf(body).includes("LIMIT")) return { toolUses: [{ name: "glob", input: { pattern: "*.none" } }] };
    if (promptOf(body).includes("CUT")) return { text: "cut ", stopReason: "max_tokens" };
    return { text: "never asked" };
  };
  const e = await setupE2E({ provider: "anthropic", fake: { script }, engine: { contextWindow: 200_000, maxOutputTokens: 8_000 } });
  try {
    const limited = runnerFor(e, { opts: { maxTurns: 2 } });
    assert.equal(await limited.runner("LIMIT", {}), "(the subagent finished without a final message)\n\n[lethe] The subagent stopped after 2 turns (its turn limit) before finishing.");

    const cut = runnerFor(e);
    // Three continuations (the loop's default), then the run stops with everything it wrote.
    assert.equal(await cut.runner("CUT", {}), "cut cut cut cut\n\n[lethe] The subagent's final reply was cut off by the output token limit.");

    const stopped = runnerFor(e);
    const before = e.fake.requests.length;
    await assert.rejects(stopped.runner("anything", { signal: AbortSignal.abort() }), (err: unknown) => err instanceof ModelError && err.kind === "aborted");
    assert.equal(e.fake.requests.length, before, "nothing was sent");
    for (const r of [limited, cut, stopped]) {
      const phases = r.events.flatMap((x) => (x.type === "subagent" ? [x.phase] : []));
      assert.deepEqual(phases, ["start", "end"]);
    }
  } finally {
    await e.close();
  }
});

test("a subagent is held to its parent's read rules, permission prompt and passEnv", async () => {
  const script = (body: any): Step =>
    body.messages.length === 1
      ? { toolUses: [{ name: "read_file", input: { path: "secret.txt" } }, { name: "write_file", input: { path: "out.txt", content: "x" } }] }
      : { text: "done" };
  const e = await setupE2E({ provider: "anthropic", fake: { script }, engine: { contextWindow: 200_000, maxOutputTokens: 8_000 } });
  try {
    writeFileSync(join(e.dir, "secret.txt"), "the secret");
    const asked: string[] = [];
    const r = runnerFor(e, {
      parent: {
        readDenied: (abs) => (abs.endsWith("secret.txt") ? "secret.txt is off limits (rule)" : undefined),
        askPermission: async (req) => {
          asked.push(req.tool);
          return false;
        },
        passEnv: ["MY_TOKEN"],
      },
    });
    assert.equal(await r.runner("look around", {}), "done");
    const results = JSON.stringify(e.fake.requests[1].messages.at(-1));
    assert.match(results, /off limits/);
    assert.doesNotMatch(results, /the secret/);
    assert.deepEqual(asked, ["write_file"]);
    assert.ok(!existsSync(join(e.dir, "out.txt")));
    assert.deepEqual(r.runs[0]!.toolContext!.passEnv, ["MY_TOKEN"]);
  } finally {
    await e.close();
  }
});

test("a subagent that fails surfaces in the parent as the task tool's error result, and the parent goes on", async () => {
  const bad: Step = { fault: "status", status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "the subagent's request is malformed" } } };
  const script = (body: any): Step => {
    if (isSub(body)) return bad;
    return body.messages.length === 1 ? { toolUses: [{ name: "task", input: { prompt: "do it", description: "doomed" } }] } : { text: "parent carries on" };
  };
  const events: AgentEvent[] = [];
  const e = await setupE2E({ provider: "anthropic", fake: { script }, engine: { contextWindow: 200_000, maxOutputTokens: 8_000 } });
  try {
    const toolset = createToolset();
    const ctx: ToolContext = { workspace: e.dir, readState: new Map(), todos: [] };
    const r = await runAgent([], "delegate", {
      engine: e.engine, client: e.client, model: MODEL, toolset, toolContext: ctx, transcript: e.transcript, maxOutputTokens: 2_000, onEvent: (x) => events.push(x),
      subagents: { sessionDir: e.sessionDir, toolset, system: "SUBAGENT", createEngine: () => createEngine({ contextWindow: 200_000, maxOutputTokens: 8_000, workspace: e.dir }) },
    });
    assert.equal(r.text, "parent carries on");
    const result = (r.history[2]!.content as { type: string; content: string; is_error?: boolean }[])[0]!;
    assert.equal(result.type, "tool_result");
    assert.equal(result.is_error, true);
    assert.match(result.content, /^task failed: .*malformed/);
    assert.deepEqual(events.flatMap((x) => (x.type === "subagent" ? [x.phase] : [])), ["start", "end"]);
  } finally {
    await e.close();
  }
});
