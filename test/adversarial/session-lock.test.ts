// Issue 9, data: two processes on one session (`--continue` twice at once) used to interleave
// their turns in one transcript. The second now stops with one line naming the first; a lock left
// by a killed process is taken over.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Step } from "../support/fakes/common.ts";
import { builtBin, cliEnv, keyEnv, makeWorkspace, onlySession, providerArgs, runCli, startFake } from "../cli/support.ts";

test("a second --continue on a session in use gets one line naming the other process; a stale lock is taken over", async () => {
  let open!: () => void;
  let gate: Promise<void> = Promise.resolve();
  const fake = await startFake("anthropic", { script: async (): Promise<Step> => (await gate, { text: "answer" }) });
  const ws = makeWorkspace();
  try {
    const env = cliEnv(ws, keyEnv("anthropic"));
    const base = [...providerArgs("anthropic", fake), "--cwd", ws.dir];
    assert.equal((await runCli([...base, "-p", "first"], { env })).code, 0);

    gate = new Promise<void>((r) => (open = r));
    const before = fake.requests.length;
    const first = spawn(process.execPath, [builtBin(), ...base, "--continue", "-p", "slow one"], { env, stdio: ["ignore", "pipe", "pipe"] });
    const firstDone = new Promise<number | null>((r) => first.on("close", (c) => r(c)));
    while (fake.requests.length === before) await new Promise((r) => setTimeout(r, 20));

    const second = await runCli([...base, "--continue", "-p", "meanwhile"], { env });
    assert.equal(second.code, 1);
    assert.match(second.stderr, new RegExp(`^lethe: session \\S+ is in use by another lethe process \\(pid ${first.pid}\\)`));
    assert.equal(second.stderr.trim().split("\n").length, 1);

    open();
    assert.equal(await firstDone, 0);
    const s = onlySession(ws);
    const users = s.transcript.entries.filter((e) => e.type === "message" && (e as { message: { role: string } }).message.role === "user");
    assert.equal(users.length, 2, "the refused run wrote nothing into the session");
    assert.deepEqual(readdirSync(s.dir).includes("lock"), false, "released");

    // A lock left by a process that is gone (a pid that cannot exist) does not block.
    writeFileSync(join(s.dir, "lock"), "999999999\n");
    const third = await runCli([...base, "--continue", "-p", "after a crash"], { env });
    assert.equal(third.code, 0, third.stderr);
  } finally {
    open?.();
    await fake.close();
    ws.cleanup();
  }
});
