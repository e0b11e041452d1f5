// Issue 10 (5): context errors that skipped the reactive path. vLLM (also TensorRT-LLM, FastChat)
// put the error at the top level ({"object":"error",…}) and reached lethe as "status code (no
// body)"; TGI's 422 "`inputs` tokens + `max_new_tokens` must be <=" was not recognised.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Step } from "../support/fakes/common.ts";
import { cliEnv, isSummaryRequest, keyEnv, makeWorkspace, providerArgs, runCli, startFake } from "./support.ts";
import { fromHttpError } from "../../src/model/errors.ts";

const SUMMARY = "<summary>\n1. Goal — answer.\n9. Next step — answer.\n</summary>";
const bodies: [string, number, unknown][] = [
  ["vLLM", 400, { object: "error", message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.", type: "BadRequestError", param: null, code: 400 }],
  ["TGI", 422, { error: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`", error_type: "validation" }],
];

for (const [server, status, body] of bodies) {
  test(`${server}: its context-length error (HTTP ${status}) takes the reactive path; the session finishes`, async () => {
    let n = 0;
    const fake = await startFake("openai", {
      script: (b: any): Step => {
        if (isSummaryRequest(b)) return { text: SUMMARY };
        return ++n === 1 ? { fault: "status", status, body } : { text: "answered after shrinking" };
      },
    });
    const ws = makeWorkspace({ retry: { maxAttempts: 1, baseMs: 1, maxMs: 1 } });
    try {
      const r = await runCli([...providerArgs("openai", fake), "--cwd", ws.dir, "--context-window", "4096", "--max-output-tokens", "200", "--output-format", "json", "-p", "hello"], { env: cliEnv(ws, keyEnv("openai")) });
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.equal(out.result, "answered after shrinking");
      assert.ok(out.compactions.some((c: { kind: string }) => c.kind === "reactive"), JSON.stringify(out.compactions));
      assert.doesNotMatch(r.stderr, /no body/);
    } finally {
      await fake.close();
      ws.cleanup();
    }
  });
}

test("the TGI wording is read for its numbers", () => {
  const e = fromHttpError(422, { error: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`" }, undefined, { provider: "openai" });
  assert.equal(e.kind, "prompt_too_long");
  assert.equal(e.actualTokens, 4200);
  assert.equal(e.limitTokens, 4096);
});

test("a reasoning model cut off by max_tokens while still reasoning: the continuation carries the reasoning, never content null (issue 10)", async () => {
  let n = 0;
  const fake = await startFake("openai", {
    script: (): Step => (++n === 1 ? { thinking: "First I compare both lists, then I count the overlap", stopReason: "length" } : { text: "The overlap is 3." }),
  });
  const ws = makeWorkspace();
  try {
    const r = await runCli([...providerArgs("openai", fake), "--cwd", ws.dir, "-p", "how many overlap?"], { env: cliEnv(ws, keyEnv("openai")) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "The overlap is 3.\n");
    const assistant = fake.requests[1].messages.find((m: { role: string }) => m.role === "assistant");
    assert.notEqual(assistant.content, null);
    assert.match(JSON.stringify(assistant), /First I compare both lists/);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});
