// Acceptance (issue 4): the CLI as a subprocess against the fake servers of both providers.
// - A scripted session of 300 bash calls with big real outputs at a 24k window ends with exit 0,
//   no request over the window (the fakes' exact o200k counts), and the transcript holding every
//   message sent.
// - Across this file every compaction kind fires at least once: budget, snip, micro, summarize,
//   reactive, manual, subagent (asserted on --output-format json and the transcripts).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { anthropicInputTokens } from "../support/fakes/anthropic.ts";
import { openaiInputTokens } from "../support/fakes/openai.ts";
import type { Step } from "../support/fakes/common.ts";
import { loadTranscript, resumeContext } from "../../src/session/transcript.ts";
import { validate } from "../../src/messages/invariants.ts";
import { fromOpenAI } from "../../src/messages/openai.ts";
import type { Message } from "../../src/messages/types.ts";
import {
  type Provider,
  cliEnv,
  idsOf,
  isSubagentRequest,
  isSummaryRequest,
  keyEnv,
  lastMessageText,
  makeWorkspace,
  onlySession,
  providerArgs,
  readText,
  runCli,
  startFake,
} from "./support.ts";

const SUMMARY = "<analysis>walking through the rows</analysis>\n<summary>\n1. Goal — print every batch of rows and report the checksum.\n8. Current work — printing batches one by one.\n9. Next step — print the next batch.\n</summary>";

const fired = new Set<string>();
interface Compaction {
  kind: string;
  tokens_before: number;
  tokens_after: number;
  subagent_kind?: string;
}
const record = (list: Compaction[]) => {
  for (const c of list) fired.add(c.kind);
};

const inputTokens = (provider: Provider, body: unknown) => (provider === "anthropic" ? anthropicInputTokens(body) : openaiInputTokens(body));

/** A bash command printing `lines` rows of ~12 tokens each. */
const rows = (i: number, lines: number) => `seq 1 ${lines} | awk '{print "batch ${i} row " $1 ": value=" ($1*7919)%10007 " status=ok"}'`;

/**
 * Call i of 300: most print 120 rows (~1.8k tokens); every 25th prints 5,000 rows (the bash tool
 * keeps 40k chars of it, over the budget limit). In the second half the model also writes ~700
 * tokens of notes every turn: text no cheap layer may clear, so the context fills up and is
 * summarised (while in the first half, snip and micro keep it down).
 */
function commandFor(i: number): string {
  return i % 25 === 0 ? rows(i, 5000) : rows(i, 120);
}

const notes = (i: number) => `Notes after batch ${i}: ${"the values stay consistent, every status is ok and the checksum keeps adding up; ".repeat(40)}`;

function longSession(calls: number) {
  let n = 0;
  return (body: any): Step => {
    if (isSummaryRequest(body)) return { text: SUMMARY };
    n++;
    if (n > calls) return { text: `Done: printed ${calls} batches.` };
    const text = n > calls / 2 ? notes(n) : n % 7 === 0 ? `Batch ${n} next.` : undefined;
    return { ...(text ? { text } : {}), toolUses: [{ name: "bash", input: { command: commandFor(n) } }] };
  };
}

/** A request's messages back in lethe's shape (cache_control dropped; OpenAI converted back). */
function sentHistory(provider: Provider, body: any): Message[] {
  if (provider === "openai") return fromOpenAI(body.messages).messages;
  return JSON.parse(JSON.stringify(body.messages), (k, v) => (k === "cache_control" ? undefined : v));
}

/** Every message the loop created and sent is in the transcript: tool calls, tool results, texts. */
function assertTranscriptHoldsEverySentMessage(provider: Provider, requests: any[], transcriptText: string) {
  const missing: string[] = [];
  for (const body of requests) {
    const { uses, results } = idsOf(body);
    for (const id of [...uses, ...results]) if (!transcriptText.includes(JSON.stringify(id))) missing.push(id);
    for (const m of body.messages ?? []) {
      if (m.role !== "assistant" || isSummaryRequest(body)) continue;
      const text = typeof m.content === "string" ? m.content : (m.content ?? []).filter((b: any) => b.type === "text").map((b: any) => b.text).join("");
      if (text && !transcriptText.includes(JSON.stringify(text).slice(1, -1))) missing.push(`assistant text ${JSON.stringify(text).slice(0, 60)}`);
    }
  }
  assert.deepEqual([...new Set(missing)].slice(0, 5), [], `${provider}: sent but not in the transcript`);
}

for (const provider of ["anthropic", "openai"] as const) {
  test(`${provider}: 300 bash calls with big outputs at a 24k window: exit 0, no request over the window, the transcript holds every message sent`, async () => {
    const fake = await startFake(provider, { script: longSession(300), contextWindow: 24_000 });
    // Snip on message count (30 → 10), as a settings file can ask: with the default small tail,
    // snip leaves micro nothing old to clear, and this session is to exercise every layer.
    const ws = makeWorkspace({ compaction: { snip: { cacheAware: false, triggerMessages: 30, targetMessages: 10 } } });
    try {
      const r = await runCli(
        [...providerArgs(provider, fake), "--context-window", "24000", "--max-output-tokens", "2000", "--yes", "--cwd", ws.dir, "--output-format", "json", "-p", "Print every batch of rows and report when done."],
        { env: cliEnv(ws, keyEnv(provider)) },
      );
      assert.equal(r.code, 0, `stderr: ${r.stderr}`);
      const out = JSON.parse(r.stdout);
      assert.equal(out.result, "Done: printed 300 batches.");
      const main = fake.requests.filter((b) => !isSummaryRequest(b));
      assert.equal(main.length, 301, "300 tool turns and the final answer");
      assert.equal(out.num_turns, 301);
      // No request over the window, by the fake's exact count.
      const sizes = fake.requests.map((b) => inputTokens(provider, b));
      const largest = Math.max(...sizes);
      assert.ok(largest <= 24_000, `largest request ${largest} tokens`);
      // Every request was a valid conversation (pairs whole, roles alternating).
      for (const body of main) assert.deepEqual(validate(sentHistory(provider, body)), [], "a request broke an invariant");
      // The kinds this session exercises.
      const kinds = new Set(out.compactions.map((c: Compaction) => c.kind));
      for (const k of ["budget", "micro", "snip", "summarize"]) assert.ok(kinds.has(k), `${k} fired (fired: ${[...kinds].join(", ")})`);
      for (const c of out.compactions as Compaction[]) assert.ok(c.tokens_after < c.tokens_before, `${c.kind}: ${c.tokens_before} → ${c.tokens_after}`);
      record(out.compactions);
      // The transcript: every message sent is there; summaries are boundaries; resume = the live context.
      const s = onlySession(ws);
      assert.equal(s.id, out.session_id);
      assert.deepEqual(s.transcript.errors, []);
      assertTranscriptHoldsEverySentMessage(provider, fake.requests, readText(s.transcriptPath));
      const boundaries = s.transcript.entries.filter((e) => e.type === "boundary").map((e) => (e as { kind: string }).kind);
      for (const k of ["budget", "micro", "snip", "summarize"]) assert.ok(boundaries.includes(k), `boundary ${k} recorded`);
      const live = resumeContext(s.transcript.entries);
      assert.deepEqual(validate(live), []);
      // Persisted results are on disk.
      assert.ok(readdirSync(join(s.dir, "tool-results")).length > 0);
      console.log(`# ${provider}: ${fake.requests.length} requests (${fake.requests.length - main.length} summaries), largest ${largest} tokens, compactions: ${[...kinds].map((k) => `${k}×${out.compactions.filter((c: Compaction) => c.kind === k).length}`).join(" ")}`);
    } finally {
      await fake.close();
      ws.cleanup();
    }
  });
}

test("openai: reactive — the server refuses a prompt the CLI thought fit; lethe shrinks it and retries once", async () => {
  let n = 0;
  // The CLI believes the window is 100k; the server enforces 16k, so the refusal comes from the API.
  const fake = await startFake("openai", {
    contextWindow: 16_000,
    script: (body: any): Step => {
      if (isSummaryRequest(body)) return { text: SUMMARY };
      n++;
      return n <= 8 ? { toolUses: [{ name: "bash", input: { command: rows(n, 250) } }] } : { text: "Done after 8 batches." };
    },
  });
  const ws = makeWorkspace();
  try {
    const r = await runCli([...providerArgs("openai", fake), "--context-window", "100000", "--max-output-tokens", "2000", "--yes", "--cwd", ws.dir, "--output-format", "json", "-p", "Print 8 batches."], {
      env: cliEnv(ws, keyEnv("openai")),
    });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.result, "Done after 8 batches.");
    assert.ok(out.compactions.some((c: Compaction) => c.kind === "reactive"), JSON.stringify(out.compactions));
    record(out.compactions);
    const s = onlySession(ws);
    assert.ok(s.transcript.entries.some((e) => e.type === "boundary" && (e as { kind: string }).kind === "reactive"));
    assert.deepEqual(validate(resumeContext(s.transcript.entries)), []);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("anthropic: manual — the model calls compact {focus}; the PreCompact hook from settings adds its instructions; both reach the summary request", async () => {
  let n = 0;
  const fake = await startFake("anthropic", {
    script: (body: any): Step => {
      if (isSummaryRequest(body)) return { text: SUMMARY };
      n++;
      if (n <= 3) return { toolUses: [{ name: "bash", input: { command: rows(n, 200) } }] };
      if (n === 4) return { text: "Compacting before the next part.", toolUses: [{ name: "compact", input: { focus: "Keep the checksum 4242." } }] };
      return { text: "Done; the checksum is 4242." };
    },
  });
  const ws = makeWorkspace({ hooks: { PreCompact: [{ hooks: [{ type: "command", command: "echo 'Mention the batch count.'" }] }] } });
  try {
    const r = await runCli([...providerArgs("anthropic", fake), "--yes", "--trust-workspace", "--context-window", "24000", "--max-output-tokens", "2000", "--cwd", ws.dir, "--output-format", "json", "-p", "Print three batches, then compact."], {
      env: cliEnv(ws, keyEnv("anthropic")),
    });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.result, "Done; the checksum is 4242.");
    const manual = out.compactions.filter((c: Compaction) => c.kind === "manual");
    assert.equal(manual.length, 1, JSON.stringify(out.compactions));
    record(out.compactions);
    const summary = fake.requests.filter(isSummaryRequest);
    assert.equal(summary.length, 1);
    assert.match(lastMessageText(summary[0]), /Keep the checksum 4242\.\\nMention the batch count\./);
    // The compaction ran after the batch's results: the summary request ends with the compact call's result.
    assert.match(lastMessageText(summary[0]), /Compaction requested/);
    // The request after it starts from the rebuilt history.
    const next = fake.requests.at(-1);
    assert.match(JSON.stringify(next.messages[0]), /this session continues/);
    const s = onlySession(ws);
    const boundary = s.transcript.entries.find((e) => e.type === "boundary" && (e as { kind: string }).kind === "manual");
    assert.ok(boundary, "manual boundary in the transcript");
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("anthropic: subagent — task runs a subagent with its own context and compaction; only its final text comes back", async () => {
  let parent = 0;
  let sub = 0;
  const fake = await startFake("anthropic", {
    contextWindow: 24_000,
    script: (body: any): Step => {
      if (isSummaryRequest(body)) return { text: SUMMARY };
      if (isSubagentRequest(body)) {
        sub++;
        // Long notes each turn (nothing the cheap layers can clear), so the subagent's own context fills up and is summarised.
        const notes = `Notes on batch ${sub}: ${"the values look consistent and every status stays ok; ".repeat(100)}`;
        return sub <= 14 ? { text: notes, toolUses: [{ name: "bash", input: { command: rows(100 + sub, 100) } }] } : { text: "Subagent report: printed 14 batches, checksum 777." };
      }
      parent++;
      if (parent === 1) return { toolUses: [{ name: "task", input: { prompt: "Print 14 batches of rows and report the checksum.", description: "print rows" } }] };
      return { text: "Parent done: checksum 777." };
    },
  });
  const ws = makeWorkspace();
  try {
    const r = await runCli(
      [...providerArgs("anthropic", fake), "--context-window", "24000", "--max-output-tokens", "2000", "--yes", "--cwd", ws.dir, "--output-format", "json", "-p", "Delegate the printing to a subagent."],
      { env: cliEnv(ws, keyEnv("anthropic")) },
    );
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.result, "Parent done: checksum 777.");
    const subs = out.compactions.filter((c: Compaction) => c.kind === "subagent");
    assert.ok(subs.length > 0, JSON.stringify(out.compactions));
    assert.ok(subs.some((c: Compaction) => c.subagent_kind === "summarize"), `the subagent summarised its own context: ${JSON.stringify(subs)}`);
    record(out.compactions);
    for (const body of fake.requests) assert.ok(anthropicInputTokens(body) <= 24_000);
    // The parent saw only the subagent's final text.
    const last = fake.requests.at(-1);
    assert.ok(!isSubagentRequest(last));
    const sent = JSON.stringify(last.messages);
    assert.match(sent, /Subagent report: printed 14 batches, checksum 777\./);
    assert.doesNotMatch(sent, /batch 101 row/);
    // The subagent's own transcript, under the session folder; the parent records its compactions.
    const s = onlySession(ws);
    const subDirs = readdirSync(join(s.dir, "subagents"));
    assert.equal(subDirs.length, 1);
    const subTranscript = loadTranscript(join(s.dir, "subagents", subDirs[0]!, "transcript.jsonl"));
    assert.ok(subTranscript.entries.filter((e) => e.type === "message").length >= 25);
    assert.ok(subTranscript.entries.some((e) => e.type === "boundary" && (e as { kind: string }).kind === "summarize"));
    assert.ok(s.transcript.entries.some((e) => e.type === "boundary" && (e as { kind: string }).kind === "subagent"));
    assert.ok(existsSync(join(s.dir, "subagents", subDirs[0]!, "tool-results")));
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("openai: --summarizer digest — summaries without a model call", async () => {
  const fake = await startFake("openai", { script: longSession(20), contextWindow: 24_000 });
  const ws = makeWorkspace({ compaction: { micro: { enabled: false } } });
  try {
    const r = await runCli(
      [...providerArgs("openai", fake), "--context-window", "24000", "--max-output-tokens", "2000", "--summarizer", "digest", "--yes", "--cwd", ws.dir, "--output-format", "json", "-p", "Print 20 batches."],
      { env: cliEnv(ws, keyEnv("openai")) },
    );
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.ok(out.compactions.some((c: Compaction) => c.kind === "summarize"), JSON.stringify(out.compactions));
    assert.equal(fake.requests.filter(isSummaryRequest).length, 0, "no summary request was sent");
    record(out.compactions);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("every compaction kind fired at least once across this file", () => {
  for (const k of ["budget", "snip", "micro", "summarize", "reactive", "manual", "subagent"]) assert.ok(fired.has(k), `${k} never fired (fired: ${[...fired].join(", ")})`);
});

after(() => {
  console.log(`# compaction kinds fired in this file: ${[...fired].sort().join(", ")}`);
});
