// Issue 9, security: lethe's API key never reaches a command the model runs (so never the
// transcript or the next request), and no printed line or JSON output carries a credential.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import type { Step } from "../support/fakes/common.ts";
import { closedPort, cliEnv, makeWorkspace, providerArgs, runCli, startFake } from "../cli/support.ts";

const KEY = "sk-ant-test-SECRET-0123456789abcdef";

function allFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...allFiles(p));
    else out.push(p);
  }
  return out;
}

test("bash runs without lethe's credentials: `env` shows no key, in the tool result, the transcript or the next request; passEnv lets a named one through", async () => {
  const fake = await startFake("anthropic", {
    script: (body: any): Step => (body.messages.length === 1 ? { toolUses: [{ name: "bash", input: { command: "env; echo OTHER=$OTHER_VAR" } }] } : { text: "done" }),
  });
  const ws = makeWorkspace();
  try {
    const env = cliEnv(ws, { ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: `${KEY}-openai`, OTHER_VAR: "kept" });
    const r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "--yes", "--output-format", "json", "-p", "print the environment"], { env });
    assert.equal(r.code, 0, r.stderr);
    const sent = JSON.stringify(fake.requests.at(-1).messages);
    assert.match(sent, /OTHER=kept/, "the command ran with the rest of the environment");
    assert.doesNotMatch(sent, /SECRET/);
    for (const f of allFiles(join(ws.dir, ".lethe"))) assert.doesNotMatch(readFileSync(f, "utf8"), /SECRET/, f);
    assert.doesNotMatch(r.stdout + r.stderr, /SECRET/);

    mkdirSync(join(ws.home, ".lethe"), { recursive: true });
    writeFileSync(join(ws.home, ".lethe", "settings.json"), JSON.stringify({ passEnv: ["OPENAI_API_KEY"] }));
    await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "--yes", "-p", "print the environment"], { env });
    const second = JSON.stringify(fake.requests.at(-1).messages);
    assert.match(second, /OPENAI_API_KEY=sk-ant-test-SECRET-0123456789abcdef-openai/, "passEnv lets the named variable through");
    assert.doesNotMatch(second, /ANTHROPIC_API_KEY=/);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("a base URL with user:KEY@ and a failing server: no credential on stderr or in the JSON result", async () => {
  const port = await closedPort();
  const ws = makeWorkspace({ retry: { maxAttempts: 2, baseMs: 1, maxMs: 2 } });
  try {
    for (const format of ["text", "json", "stream-json"]) {
      const r = await runCli(["--provider", "openai", "--model", "gpt-4o", "--base-url", `http://user:${KEY}@127.0.0.1:${port}/v1`, "--cwd", ws.dir, "--verbose", "--output-format", format, "-p", "hello"], {
        env: cliEnv(ws, { OPENAI_API_KEY: KEY }),
      });
      assert.equal(r.code, 1);
      assert.doesNotMatch(r.stdout + r.stderr, /SECRET/, `${format}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /^lethe: /m);
    }
    const bad = await runCli(["--provider", "openai", "--base-url", `http://user:${KEY}@[bad`, "--cwd", ws.dir, "-p", "x"], { env: cliEnv(ws, { OPENAI_API_KEY: KEY }) });
    assert.equal(bad.code, 2);
    assert.doesNotMatch(bad.stderr, /SECRET/, bad.stderr);
  } finally {
    ws.cleanup();
  }
});

test("every error path (a server echoing the key in a 401, 5xx, a cut stream, a malformed event, rate limits): no credential in any output or file", async () => {
  const faults: Step[] = [
    { fault: "status", status: 401, body: { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${KEY}` } } },
    { fault: "server_error" },
    { fault: "cut", afterEvents: 2 },
    { fault: "malformed", afterEvents: 1 },
    { fault: "rate_limit", retryAfterMs: 1 },
    { fault: "stream_error", message: `upstream said ${KEY}` },
  ];
  for (const provider of ["anthropic", "openai"] as const) {
    for (const fault of faults) {
      const fake = await startFake(provider, { script: (): Step => fault });
      const ws = makeWorkspace({ retry: { maxAttempts: 2, baseMs: 1, maxMs: 2 } });
      try {
        for (const format of ["text", "json", "stream-json"]) {
          const r = await runCli([...providerArgs(provider, fake), "--cwd", ws.dir, "--verbose", "--output-format", format, "-p", "hello"], {
            env: cliEnv(ws, provider === "anthropic" ? { ANTHROPIC_API_KEY: KEY } : { OPENAI_API_KEY: KEY }),
          });
          assert.notEqual(r.code, 0, `${provider} ${JSON.stringify(fault)}`);
          assert.doesNotMatch(r.stdout + r.stderr, /SECRET/, `${provider} ${JSON.stringify(fault)} ${format}: ${r.stdout}${r.stderr}`);
        }
        for (const f of allFiles(join(ws.dir, ".lethe"))) assert.doesNotMatch(readFileSync(f, "utf8"), /SECRET/, f);
      } finally {
        await fake.close();
        ws.cleanup();
      }
    }
  }
});
