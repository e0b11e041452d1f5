// Issue 9, hangs/data: a tool input nested 5,000 levels deep used to overflow the stack
// ("Maximum call stack size exceeded") and the reply never reached the transcript. Now the input is
// kept as text, the model is told why it was refused, and the session goes on. Arguments that are
// not JSON at all are reported as such (not as "Unrecognized key _raw").
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { Step } from "../support/fakes/common.ts";
import { cliEnv, keyEnv, makeWorkspace, onlySession, providerArgs, runCli, startFake } from "../cli/support.ts";

const deep = `${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}`;

for (const provider of ["anthropic", "openai"] as const) {
  test(`${provider}: a 5,000-level tool input and invalid JSON arguments: the model is told, the transcript has the reply, exit 0`, async () => {
    let n = 0;
    const fake = await startFake(provider, {
      script: (): Step => {
        n++;
        if (n === 1) return { toolUses: [{ name: "glob", input: {}, rawArguments: deep }] };
        if (n === 2) return { toolUses: [{ name: "glob", input: {}, rawArguments: '{"pattern": "*.ts",' }] };
        return { text: "done" };
      },
    });
    const ws = makeWorkspace();
    try {
      const r = await runCli([...providerArgs(provider, fake), "--cwd", ws.dir, "-p", "go"], { env: cliEnv(ws, keyEnv(provider)) });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "done\n");
      const second = JSON.stringify(fake.requests[1].messages);
      assert.match(second, /nested more than 100 levels deep/);
      const third = JSON.stringify(fake.requests[2].messages);
      assert.match(third, /they are not a valid JSON object/);
      assert.doesNotMatch(third, /Unrecognized key/);
      const s = onlySession(ws);
      assert.ok(readFileSync(s.transcriptPath, "utf8").includes('{\\"a\\":{\\"a\\":'), "the deep reply is in the transcript, as text");
    } finally {
      await fake.close();
      ws.cleanup();
    }
  });
}
