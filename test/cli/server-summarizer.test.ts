// `lethe -p --summarizer server`: Anthropic's server-side compaction writes the summaries. The fake
// compacts on the `compaction` request and refuses any compaction block not sent back exactly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startFakeAnthropic } from "../support/fakes/anthropic.ts";
import { stableStringify, type Step } from "../support/fakes/common.ts";
import { cliEnv, makeWorkspace, runCli } from "./support.ts";

const STEPS = 45;
const rows = (i: number) => `seq 1 110 | awk '{print "batch ${i} row " $1 ": value=" ($1*7919)%10007 " status=ok"}'`;

function session() {
  let n = 0;
  return (body: any): Step => {
    if (body.compaction) return { text: "unused: the server writes the block" };
    n++;
    if (n > STEPS) return { text: `Done: printed ${STEPS} batches.` };
    return { toolUses: [{ name: "bash", input: { command: rows(n) } }] };
  };
}

test(`--summarizer server: ${STEPS} steps, every summary the server's compaction block, sent back first byte for byte; exit 0, nothing over the window`, async () => {
  const fake = await startFakeAnthropic({ script: session(), contextWindow: 16_000, promptCache: false });
  // micro off: at 16k it would keep the session under the threshold, and this test is about summaries.
  const ws = makeWorkspace({ compaction: { micro: { enabled: false } } });
  try {
    const args = ["--provider", "anthropic", "--base-url", fake.url, "--model", "claude-sonnet-4-6", "--context-window", "16000", "--max-output-tokens", "2000", "--summarizer", "server"];
    const r = await runCli([...args, "--yes", "--cwd", ws.dir, "--output-format", "json", "-p", "Print every batch of rows."], { env: cliEnv(ws, { ANTHROPIC_API_KEY: "k" }) });
    const out = JSON.parse(r.stdout || "null");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(out?.result, `Done: printed ${STEPS} batches.`);
    const compactRequests = fake.requests.filter((b) => b.compaction);
    assert.ok(compactRequests.length >= 2, `${compactRequests.length} server compactions`);
    assert.equal(fake.log.filter((x) => x.path === "/v1/messages").length, fake.requests.length, "none refused");
    const emitted = fake.compactions!.emitted;
    const after = fake.requests.slice(fake.requests.indexOf(compactRequests[0]) + 1).filter((b) => !b.compaction);
    assert.ok(after.length > 10);
    for (const body of after) assert.ok(emitted.has(stableStringify(body.messages[0].content[0])), "starts with the server's block, byte for byte");
    assert.match(JSON.stringify(after.at(-1).messages[1]), /Print every batch of rows/, "the user's request carried after the block");
  } finally {
    ws.cleanup();
    await fake.close();
  }
});

test("--summarizer server with a provider other than Anthropic: one line, exit 2 or 1, no request", async () => {
  const ws = makeWorkspace();
  try {
    const r = await runCli(["--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--summarizer", "server", "--cwd", ws.dir, "-p", "hi"], { env: cliEnv(ws, { OPENAI_API_KEY: "k" }) });
    assert.notEqual(r.code, 0);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /--summarizer server is Anthropic's server-side compaction/);
  } finally {
    ws.cleanup();
  }
});
