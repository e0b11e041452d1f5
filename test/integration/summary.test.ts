// The summary layer end to end: the official SDK clients against the local fake servers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runAgent } from "../../src/agent/loop.ts";
import { validate } from "../../src/messages/invariants.ts";
import { loadTranscript, resumeContext } from "../../src/session/transcript.ts";
import { recall } from "../../src/session/recall.ts";
import type { CompactionEvent } from "../../src/compaction/types.ts";
import { anthropicInputTokens } from "../support/fakes/anthropic.ts";
import { createCommandHooks, parseHooksConfig } from "../../src/hooks/compact-hooks.ts";
import { TOOLS, bigOutput, isSummaryRequest, setupE2E, toolScript } from "../support/e2e.ts";

const onlySummary = { micro: { enabled: false }, snip: { enabled: false }, summary: { presummaryShare: 0 } };
const runBash = async (use: { input: unknown }) => ({ content: bigOutput(String((use.input as { command: string }).command), 2_500) });

test("anthropic: auto-compact fires at the threshold; no request goes over the window; the transcript records it", async () => {
  const events: CompactionEvent[] = [];
  const e = await setupE2E({
    provider: "anthropic",
    fake: { script: toolScript(20), contextWindow: 24_000 },
    engine: { contextWindow: 24_000, maxOutputTokens: 2_000, config: onlySummary, onEvent: (x) => events.push(x) },
  });
  try {
    const r = await runAgent([], "Read every data file and report the totals.", { engine: e.engine, client: e.client, model: "claude-sonnet-4-6", tools: TOOLS, runTool: runBash, transcript: e.transcript, maxOutputTokens: 2_000 });
    assert.match(r.text, /done after 20 calls/, `text: ${r.text} turns ${r.turns}`);
    const summaries = events.filter((x) => x.kind === "summarize");
    assert.ok(summaries.length >= 1, "auto-compact fired");
    for (const s of summaries) assert.equal((s as { summarizer: string }).summarizer, "model");
    for (const body of e.fake.requests) assert.ok(anthropicInputTokens(body) <= 24_000, `request of ${anthropicInputTokens(body)} tokens`);
    const summaryRequests = e.fake.requests.filter(isSummaryRequest);
    assert.equal(summaryRequests.length, summaries.length);
    // The summary request reuses the conversation as sent: same system and tools.
    assert.deepEqual(summaryRequests[0].tools.map((t: { name: string }) => t.name), ["bash"]);
    const loaded = loadTranscript(e.transcriptPath);
    assert.deepEqual(loaded.errors, []);
    assert.ok(loaded.entries.some((x) => x.type === "boundary" && x.kind === "summarize"), "boundary recorded");
    // Resume gives back exactly the live context.
    assert.deepEqual(resumeContext(loaded.entries), r.history);
    assert.deepEqual(validate(r.history), []);
    // Archived content is recallable after compaction.
    const first = recall(e.sessionDir, { query: "cat data/file1.txt" });
    assert.notEqual(first.kind, "error", first.text);
    assert.match(first.text, /file1/);
  } finally {
    await e.close();
  }
});

test("manual compact with instructions sends them in the summary request", async () => {
  const e = await setupE2E({ provider: "anthropic", fake: { script: toolScript(3) }, engine: { contextWindow: 200_000, maxOutputTokens: 8_000 } });
  try {
    const r = await runAgent([], "go", { engine: e.engine, client: e.client, model: "claude-sonnet-4-6", tools: TOOLS, runTool: runBash, transcript: e.transcript, maxOutputTokens: 2_000 });
    const c = await e.engine.compact(r.history, { focus: "Keep the exact row values of file2.", system: undefined, tools: TOOLS });
    const req = e.fake.requests.filter(isSummaryRequest).at(-1);
    assert.match(JSON.stringify(req.messages.at(-1)), /Keep the exact row values of file2\./);
    assert.equal(c.events.at(-1)?.kind, "manual");
    assert.match(JSON.stringify(c.history[0]), /read every data file/i);
  } finally {
    await e.close();
  }
});

test("settings-file hooks: PreCompact's stdout reaches the summary request; exit 2 blocks /compact", async () => {
  const hooks = createCommandHooks(parseHooksConfig({ PreCompact: [{ command: "read j; case \"$j\" in *stop*) echo 'frozen' >&2; exit 2;; esac; echo 'Mention the totals.'" }] }), { cwd: process.cwd() });
  const e = await setupE2E({ provider: "openai", fake: { script: toolScript(2) }, engine: { contextWindow: 128_000, maxOutputTokens: 8_000, hooks } });
  try {
    const r = await runAgent([], "go", { engine: e.engine, client: e.client, model: "gpt-4o", tools: TOOLS, runTool: runBash, transcript: e.transcript, maxOutputTokens: 2_000 });
    await e.engine.compact(r.history, { focus: "be brief", tools: TOOLS });
    const req = e.fake.requests.filter(isSummaryRequest).at(-1);
    assert.match(JSON.stringify(req.messages.at(-1)), /be brief\\nMention the totals\./);
    await assert.rejects(e.engine.compact(r.history, { focus: "please stop", tools: TOOLS }), /blocked by the PreCompact hook: frozen/);
  } finally {
    await e.close();
  }
});

for (const provider of ["anthropic", "openai"] as const) {
  test(`${provider}: reactive recovery from the provider's real overflow error, then one retry`, async () => {
    const events: CompactionEvent[] = [];
    // The engine believes the window is 100k; the server enforces 16k, so the refusal comes from the API.
    const e = await setupE2E({
      provider,
      fake: { script: toolScript(6), contextWindow: 16_000 },
      engine: { contextWindow: 100_000, maxOutputTokens: 2_000, config: onlySummary, onEvent: (x) => events.push(x) },
    });
    try {
      const r = await runAgent([], "Read the data files.", { engine: e.engine, client: e.client, model: provider === "anthropic" ? "claude-sonnet-4-6" : "gpt-4o", tools: TOOLS, runTool: runBash, transcript: e.transcript, maxOutputTokens: 2_000 });
      assert.match(r.text, /done after 6 calls/);
      assert.ok(events.some((x) => x.kind === "reactive"), `events: ${events.map((x) => x.kind)}`);
      assert.deepEqual(validate(r.history), []);
    } finally {
      await e.close();
    }
  });
}

test("reactive: when shrinking fresh results is not enough, the older part is summarised and the newest round kept whole", async () => {
  const events: CompactionEvent[] = [];
  // Results small enough that shrinking them frees little, even at the server's real (learned) window.
  const small = async (use: { input: unknown }) => ({ content: bigOutput(String((use.input as { command: string }).command), 250) });
  const e = await setupE2E({
    provider: "anthropic",
    fake: { script: toolScript(40), contextWindow: 16_000 },
    engine: { contextWindow: 100_000, maxOutputTokens: 2_000, config: onlySummary, onEvent: (x) => events.push(x) },
  });
  try {
    const r = await runAgent([], "Read the data files.", { engine: e.engine, client: e.client, model: "claude-sonnet-4-6", tools: TOOLS, runTool: small, transcript: e.transcript, maxOutputTokens: 2_000 });
    assert.match(r.text, /done after 40 calls/);
    const reactive = events.filter((x) => x.kind === "reactive") as { summarizer: string }[];
    assert.ok(reactive.some((x) => x.summarizer === "model"), `reactive: ${JSON.stringify(reactive)}`);
    assert.deepEqual(validate(r.history), []);
  } finally {
    await e.close();
  }
});

test("circuit breaker: three failed summary requests, then digest takes over and the model is not asked again", async () => {
  const events: CompactionEvent[] = [];
  const e = await setupE2E({
    provider: "anthropic",
    fake: { script: toolScript(40, () => ({ fault: "server_error" })), contextWindow: 24_000 },
    engine: { contextWindow: 24_000, maxOutputTokens: 2_000, config: onlySummary, onEvent: (x) => events.push(x) },
  });
  try {
    const r = await runAgent([], "Read every data file.", { engine: e.engine, client: e.client, model: "claude-sonnet-4-6", tools: TOOLS, runTool: runBash, transcript: e.transcript, maxOutputTokens: 2_000 });
    assert.match(r.text, /done after 40 calls/);
    const failed = events.filter((x) => x.kind === "summary_failed");
    assert.equal(failed.length, 3);
    assert.equal((failed[2] as { breakerOpen: boolean }).breakerOpen, true);
    const summaries = events.filter((x) => x.kind === "summarize") as { summarizer: string }[];
    assert.ok(summaries.length > 3, `${summaries.length} compactions`);
    assert.ok(summaries.every((s) => s.summarizer === "digest"));
    assert.equal(e.fake.requests.filter(isSummaryRequest).length, 3, "no summary request after the breaker opened");
    assert.equal(e.engine.compactor.breakerOpen, true);
  } finally {
    await e.close();
  }
});

test("summary-request overflow: the real 400 body, then the oldest rounds are dropped and it succeeds", async () => {
  const events: CompactionEvent[] = [];
  const tooLong = { fault: "status" as const, status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 25000 tokens > 24000 maximum" } } };
  const e = await setupE2E({
    provider: "anthropic",
    fake: { script: toolScript(12, (_b, n) => (n === 0 ? tooLong : undefined)), contextWindow: 24_000 },
    engine: { contextWindow: 24_000, maxOutputTokens: 2_000, config: onlySummary, onEvent: (x) => events.push(x) },
  });
  try {
    await runAgent([], "Read every data file.", { engine: e.engine, client: e.client, model: "claude-sonnet-4-6", tools: TOOLS, runTool: runBash, transcript: e.transcript, maxOutputTokens: 2_000 });
    const first = events.find((x) => x.kind === "summarize") as { summarizer: string; droppedForOverflow: number };
    assert.equal(first.summarizer, "model");
    assert.ok(first.droppedForOverflow > 0);
    const reqs = e.fake.requests.filter(isSummaryRequest);
    assert.ok(reqs[1].messages.length < reqs[0].messages.length);
    assert.equal(events.filter((x) => x.kind === "summary_failed").length, 0);
  } finally {
    await e.close();
  }
});

test("429 and 529 are retried, honouring retry-after", async () => {
  const steps = [{ fault: "rate_limit" as const, retryAfter: 2 }, { fault: "overloaded" as const, retryAfter: 1 }, { text: "hello" }];
  const e = await setupE2E({ provider: "anthropic", fake: { script: steps }, engine: { contextWindow: 200_000, maxOutputTokens: 8_000 } });
  const waits: number[] = [];
  try {
    const r = await runAgent([], "hi", {
      engine: e.engine, client: e.client, model: "claude-sonnet-4-6", transcript: e.transcript, maxOutputTokens: 1_000,
      retry: { sleep: async (ms: number) => void waits.push(ms) },
    });
    assert.equal(r.text, "hello");
    assert.equal(waits.length, 2);
    assert.ok(waits[0]! >= 2_000, `waited ${waits[0]}`);
    assert.ok(waits[1]! >= 1_000, `waited ${waits[1]}`);
    assert.equal(e.fake.requests.length, 3);
  } finally {
    await e.close();
  }
});
