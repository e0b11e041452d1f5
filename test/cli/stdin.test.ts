// `echo data | lethe -p "explain this"`: the piped text goes with the prompt (as with claude -p).
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Step } from "../support/fakes/common.ts";
import { cliEnv, keyEnv, makeWorkspace, providerArgs, runCli, startFake } from "./support.ts";

test("piped stdin is sent with the -p prompt; -p alone takes the prompt from stdin", async () => {
  const fake = await startFake("anthropic", { script: (): Step => ({ text: "explained" }) });
  const ws = makeWorkspace();
  try {
    const env = cliEnv(ws, keyEnv("anthropic"));
    let r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p", "explain this"], { env, input: "TypeError: x is undefined\n    at main (app.js:3:5)\n" });
    assert.equal(r.code, 0, r.stderr);
    const sent = fake.requests.at(-1).messages[0].content;
    const text = typeof sent === "string" ? sent : sent.map((b: { text?: string }) => b.text ?? "").join("");
    assert.equal(text, "explain this\n\n<stdin>\nTypeError: x is undefined\n    at main (app.js:3:5)\n</stdin>");
    r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p"], { env, input: "just the prompt\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.match(JSON.stringify(fake.requests.at(-1).messages[0]), /just the prompt\\n"/);
    assert.doesNotMatch(JSON.stringify(fake.requests.at(-1).messages[0]), /<stdin>/);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});
