// Issue 24 (4): Anthropic's stop_reason "model_context_window_exceeded" (the reply filled the
// context window) is not a max_tokens cut-off: the history is compacted before the model goes
// on, and the two parts of the answer are printed apart, never run together.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Step } from "../support/fakes/common.ts";
import { cliEnv, isSummaryRequest, keyEnv, makeWorkspace, providerArgs, runCli, startFake } from "./support.ts";

const SUMMARY = "<analysis>ok</analysis>\n<summary>\n1. Goal — answer the question.\n8. Current work — answering.\n</summary>";

test("model_context_window_exceeded: compacted before going on, and the parts printed apart", async () => {
  const ws = makeWorkspace();
  let answered = 0;
  const fake = await startFake("anthropic", {
    script: (body: any): Step => {
      if (isSummaryRequest(body)) return { text: SUMMARY };
      answered++;
      return answered === 1 ? { text: "The first part of a long answer", stopReason: "model_context_window_exceeded" } : { text: "and the second part." };
    },
  });
  try {
    const r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p", "Explain it all."], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /The first part of a long answer\n+and the second part\./);
    assert.doesNotMatch(r.stdout, /answerand/, "never run together");
    const kinds = fake.requests.map((b) => (isSummaryRequest(b) ? "summary" : "turn"));
    assert.deepEqual(kinds, ["turn", "summary", "turn"], "compacted before going on");
  } finally {
    await fake.close();
    ws.cleanup();
  }
});
