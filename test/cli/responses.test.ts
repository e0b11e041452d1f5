// `lethe -p --provider openai-responses`: a 45-step CLI session (bash calls, compactions) against the
// fake Responses API, every reply a reasoning item and a function call. It must finish with exit 0,
// send no request over the window, send every reasoning item back exactly as the server emitted it,
// and keep nothing on the server (store: false).
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Step } from "../support/fakes/common.ts";
import { RESPONSES_TOO_LONG, startFakeResponses } from "../support/fakes/responses.ts";
import { cliEnv, makeWorkspace, runCli } from "./support.ts";

const STEPS = 45;
const SUMMARY = "<summary>\n1. Goal — print every batch of rows.\n8. Current work — printing batches.\n9. Next step — the next batch.\n</summary>";
const rows = (i: number) => `seq 1 110 | awk '{print "batch ${i} row " $1 ": value=" ($1*7919)%10007 " status=ok"}'`;
const isSummary = (body: any) => body?.tool_choice === "none" || /is about to be compacted/.test(JSON.stringify(body?.input?.at(-1) ?? ""));

function session() {
  let n = 0;
  return (body: any): Step => {
    if (isSummary(body)) return { text: SUMMARY };
    n++;
    if (n > STEPS) return { thinking: "Every batch is printed.", text: `Done: printed ${STEPS} batches.` };
    return { thinking: `Batch ${n - 1} is printed; batch ${n} is next.`, toolUses: [{ name: "bash", input: { command: rows(n) } }] };
  };
}

test(`--provider openai-responses: ${STEPS} steps of reasoning + a bash call with compactions, exit 0; no request over the window, every reasoning item sent back byte-identical, store: false`, async () => {
  const fake = await startFakeResponses({ script: session(), contextWindow: 16_000 });
  const ws = makeWorkspace();
  try {
    const args = ["--provider", "openai-responses", "--base-url", fake.url, "--model", "gpt-5", "--context-window", "16000", "--max-output-tokens", "2000"];
    const r = await runCli([...args, "--yes", "--cwd", ws.dir, "--output-format", "json", "-p", "Print every batch of rows."], { env: cliEnv(ws, { OPENAI_API_KEY: "k" }) });
    const out = JSON.parse(r.stdout || "null");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(out?.result, `Done: printed ${STEPS} batches.`);
    assert.ok(out.compactions.length > 0, "compacted");
    assert.deepEqual(fake.itemErrors.map((e) => e.message), [], "nothing refused: no request over the window, no item the real API would refuse");
    assert.equal(fake.served!.length, fake.requests.length);
    assert.ok(Math.max(...fake.served!) <= 16_000);
    assert.ok(!fake.itemErrors.some((e) => e.message === RESPONSES_TOO_LONG));
    assert.deepEqual(fake.stored, []);
    assert.ok(fake.requests.every((b) => b.store === false && b.stream === true));
    let carried = 0;
    for (const body of fake.requests) {
      for (const item of body.input) {
        if (item.type !== "reasoning") continue;
        carried++;
        assert.equal(JSON.stringify(item), JSON.stringify(fake.book.emitted.get(item.id)?.item));
      }
    }
    assert.ok(carried > STEPS, `${carried} reasoning items carried back`);
    const main = fake.requests.filter((b) => !isSummary(b));
    assert.ok(main.length >= STEPS + 1);
    assert.ok(main.every((b) => b.tools.some((t: any) => t.type === "function" && t.name === "bash")));
  } finally {
    ws.cleanup();
    await fake.close();
  }
});
