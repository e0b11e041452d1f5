// Acceptance (issue 10): a long CLI session (45 tool steps, with compactions) against a fake of each
// server lethe claims, each behaving as that server is documented to: DeepSeek's reasoning_content
// rule, Ollama's silent truncation to num_ctx and its /api/ps and /api/show, vLLM's two error body
// shapes, llama.cpp's exceed_context_size_error, TGI's 422, and an Anthropic server that pauses and
// refuses. Each run must finish with the right exit status and message, and no request may go over
// the window as the server really counts it (a refused request is counted and bounded; a silently
// truncated one is counted and bounded).
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Step } from "../support/fakes/common.ts";
import { startFakeOpenAI, openaiInputTokens } from "../support/fakes/openai.ts";
import { startFakeAnthropic } from "../support/fakes/anthropic.ts";
import { cliEnv, isSummaryRequest, makeWorkspace, runCli } from "./support.ts";

const STEPS = 45;
const SUMMARY = "<summary>\n1. Goal — print every batch of rows.\n8. Current work — printing batches.\n9. Next step — the next batch.\n</summary>";
const rows = (i: number) => `seq 1 110 | awk '{print "batch ${i} row " $1 ": value=" ($1*7919)%10007 " status=ok"}'`;

/** STEPS bash calls, then a final answer; `at` may replace a step (pause, refusal). */
function session(at: (n: number) => Step | undefined = () => undefined) {
  let n = 0;
  return (body: any): Step => {
    if (isSummaryRequest(body)) return { text: SUMMARY };
    n++;
    const special = at(n);
    if (special) return special;
    if (n > STEPS) return { text: `Done: printed ${STEPS} batches.` };
    return { text: `Batch ${n}.`, toolUses: [{ name: "bash", input: { command: rows(n) } }] };
  };
}

async function run(args: string[], extraEnv: Record<string, string> = {}) {
  const ws = makeWorkspace();
  try {
    const r = await runCli([...args, "--yes", "--cwd", ws.dir, "--output-format", "json", "-p", "Print every batch of rows."], { env: cliEnv(ws, { OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k", ...extraEnv }) });
    let out: any;
    try {
      out = JSON.parse(r.stdout);
    } catch {
      out = undefined;
    }
    return { ...r, out };
  } finally {
    ws.cleanup();
  }
}

const mainRequests = (requests: any[]) => requests.filter((b) => !isSummaryRequest(b));

function assertFinished(r: Awaited<ReturnType<typeof run>>, label: string) {
  assert.equal(r.code, 0, `${label}: stderr ${r.stderr}`);
  assert.equal(r.out?.result, `Done: printed ${STEPS} batches.`, label);
  assert.ok(r.out.compactions.length > 0, `${label}: compacted`);
}

test("DeepSeek (thinking mode): reasoning_content goes back on every tool-call turn; no 400, 45 steps, compactions", async () => {
  const fake = await startFakeOpenAI({ flavor: "deepseek", script: session(), contextWindow: 16_000 });
  try {
    const r = await run(["--provider", "openai", "--base-url", fake.url, "--model", "deepseek-v4-flash", "--context-window", "16000", "--max-output-tokens", "2000"]);
    assertFinished(r, "deepseek");
    const refused = fake.log.filter((l) => l.path.endsWith("/chat/completions")).length - fake.requests.length;
    assert.equal(refused, 0);
    assert.equal(fake.served!.length, fake.requests.length, "every request was answered");
    const carried = fake.requests.flatMap((b) => b.messages.filter((m: any) => m.role === "assistant" && m.tool_calls));
    assert.ok(carried.length > 40);
    assert.ok(carried.every((m: any) => typeof m.reasoning_content === "string"));
    assert.ok(carried.some((m: any) => /working out the next step/.test(m.reasoning_content)), "the reasoning itself, not an empty field");
    assert.ok(Math.max(...fake.served!) <= 16_000);
  } finally {
    await fake.close();
  }
});

test("DeepSeek behind a name lethe does not recognise: the first 400 names reasoning_content, lethe switches shape once and the session finishes", async () => {
  const fake = await startFakeOpenAI({ flavor: "deepseek", script: session(), contextWindow: 16_000 });
  try {
    const r = await run(["--provider", "openai", "--base-url", fake.url, "--model", "house-model", "--context-window", "16000", "--max-output-tokens", "2000"]);
    assertFinished(r, "deepseek (unrecognised)");
    // Requests the server refused: generation requests it logged but did not answer.
    const refused = fake.requests.length - fake.served!.length;
    assert.equal(refused, 1, "one 400, then the right shape for the rest of the session");
  } finally {
    await fake.close();
  }
});

test("Ollama with the model loaded: /api/ps gives the real context (16,000), lethe works to it and nothing is ever truncated", async () => {
  const fake = await startFakeOpenAI({ flavor: "ollama", script: session(), contextWindow: 1_000_000, numCtx: 16_000 });
  try {
    const r = await run(["--provider", "openai", "--base-url", fake.url, "--model", "qwen2.5-coder:7b", "--verbose"]);
    assertFinished(r, "ollama (loaded)");
    assert.equal(fake.truncated, 0, "no request over num_ctx");
    assert.ok(Math.max(...fake.served!) <= 16_000);
    assert.ok(fake.log.some((l) => l.path === "/api/ps"));
  } finally {
    await fake.close();
  }
});

test("Ollama with a --context-window larger than the server runs (the README's example): the server's 16,000 wins, with one warning", async () => {
  const fake = await startFakeOpenAI({ flavor: "ollama", script: session(), contextWindow: 1_000_000, numCtx: 16_000 });
  try {
    const r = await run(["--provider", "openai", "--base-url", fake.url, "--model", "qwen2.5-coder:7b", "--context-window", "32768"]);
    assertFinished(r, "ollama (flag too large)");
    assert.match(r.stderr, /runs qwen2\.5-coder:7b with a 16,000-token context \(ollama \/api\/ps\), not the 32,768 given/);
    assert.equal(fake.truncated, 0, "no request over num_ctx");
  } finally {
    await fake.close();
  }
});

test("Ollama with num_ctx in the Modelfile (not loaded): /api/show's num_ctx is the window", async () => {
  const fake = await startFakeOpenAI({ flavor: "ollama", script: session(), contextWindow: 1_000_000, numCtx: 14_000, ollamaLoaded: false, ollamaNumCtxParam: true });
  try {
    const r = await run(["--provider", "openai", "--base-url", fake.url, "--model", "qwen2.5-coder:7b"]);
    assertFinished(r, "ollama (num_ctx)");
    assert.equal(fake.truncated, 0);
  } finally {
    await fake.close();
  }
});

test("Ollama that says nothing about its context: the first silent truncation is detected, the user is told once, and lethe works to the smaller window", async () => {
  const fake = await startFakeOpenAI({ flavor: "ollama", script: session(), contextWindow: 1_000_000, numCtx: 14_000, ollamaLoaded: false });
  try {
    const r = await run(["--provider", "openai", "--base-url", fake.url, "--model", "qwen2.5-coder:7b"]);
    assertFinished(r, "ollama (silent)");
    assert.equal(fake.truncated, 1, "only the request that revealed it");
    const notices = r.stderr.split("\n").filter((l) => /context is smaller than lethe was told/.test(l));
    assert.equal(notices.length, 1, r.stderr);
    assert.match(notices[0]!, /truncated the prompt/);
    // After it, every request fits what the server really holds.
    const after = fake.requests.slice(fake.requests.findIndex((b) => openaiInputTokens(b) > 14_000) + 1);
    assert.ok(after.length > 10);
    assert.ok(after.every((b) => openaiInputTokens(b) <= 14_000));
  } finally {
    await fake.close();
  }
});

test("an Ollama-compatible server without /api/ps or /api/show: the silent truncation is caught at the first truncated request, and none after", async () => {
  const fake = await startFakeOpenAI({ flavor: "ollama", script: session(), contextWindow: 1_000_000, numCtx: 14_000, ollamaApi: false });
  try {
    const r = await run(["--provider", "openai", "--base-url", fake.url, "--model", "qwen2.5-coder:7b"]);
    assertFinished(r, "ollama-compatible (no discovery)");
    assert.equal(fake.truncated, 1, "only the request that revealed it");
    const after = fake.requests.slice(fake.requests.findIndex((b) => openaiInputTokens(b) > 14_000) + 1);
    assert.ok(after.length > 10);
    assert.ok(after.every((b) => openaiInputTokens(b) <= 14_000));
  } finally {
    await fake.close();
  }
});

for (const flavor of ["vllm", "llamacpp", "tgi"] as const) {
  test(`${flavor}: told a 24k window on a 14k server, lethe recovers from the server's own context error, learns the limit and finishes`, async () => {
    const fake = await startFakeOpenAI({ flavor, script: session(), contextWindow: 14_000 });
    try {
      const r = await run(["--provider", "openai", "--base-url", fake.url, "--model", "served-model", "--context-window", "24000", "--max-output-tokens", "2000"]);
      assertFinished(r, flavor);
      const refused = fake.requests.length - fake.served!.length;
      assert.ok(refused >= 1 && refused <= 2, `${flavor}: ${refused} refused requests`);
      assert.ok(r.out.compactions.some((c: any) => c.kind === "reactive"), "the reactive path ran");
      assert.ok(Math.max(...fake.served!) <= 14_000);
    } finally {
      await fake.close();
    }
  });
}

test("Anthropic that pauses a long turn and finally refuses: the pause is continued, the refusal ends the run with exit 1 and one line", async () => {
  const fake = await startFakeAnthropic({
    script: session((n) => (n === 20 ? { text: "Still working on it.", stopReason: "pause_turn" } : n === STEPS + 1 ? { text: "I can't help with that.", stopReason: "refusal" } : undefined)),
    contextWindow: 16_000,
  });
  try {
    const r = await run(["--provider", "anthropic", "--base-url", fake.url, "--model", "claude-sonnet-4-6", "--context-window", "16000", "--max-output-tokens", "2000"]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.out?.is_error, true);
    assert.match(r.stderr.trim().split("\n").at(-1)!, /declined|refus/i);
    assert.ok(r.out.compactions.length > 0);
    assert.ok(mainRequests(fake.requests).length >= STEPS + 1);
  } finally {
    await fake.close();
  }
});
