// Issue 9, hangs: a server that sends its headers (and the first events) and then nothing used to
// leave lethe silent for the SDK's 10-minute timeout, times five attempts. An idle timeout
// (settings "idleTimeout", seconds) aborts such a stream and retries it, and says so.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Step } from "../support/fakes/common.ts";
import { cliEnv, keyEnv, makeWorkspace, providerArgs, runCli, startFake } from "../cli/support.ts";

for (const provider of ["anthropic", "openai"] as const) {
  test(`${provider}: a stream that goes silent after its first events is abandoned after the idle timeout and retried`, { timeout: 60_000 }, async () => {
    let n = 0;
    const fake = await startFake(provider, { script: (): Step => (++n === 1 ? { fault: "stall", afterEvents: 2 } : { text: "second try worked" }) });
    const ws = makeWorkspace({ idleTimeout: 0.4, retry: { maxAttempts: 3, baseMs: 1, maxMs: 5 } });
    try {
      const r = await runCli([...providerArgs(provider, fake), "--cwd", ws.dir, "--verbose", "-p", "hello"], { env: cliEnv(ws, keyEnv(provider)) });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "second try worked\n");
      assert.equal(fake.requests.length, 2);
      assert.match(r.stderr, new RegExp(`${provider}: no data from the server for 0\\.4 s \\(stream idle timeout\\); retry 1`));
    } finally {
      await fake.close();
      ws.cleanup();
    }
  });
}
