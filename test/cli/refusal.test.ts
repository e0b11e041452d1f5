// Issue 10 (7): `stop_reason: "refusal"` used to be reported as success (exit 0, end_turn,
// "(no reply)") with the refused turn left in the context; `pause_turn` was an ordinary stop.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Step } from "../support/fakes/common.ts";
import { cliEnv, keyEnv, makeWorkspace, onlySession, providerArgs, runCli, startFake } from "./support.ts";
import { resumeContext } from "../../src/session/transcript.ts";

test("refusal: exit 1 with one line, json is_error, the refused request leaves the context (and a resume agrees)", async () => {
  const fake = await startFake("anthropic", {
    script: (body: any): Step => (/forbidden thing/.test(JSON.stringify(body.messages.at(-1))) ? { text: "I can't help with that.", stopReason: "refusal" } : { text: "Happy to help." }),
  });
  const ws = makeWorkspace();
  try {
    const env = cliEnv(ws, keyEnv("anthropic"));
    const base = [...providerArgs("anthropic", fake), "--cwd", ws.dir];
    assert.equal((await runCli([...base, "-p", "hello"], { env })).code, 0);
    const r = await runCli([...base, "--continue", "--output-format", "json", "-p", "do the forbidden thing"], { env });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^lethe: the model declined this request \(stop_reason refusal\); it was taken out of the session's context/);
    const out = JSON.parse(r.stdout);
    assert.equal(out.is_error, true);
    assert.equal(out.stop_reason, "refusal");
    const next = await runCli([...base, "--continue", "-p", "something else"], { env });
    assert.equal(next.code, 0, next.stderr);
    const sent = JSON.stringify(fake.requests.at(-1).messages);
    assert.match(sent, /hello[\s\S]*Happy to help\.[\s\S]*something else/);
    assert.doesNotMatch(sent, /forbidden thing/, "the refused request is out of the context");
    const s = onlySession(ws);
    assert.match(JSON.stringify(s.transcript.entries), /forbidden thing/, "but still on record");
    assert.doesNotMatch(JSON.stringify(resumeContext(s.transcript.entries)), /forbidden thing/);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("pause_turn: the paused reply is sent back and the turn goes on to the end", async () => {
  let n = 0;
  const fake = await startFake("anthropic", { script: (): Step => (++n === 1 ? { text: "Searching the web…", stopReason: "pause_turn" } : { text: "Found it." }) });
  const ws = makeWorkspace();
  try {
    const r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p", "look it up"], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fake.requests.length, 2);
    const second = fake.requests[1].messages;
    assert.equal(second.at(-1).role, "assistant", "the paused reply goes back as the last message");
    assert.match(JSON.stringify(second.at(-1)), /Searching the web/);
    assert.equal(r.stdout, "Found it.\n");
  } finally {
    await fake.close();
    ws.cleanup();
  }
});
