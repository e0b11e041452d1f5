// Anthropic's server-side context management beside lethe's own, end to end: lethe's Anthropic
// client (the official SDK) against the fake server, which compacts (compact_20260112), clears
// tool results and thinking, and refuses a compaction block that does not come back byte for byte.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runAgent } from "../../src/agent/loop.ts";
import { validate } from "../../src/messages/invariants.ts";
import { loadTranscript, resumeContext } from "../../src/session/transcript.ts";
import type { CompactionEvent } from "../../src/compaction/types.ts";
import { anthropicInputTokens } from "../support/fakes/anthropic.ts";
import { keptMessages } from "../support/fakes/anthropic-context.ts";
import { stableStringify } from "../support/fakes/common.ts";
import { TOOLS, bigOutput, isSummaryRequest, setupE2E, toolScript } from "../support/e2e.ts";

const WINDOW = 24_000;
const runBash = async (use: { input: unknown }) => ({ content: bigOutput(String((use.input as { command: string }).command), 1_500) });
const compactionsIn = (body: any): string[] => (body.messages as any[]).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b?.type === "compaction").map((b: any) => stableStringify(b));

/** Every request after a compaction block appeared starts with the newest one, byte for byte. */
function assertBlocksCarried(requests: any[], replies: (string | undefined)[]): number {
  let newest: string | undefined;
  let carried = 0;
  requests.forEach((body, i) => {
    if (newest !== undefined) {
      const first = body.messages[0]?.content?.[0];
      assert.equal(stableStringify(first), newest, `request ${i} does not start with the newest compaction block, byte for byte`);
      assert.equal(body.messages[0].role, "assistant");
      carried++;
    }
    if (replies[i]) newest = replies[i];
  });
  return carried;
}

test("45 steps with the server compacting (compact_20260112): every request starts with its newest compaction block byte for byte, none refused, no request over the window", async () => {
  const events: CompactionEvent[] = [];
  const e = await setupE2E({
    provider: "anthropic",
    fake: { script: toolScript(45), contextWindow: WINDOW, promptCache: false },
    engine: { contextWindow: WINDOW, maxOutputTokens: 2_000, config: { summary: { presummaryShare: 0 } }, onEvent: (x) => events.push(x) },
    anthropic: { contextManagement: { edits: [{ type: "compact_20260112", trigger: { type: "input_tokens", value: 12_000 } }] } },
  });
  try {
    // The blocks the server wrote, in reply order (the fake records them as it emits them).
    const seen = new Set<string>();
    const replyBlocks: (string | undefined)[] = [];
    const r = await runAgent([], "Read every data file and report the totals.", {
      engine: e.engine, client: e.client, model: "claude-sonnet-4-6", tools: TOOLS, runTool: runBash, transcript: e.transcript, maxOutputTokens: 2_000,
      onEvent: (ev) => {
        if (ev.type !== "response") return;
        const fresh = [...e.fake.compactions!.emitted].filter((b) => !seen.has(b));
        fresh.forEach((b) => seen.add(b));
        replyBlocks[e.fake.requests.length - 1] = fresh.at(-1);
      },
    });
    assert.match(r.text, /done after 45 calls/, `text: ${r.text}`);
    assert.ok(e.fake.compactions!.count >= 2, `the server compacted ${e.fake.compactions!.count} times`);
    const refused = e.fake.log.filter((x) => x.path === "/v1/messages").length - e.fake.requests.length;
    assert.ok(refused <= 1, `${refused} refused`);
    for (const body of e.fake.requests) assert.ok(anthropicInputTokens(body) <= WINDOW, `request of ${anthropicInputTokens(body)} tokens`);
    const carried = assertBlocksCarried(e.fake.requests, replyBlocks);
    assert.ok(carried >= 30, `${carried} requests carried a block`);
    // The server kept the context small: lethe had nothing to summarise, and counted what the server keeps.
    assert.equal(events.filter((x) => x.kind === "summarize").length, 0, "no lethe summary needed");
    assert.equal(events.filter((x) => x.kind === "window_learned").length, 0, "a compacted reply is not mistaken for truncation");
    assert.deepEqual(validate(r.history), []);
    // The transcript keeps everything, blocks included; a resume starts from what lethe sent last.
    const loaded = loadTranscript(e.transcriptPath);
    assert.deepEqual(loaded.errors, []);
    const all = JSON.stringify(loaded.entries);
    for (const b of seen) {
      const { encrypted_content, signature } = JSON.parse(b);
      assert.ok(all.includes(encrypted_content) && all.includes(signature), "every compaction block is in the transcript verbatim");
    }
  } finally {
    await e.close();
  }
});

test("pause_after_compaction: the reply that is only a compaction block is sent back and the turn goes on (45 steps)", async () => {
  const e = await setupE2E({
    provider: "anthropic",
    fake: { script: toolScript(45), contextWindow: WINDOW, promptCache: false },
    engine: { contextWindow: WINDOW, maxOutputTokens: 2_000, config: { summary: { presummaryShare: 0 } } },
    anthropic: { contextManagement: { edits: [{ type: "compact_20260112", trigger: { type: "input_tokens", value: 12_000 }, pause_after_compaction: true }] } },
  });
  try {
    const r = await runAgent([], "Read every data file and report the totals.", { engine: e.engine, client: e.client, model: "claude-sonnet-4-6", tools: TOOLS, runTool: runBash, transcript: e.transcript, maxOutputTokens: 2_000 });
    assert.match(r.text, /done after 45 calls/, `text: ${r.text}`);
    assert.ok(e.fake.compactions!.count >= 2);
    assert.equal(e.fake.log.filter((x) => x.path === "/v1/messages").length, e.fake.requests.length, "none refused");
    const emitted = e.fake.compactions!.emitted;
    let after = 0;
    for (const body of e.fake.requests) {
      const blocks = compactionsIn(body);
      if (blocks.length === 0) continue;
      after++;
      assert.equal(blocks.length, 1, "only the newest block is sent: the server ignores what precedes it");
      assert.ok(emitted.has(blocks[0]!), "byte for byte the block the server wrote");
    }
    assert.ok(after >= 30, `${after} requests after the first compaction`);
  } finally {
    await e.close();
  }
});

test("summarizerMode server: lethe's summaries are the server's compaction blocks, kept first, while lethe carries the user's messages and the file ledger (45 steps)", async () => {
  const events: CompactionEvent[] = [];
  const e = await setupE2E({
    provider: "anthropic",
    fake: { script: toolScript(45), contextWindow: WINDOW, promptCache: false },
    engine: { contextWindow: WINDOW, maxOutputTokens: 2_000, summarizerMode: "server", config: { micro: { enabled: false }, snip: { enabled: false }, summary: { presummaryShare: 0 } }, onEvent: (x) => events.push(x) },
  });
  try {
    const r = await runAgent([], "Read every data file and report the totals. Keep the order of files.", { engine: e.engine, client: e.client, model: "claude-sonnet-4-6", tools: TOOLS, runTool: runBash, transcript: e.transcript, maxOutputTokens: 2_000 });
    assert.match(r.text, /done after 45 calls/, `text: ${r.text}`);
    const summaries = events.filter((x) => x.kind === "summarize") as { summarizer: string }[];
    assert.ok(summaries.length >= 2, `${summaries.length} summaries`);
    for (const s of summaries) assert.equal(s.summarizer, "server");
    // The compaction requests: the conversation as it is, the compaction parameter, no instruction appended.
    const compactRequests = e.fake.requests.filter((b) => b.compaction);
    assert.equal(compactRequests.length, summaries.length);
    for (const b of compactRequests) {
      assert.deepEqual(b.compaction, { type: "summarize" });
      assert.equal(b.context_management, undefined);
      assert.ok(!isSummaryRequest(b));
    }
    assert.match(String(e.fake.log.find((x) => (x.body as any)?.compaction)?.headers["anthropic-beta"]), /compact-2026-01-12/);
    const emitted = e.fake.compactions!.emitted;
    const after = e.fake.requests.slice(e.fake.requests.indexOf(compactRequests[0]) + 1);
    for (const body of after) {
      const first = body.messages[0];
      assert.equal(first.role, "assistant");
      assert.ok(emitted.has(stableStringify(first.content[0])), "starts with a block the server wrote, byte for byte");
      // lethe's note after it carries the user's request and the ledger, and does not repeat the summary.
      const note = JSON.stringify(body.messages[1]);
      assert.match(note, /Keep the order of files/);
      assert.doesNotMatch(note, /Summary written by the server/);
    }
    for (const body of e.fake.requests) assert.ok(anthropicInputTokens(body) <= WINDOW);
    const loaded = loadTranscript(e.transcriptPath);
    assert.deepEqual(resumeContext(loaded.entries), r.history, "resume gives back the live context, block included");
  } finally {
    await e.close();
  }
});

test("the server's context editing (clear_tool_uses, clear_thinking) is not taken for truncation: 45 steps, lethe's window kept, none refused", async () => {
  const events: CompactionEvent[] = [];
  let n = 0;
  const script = toolScript(45);
  const e = await setupE2E({
    provider: "anthropic",
    fake: { script: (body) => ({ ...(script(body) as object), ...(isSummaryRequest(body) ? {} : { thinking: `step ${n++}: read the next file` }) }), contextWindow: WINDOW, promptCache: false },
    engine: { contextWindow: WINDOW, maxOutputTokens: 2_000, config: { summary: { presummaryShare: 0 } }, onEvent: (x) => events.push(x) },
    anthropic: {
      contextManagement: {
        edits: [
          { type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 1 } },
          { type: "clear_tool_uses_20250919", trigger: { type: "input_tokens", value: 8_000 }, keep: { type: "tool_uses", value: 2 } },
        ],
      },
    },
  });
  try {
    const r = await runAgent([], "Read every data file and report the totals.", { engine: e.engine, client: e.client, model: "claude-sonnet-4-6", tools: TOOLS, runTool: runBash, transcript: e.transcript, maxOutputTokens: 2_000 });
    assert.match(r.text, /done after 45 calls/, `text: ${r.text}`);
    assert.equal(events.filter((x) => x.kind === "window_learned").length, 0, "no window learned from cleared tokens");
    assert.equal(e.engine.contextWindow, WINDOW);
    assert.equal(e.fake.log.filter((x) => x.path === "/v1/messages").length, e.fake.requests.length, "none refused");
    assert.match(String(e.fake.log.find((x) => x.path === "/v1/messages")?.headers["anthropic-beta"]), /context-management-2025-06-27/);
    // lethe still measures what it sends (what the server clears is a bonus): its own compaction keeps every request under the window.
    for (const body of e.fake.requests) assert.ok(anthropicInputTokens(body, keptMessages(body.messages)) <= WINDOW);
    assert.ok(events.some((x) => x.kind === "summarize" || x.kind === "micro"), "lethe compacted on its side too");
    assert.deepEqual(validate(r.history), []);
  } finally {
    await e.close();
  }
});
