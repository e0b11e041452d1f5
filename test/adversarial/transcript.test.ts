// Issue 9, data: a transcript line holding a null block used to make the session impossible to
// resume; a transcript written by a newer format version got older lines appended to it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Step } from "../support/fakes/common.ts";
import { cliEnv, keyEnv, makeWorkspace, providerArgs, runCli, startFake } from "../cli/support.ts";

const ID = "20260101-000000-000-abcdef0123";

function session(ws: { dir: string }, lines: unknown[]): string {
  const dir = join(ws.dir, ".lethe", "sessions", ID);
  mkdirSync(join(dir, "tool-results"), { recursive: true });
  const path = join(dir, "transcript.jsonl");
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return path;
}

test("a null block in the transcript: resume works, the block is left out with a warning, the rest is sent", async () => {
  const fake = await startFake("anthropic", { script: (): Step => ({ text: "resumed fine" }) });
  const ws = makeWorkspace();
  try {
    session(ws, [
      { type: "session", id: ID, created: "2026-01-01T00:00:00.000Z", cwd: ws.dir, version: 1 },
      { type: "message", uuid: "u1", ts: "2026-01-01T00:00:01.000Z", message: { role: "user", content: [null, { type: "text", text: "the original question" }, 42] } },
      { type: "message", uuid: "a1", ts: "2026-01-01T00:00:02.000Z", message: { role: "assistant", content: [{ type: "text", text: "the original answer" }] } },
    ]);
    const r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "--continue", "-p", "and now?"], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "resumed fine\n");
    assert.match(r.stderr, /2 content block\(s\) that were not objects left out/);
    assert.match(JSON.stringify(fake.requests[0].messages), /the original question[\s\S]*the original answer[\s\S]*and now\?/);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("a transcript from a newer format version is not appended to: one line, exit 1, the file unchanged", async () => {
  const fake = await startFake("anthropic", { script: (): Step => ({ text: "should not be asked" }) });
  const ws = makeWorkspace();
  try {
    const path = session(ws, [
      { type: "session", id: ID, created: "2026-01-01T00:00:00.000Z", cwd: ws.dir, version: 99 },
      { type: "message", uuid: "u1", ts: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "from the future" } },
    ]);
    const before = readFileSync(path, "utf8");
    const r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "--continue", "-p", "x"], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /was written by a newer lethe \(transcript format 99; this one writes \d+\); not appending to it/);
    assert.equal(r.stderr.trim().split("\n").length, 1);
    assert.equal(readFileSync(path, "utf8"), before);
    assert.equal(fake.requests.length, 0);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});
