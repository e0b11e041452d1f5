// The agent loop (src/agent/loop.ts) against the fake servers through the real SDK clients:
// tool scheduling, the compact tool, max_tokens, cancellation, fallback, subagents.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { CONTINUE_TEXT, INTERRUPTED_TEXT, TRUNCATED_CALL_TEXT, type AgentEvent, runAgent } from "../../src/agent/loop.ts";
import { NOT_STARTED_TEXT } from "../../src/agent/tool-batch.ts";
import { createEngine } from "../../src/engine/index.ts";
import { validate } from "../../src/messages/invariants.ts";
import type { Message } from "../../src/messages/types.ts";
import { loadTranscript, resumeContext } from "../../src/session/transcript.ts";
import { createToolset } from "../../src/tools/index.ts";
import type { Tool, ToolContext } from "../../src/tools/types.ts";
import { bigOutput, setupE2E, SUMMARY_TEXT, isSummaryRequest } from "../support/e2e.ts";
import type { Step } from "../support/fakes/common.ts";

const MODEL = "claude-sonnet-4-6";

/** Tools that record when they start and finish, to see what overlapped. */
function probes() {
  const log: string[] = [];
  let running = 0;
  let maxRunning = 0;
  const make = (name: string, readOnly: boolean): Tool<{ tag: string }> => ({
    name,
    description: `probe ${name}`,
    schema: z.object({ tag: z.string() }),
    readOnly,
    async run({ tag }) {
      running++;
      maxRunning = Math.max(maxRunning, running);
      log.push(`start ${tag}`);
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      log.push(`end ${tag}`);
      running--;
      return { content: `result ${tag}` };
    },
  });
  return { log, max: () => maxRunning, tools: [make("look", true), make("change", false)] as Tool[] };
}

const ctx = (workspace: string, extra: Partial<ToolContext> = {}): ToolContext => ({ workspace, readState: new Map(), todos: [], ...extra });

test("read-only calls of one message run in parallel, the others one at a time in order; results keep the call order", async () => {
  const p = probes();
  const calls = [
    { name: "look", input: { tag: "a" } },
    { name: "look", input: { tag: "b" } },
    { name: "change", input: { tag: "c" } },
    { name: "look", input: { tag: "d" } },
    { name: "look", input: { tag: "e" } },
    { name: "change", input: { tag: "f" } },
  ];
  const e = await setupE2E({ provider: "anthropic", fake: { script: [{ toolUses: calls }, { text: "done" }] }, engine: { contextWindow: 200_000, maxOutputTokens: 8_000 } });
  try {
    const r = await runAgent([], "go", { engine: e.engine, client: e.client, model: MODEL, toolset: p.tools, toolContext: ctx(e.dir), transcript: e.transcript, maxOutputTokens: 2_000 });
    assert.equal(r.text, "done");
    // a and b overlap; c runs alone after them; d and e overlap after c; f last.
    assert.deepEqual(p.log.slice(0, 2).sort(), ["start a", "start b"]);
    const idx = (s: string) => p.log.indexOf(s);
    assert.ok(idx("start c") > idx("end a") && idx("start c") > idx("end b"));
    assert.ok(idx("end c") < idx("start d") && idx("end c") < idx("start e"));
    assert.ok(idx("start e") < idx("end d"), "d and e overlapped");
    assert.ok(idx("start f") > idx("end d") && idx("start f") > idx("end e"));
    assert.equal(p.max(), 2);
    const results = (r.history[2]!.content as { tool_use_id: string; content: string }[]).map((b) => b.content);
    assert.deepEqual(results, ["result a", "result b", "result c", "result d", "result e", "result f"]);
  } finally {
    await e.close();
  }
});

test("the compact tool: compaction (kind manual, with the focus) runs after the whole batch's results are appended", async () => {
  const steps = (body: any): Step => {
    if (isSummaryRequest(body)) return { text: SUMMARY_TEXT };
    if (/tidy up/.test(JSON.stringify(body.messages.at(-1)))) return { toolUses: [{ name: "compact", input: { focus: "Keep the totals." } }, { name: "glob", input: { pattern: "*.txt" } }] };
    return { text: "after compaction" };
  };
  const events: AgentEvent[] = [];
  const e = await setupE2E({ provider: "anthropic", fake: { script: steps }, engine: { contextWindow: 24_000, maxOutputTokens: 2_000 } });
  // Enough behind it that a summary is worth it (a compaction that would not shrink the context is skipped).
  const before: Message[] = [
    { role: "user", content: [{ type: "text", text: "print the data" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_old", name: "bash", input: { command: "cat data.txt" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_old", content: bigOutput("data", 4_000) }] },
    { role: "assistant", content: [{ type: "text", text: "printed" }] },
  ];
  try {
    const r = await runAgent(before, "tidy up", {
      engine: e.engine, client: e.client, model: MODEL, toolset: createToolset(), toolContext: ctx(e.dir), transcript: e.transcript, maxOutputTokens: 2_000,
      onEvent: (x) => events.push(x),
    });
    assert.equal(r.text, "after compaction");
    assert.deepEqual(r.compactions.map((c) => c.kind), ["manual"]);
    const summary = e.fake.requests.find(isSummaryRequest);
    const last = JSON.stringify(summary.messages.at(-1));
    // The summary request already carries both results of the batch, then the focus.
    assert.match(last, /Compaction requested/);
    assert.match(last, /No files match|\.txt/);
    assert.match(last, /Keep the totals\./);
    // The transcript: the results line comes before the manual boundary.
    const entries = loadTranscript(e.transcriptPath).entries;
    const results = entries.findIndex((x) => x.type === "message" && JSON.stringify(x).includes("tool_result"));
    const boundary = entries.findIndex((x) => x.type === "boundary" && x.kind === "manual");
    assert.ok(results >= 0 && boundary > results);
    assert.deepEqual(resumeContext(entries), r.history);
    assert.deepEqual(validate(r.history), []);
  } finally {
    await e.close();
  }
});

test("max_tokens: a tool call cut off mid-input is not run; the partial text is kept and the model continues", async () => {
  const steps: Step[] = [
    { text: "Writing the file now: ", toolUses: [{ name: "write_file", input: {}, rawArguments: '{"path": "a.txt", "content": "abc' }], stopReason: "max_tokens" },
    { text: "done, without repeating." },
  ];
  const e = await setupE2E({ provider: "anthropic", fake: { script: steps }, engine: { contextWindow: 200_000, maxOutputTokens: 8_000 } });
  try {
    const r = await runAgent([], "write a.txt", { engine: e.engine, client: e.client, model: MODEL, toolset: createToolset(), toolContext: ctx(e.dir), transcript: e.transcript, maxOutputTokens: 2_000 });
    assert.equal(r.text, "Writing the file now: done, without repeating.");
    assert.equal(r.stop, "end_turn");
    assert.ok(!existsSync(join(e.dir, "a.txt")));
    const second = JSON.stringify(e.fake.requests[1].messages);
    assert.ok(second.includes(JSON.stringify(CONTINUE_TEXT).slice(1, -1)));
    assert.ok(second.includes(JSON.stringify(TRUNCATED_CALL_TEXT).slice(1, -1)));
    assert.doesNotMatch(second, /tool_use/);
    assert.deepEqual(validate(r.history), []);
  } finally {
    await e.close();
  }
});

test("cancelling during a tool: every call gets a result, the history stays valid, and the session goes on", async () => {
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const slow: Tool<{ n: number }> = {
    name: "slow",
    description: "takes forever",
    schema: z.object({ n: z.number() }),
    readOnly: false,
    async run(_i, c) {
      started();
      await new Promise((r) => c.signal?.addEventListener("abort", r, { once: true }));
      return { content: "stopped" };
    },
  };
  const steps: Step[] = [{ toolUses: [{ name: "slow", input: { n: 1 } }, { name: "slow", input: { n: 2 } }] }, { text: "fine, moving on" }];
  const e = await setupE2E({ provider: "openai", fake: { script: steps }, engine: { contextWindow: 128_000, maxOutputTokens: 8_000 } });
  try {
    const controller = new AbortController();
    const runP = runAgent([], "do the slow thing", { engine: e.engine, client: e.client, model: "gpt-4o", toolset: [slow], toolContext: ctx(e.dir), transcript: e.transcript, maxOutputTokens: 2_000, signal: controller.signal });
    await running;
    controller.abort();
    const r = await runP;
    assert.equal(r.stop, "aborted");
    const results = r.history.at(-1)!.content as { content: string; is_error?: boolean }[];
    assert.equal(results.length, 2);
    // The first was running (it may have done something); the second never started.
    assert.deepEqual(results.map((b) => b.content), [INTERRUPTED_TEXT, NOT_STARTED_TEXT]);
    assert.deepEqual(validate(r.history), []);
    const again = await runAgent(r.history, "something else", { engine: e.engine, client: e.client, model: "gpt-4o", toolset: [slow], toolContext: ctx(e.dir), transcript: e.transcript, maxOutputTokens: 2_000 });
    assert.equal(again.text, "fine, moving on");
    assert.deepEqual(validate(again.history), []);
  } finally {
    await e.close();
  }
});

test("cancelling during the model call: aborted, nothing appended but the prompt; the next prompt joins it", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let n = 0;
  const e = await setupE2E({
    provider: "anthropic",
    fake: { script: async (): Promise<Step> => (++n === 1 ? (await gate, { text: "late" }) : { text: "on time" }) },
    engine: { contextWindow: 200_000, maxOutputTokens: 8_000 },
  });
  try {
    const controller = new AbortController();
    const runP = runAgent([], "first", { engine: e.engine, client: e.client, model: MODEL, transcript: e.transcript, maxOutputTokens: 2_000, signal: controller.signal });
    while (e.fake.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const r = await runP;
    assert.equal(r.stop, "aborted");
    assert.deepEqual(r.history.map((m: Message) => m.role), ["user"]);
    const again = await runAgent(r.history, "second", { engine: e.engine, client: e.client, model: MODEL, transcript: e.transcript, maxOutputTokens: 2_000 });
    assert.equal(again.text, "on time");
    assert.match(JSON.stringify(e.fake.requests[1].messages), /first.*second/);
    assert.deepEqual(validate(again.history), []);
  } finally {
    release();
    await e.close();
  }
});

test("fallback model: after repeated 5xx on the main model, the fallback takes over for the rest of the run", async () => {
  const events: AgentEvent[] = [];
  const e = await setupE2E({
    provider: "openai",
    fake: { script: (body: any): Step => (body.model === "main-model" ? { fault: "server_error" } : { text: `from ${body.model}` }) },
    engine: { contextWindow: 128_000, maxOutputTokens: 8_000 },
  });
  try {
    const r = await runAgent([], "hi", {
      engine: e.engine, client: e.client, model: "main-model", fallbackModel: "backup-model", fallbackAfter: 2, transcript: e.transcript, maxOutputTokens: 1_000,
      retry: { sleep: async () => {} }, onEvent: (x) => events.push(x),
    });
    assert.equal(r.text, "from backup-model");
    assert.equal(r.model, "backup-model");
    assert.deepEqual(e.fake.requests.map((b) => b.model), ["main-model", "main-model", "backup-model"]);
    const fb = events.find((x) => x.type === "fallback");
    assert.ok(fb && fb.type === "fallback" && fb.from === "main-model" && fb.to === "backup-model");
  } finally {
    await e.close();
  }
});

test("subagent: own engine, own transcript under the session folder; compactions reported to the parent as kind subagent; only the final text returns", async () => {
  let sub = 0;
  const script = (body: any): Step => {
    if (isSummaryRequest(body)) return { text: SUMMARY_TEXT };
    const system = JSON.stringify(body.system ?? "");
    if (system.includes("SUBAGENT")) {
      sub++;
      return sub <= 3 ? { toolUses: [{ name: "bash", input: { command: `seq 1 9000 | sed 's/^/sub line /'` } }] } : { text: "sub: found 27000 lines" };
    }
    return body.messages.length === 1 ? { toolUses: [{ name: "task", input: { prompt: "count the lines", description: "count" } }] } : { text: "parent: 27000 lines" };
  };
  const events: AgentEvent[] = [];
  const e = await setupE2E({ provider: "anthropic", fake: { script, contextWindow: 24_000 }, engine: { contextWindow: 24_000, maxOutputTokens: 2_000 } });
  try {
    const toolset = createToolset();
    const r = await runAgent([], "how many lines?", {
      engine: e.engine, client: e.client, model: MODEL, system: "PARENT", toolset, toolContext: ctx(e.dir, { sessionDir: e.sessionDir }), transcript: e.transcript, maxOutputTokens: 2_000,
      subagents: {
        sessionDir: e.sessionDir,
        toolset,
        system: "SUBAGENT",
        createEngine: ({ sessionDir, transcript }) => createEngine({ contextWindow: 24_000, maxOutputTokens: 2_000, ...(sessionDir ? { sessionDir } : {}), ...(transcript ? { transcript } : {}), workspace: e.dir }),
      },
      onEvent: (x) => events.push(x),
    });
    assert.equal(r.text, "parent: 27000 lines");
    const subs = r.compactions.filter((c) => c.kind === "subagent");
    assert.ok(subs.length >= 1 && subs.every((c) => c.subagent_kind === "budget"), JSON.stringify(r.compactions));
    const taskResult = JSON.stringify(r.history[2]);
    assert.match(taskResult, /sub: found 27000 lines/);
    assert.doesNotMatch(taskResult, /sub line/);
    // The subagent's requests never carried the task tool (no nesting).
    const subRequests = e.fake.requests.filter((b) => JSON.stringify(b.system ?? "").includes("SUBAGENT"));
    assert.ok(subRequests.every((b) => !b.tools.some((t: { name: string }) => t.name === "task")));
    const start = events.find((x) => x.type === "subagent" && x.phase === "start");
    assert.ok(start && start.type === "subagent" && start.transcript && existsSync(start.transcript));
    const subEntries = loadTranscript(start.transcript!).entries;
    assert.equal(subEntries.filter((x) => x.type === "message").length, 8);
    assert.ok(loadTranscript(e.transcriptPath).entries.some((x) => x.type === "boundary" && x.kind === "subagent"));
  } finally {
    await e.close();
  }
});
