// A failed turn is closed on record: the next prompt is a request of its own, never merged into
// the failed one (and a resume sees the same).
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseArgs } from "../../src/cli/args.ts";
import { resolveRunConfig } from "../../src/cli/config.ts";
import { AgentSession } from "../../src/cli/session.ts";
import { ModelError } from "../../src/model/types.ts";
import { loadTranscript, resumeContext } from "../../src/session/transcript.ts";
import { scriptedClient } from "../support/scripted-client.ts";
import { makeWorkspace } from "./support.ts";

test("a failed model call closes the turn with a note; the next prompt is a separate user message", async () => {
  const ws = makeWorkspace();
  try {
    const cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--context-window", "50000", "--max-output-tokens", "2000"]), { ANTHROPIC_API_KEY: "k" }, { headless: true, userSettingsPath: `${ws.home}/none.json` });
    cfg.retry = { maxAttempts: 1, baseMs: 1, maxMs: 1 };
    const client = scriptedClient([new ModelError("invalid_request", "anthropic: 400 bad request"), "second answer"]);
    const session = new AgentSession(cfg, {}, client);
    await session.start();
    await assert.rejects(session.run("first question"), /400 bad request/);
    const r = await session.run("second question");
    assert.equal(r.text, "second answer");
    const sent = client.requests.at(-1)!.messages;
    // (the client keeps a reference to the history, which has the reply appended by now)
    const last = JSON.stringify(sent.filter((m) => m.role === "user").at(-1));
    assert.match(last, /second question/);
    assert.doesNotMatch(last, /first question/, "not merged");
    assert.match(JSON.stringify(sent), /first question[\s\S]*"role":"assistant"[\s\S]*failed before it was finished[\s\S]*second question/);
    const transcriptPath = session.transcript.path;
    session.close();
    assert.deepEqual(resumeContext(loadTranscript(transcriptPath).entries).map((m) => m.role), ["user", "assistant", "user", "assistant"]);
  } finally {
    ws.cleanup();
  }
});

test("a session's cost goes on across --continue: the resumed session starts from what its transcript's request lines add up to", async () => {
  const ws = makeWorkspace();
  try {
    const argv = ["--cwd", ws.dir, "--model", "claude-sonnet-4-6", "--context-window", "50000", "--max-output-tokens", "2000"];
    const cfg = resolveRunConfig(parseArgs(argv), { ANTHROPIC_API_KEY: "k" }, { headless: true, userSettingsPath: `${ws.home}/none.json` });
    const first = new AgentSession(cfg, {}, scriptedClient(["one", "two"]));
    await first.start();
    await first.run("first");
    await first.run("second");
    const spent = first.cost()!;
    assert.ok(spent > 0);
    await first.end();
    const again = new AgentSession(resolveRunConfig(parseArgs([...argv, "--continue"]), { ANTHROPIC_API_KEY: "k" }, { headless: true, userSettingsPath: `${ws.home}/none.json` }), {}, scriptedClient(["three"]));
    await again.start({ continueLatest: true });
    assert.equal(again.cost()!.toFixed(9), spent.toFixed(9), "not back to $0");
    const r = await again.run("third");
    assert.ok(again.cost()! > spent);
    assert.equal((again.cost()! - spent).toFixed(9), r.costUsd!.toFixed(9), "the run's own cost is still the run's");
    await again.end();
  } finally {
    ws.cleanup();
  }
});

test("after --continue the transcript writer knows the line of every message read back, so a later boundary that removes one names it", async () => {
  const ws = makeWorkspace();
  try {
    const argv = ["--cwd", ws.dir, "--context-window", "50000", "--max-output-tokens", "2000"];
    const env = { ANTHROPIC_API_KEY: "k" };
    const first = new AgentSession(resolveRunConfig(parseArgs(argv), env, { headless: true, userSettingsPath: `${ws.home}/none.json` }), {}, scriptedClient(["one", "two"]));
    await first.start();
    await first.run("first");
    await first.run("second");
    const path = first.transcript.path;
    await first.end();
    const lines = loadTranscript(path).entries.flatMap((e) => (e.type === "message" ? [e.uuid] : []));
    const again = new AgentSession(resolveRunConfig(parseArgs([...argv, "--continue"]), env, { headless: true, userSettingsPath: `${ws.home}/none.json` }), {}, scriptedClient(["three"]));
    await again.start({ continueLatest: true });
    assert.equal(again.history.length, 4);
    assert.deepEqual(again.history.map((m) => again.transcript.uuidOf?.(m)), lines, "each resumed message is known by its line's uuid");
    await again.end();
  } finally {
    ws.cleanup();
  }
});
