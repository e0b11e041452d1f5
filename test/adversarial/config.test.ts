// Issue 9, configuration: values that used to hang a layer (a negative window or preview) or
// silently disable the guards (NaN) are refused at the door with one line naming the key.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createEngine } from "../../src/engine/index.ts";
import { cliEnv, keyEnv, makeWorkspace, runCli } from "../cli/support.ts";

test("createEngine refuses negative, NaN and wrongly typed settings with one line naming the key", () => {
  const cases: [unknown, RegExp][] = [
    [{ contextWindow: -1000, maxOutputTokens: 10 }, /contextWindow/],
    [{ contextWindow: Number.NaN, maxOutputTokens: 10 }, /contextWindow/],
    [{ contextWindow: 32_000, maxOutputTokens: Number.NaN }, /maxOutputTokens/],
    [{ contextWindow: 32_000, maxOutputTokens: 4_000, config: { budget: { previewChars: -5 } } }, /budget\.previewChars/],
    [{ contextWindow: 32_000, maxOutputTokens: 4_000, config: { threshold: { bufferTokens: Number.NaN } } }, /threshold\.bufferTokens/],
    [{ contextWindow: 32_000, maxOutputTokens: 4_000, config: { micro: { compactableTools: "bash" } } }, /micro\.compactableTools/],
    [{ contextWindow: 32_000, maxOutputTokens: 4_000, config: { threshold: { bufferWindowShare: -1 } } }, /threshold\.bufferWindowShare/],
  ];
  for (const [opts, re] of cases) {
    assert.throws(
      () => createEngine(opts as never),
      (e: Error) => re.test(e.message) && !e.message.includes("\n") && !(e instanceof TypeError && /is not a function/.test(e.message)),
      JSON.stringify(opts),
    );
  }
});

test("the CLI: a negative previewChars or window in settings stops at once with one line (it used to spin at 100% CPU)", async () => {
  for (const settings of [{ compaction: { budget: { previewChars: -1 } } }, { contextWindow: -5 }, { compaction: { threshold: { bufferTokens: -1 } } }]) {
    const ws = makeWorkspace(settings);
    try {
      const r = await runCli(["-p", "hi", "--cwd", ws.dir], { env: cliEnv(ws, keyEnv("anthropic")) });
      assert.equal(r.code, 1, JSON.stringify(settings));
      assert.equal(r.stderr.trim().split("\n").length, 1);
      assert.match(r.stderr, /settings file .*settings\.json: /);
    } finally {
      ws.cleanup();
    }
  }
});
