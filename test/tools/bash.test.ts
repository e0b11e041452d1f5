// bash: exit codes, streaming, the hard output cap (SAFETY: 1 GB of output leaves memory bounded),
// timeouts and cancels that kill the whole process group (SAFETY: children die too).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BASH_LIMITS, CappedOutput, createBashTool } from "../../src/tools/bash.ts";
import { runToolCall } from "../../src/tools/index.ts";
import { fixture, isAlive, text, waitFor } from "./helpers.ts";

test("runs in the workspace, interleaves stdout and stderr, reports the exit code", async () => {
  const f = fixture();
  try {
    const ok = await f.call("bash", { command: "pwd; echo out; echo err >&2" });
    assert.equal(ok.isError, undefined);
    assert.equal(text(ok), `${f.ws}\nout\nerr\nexit code: 0`);
    const bad = await f.call("bash", { command: "echo nope; exit 3" });
    assert.match(text(bad), /^nope\nexit code: 3$/);
    const silent = await f.call("bash", { command: "true" });
    assert.equal(text(silent), "(no output)\nexit code: 0");
    // stdin is closed: a command reading it sees EOF instead of hanging.
    assert.match(text(await f.call("bash", { command: "cat; echo done" })), /^done\nexit code: 0$/);
  } finally {
    f.cleanup();
  }
});

test("streams output through onOutput", async () => {
  const f = fixture();
  try {
    const chunks: string[] = [];
    const r = await f.call("bash", { command: "for i in 1 2 3; do echo line$i; done" }, { onOutput: (c) => chunks.push(c) });
    assert.equal(chunks.join(""), "line1\nline2\nline3\n");
    assert.match(text(r), /line3\nexit code: 0$/);
  } finally {
    f.cleanup();
  }
});

test("asks permission first; a refusal runs nothing", async () => {
  const f = fixture();
  try {
    const asked: { tool: string; summary: string }[] = [];
    const denied = await f.call("bash", { command: "touch made.txt", description: "make a file" }, {
      askPermission: async (r) => {
        asked.push(r);
        return false;
      },
    });
    assert.equal(denied.isError, true);
    assert.match(text(denied), /denied/);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.tool, "bash");
    assert.equal(asked[0]!.summary, "make a file: touch made.txt");
    // The host sees the validated input too (for permission rules).
    assert.equal((asked[0] as { input?: { command?: string } }).input?.command, "touch made.txt");
    assert.ok(!existsSync(join(f.ws, "made.txt")));
    const allowed = await f.call("bash", { command: "touch made.txt" }, { askPermission: async () => true });
    assert.equal(allowed.isError, undefined);
    assert.ok(existsSync(join(f.ws, "made.txt")));
  } finally {
    f.cleanup();
  }
});

test("CappedOutput keeps the head and the tail within bounds and counts the rest", () => {
  const c = new CappedOutput(100, 50);
  for (let i = 0; i < 10_000; i++) c.push(`${String(i).padStart(5, "0")}\n`);
  assert.ok(c.retained <= 100 + 50 * 2 + 6, `retained ${c.retained}`);
  const t = c.text();
  assert.ok(t.startsWith("00000\n00001\n"));
  assert.ok(t.endsWith("09998\n09999\n"));
  assert.equal(c.total, 60_000);
  assert.equal(c.omitted, 60_000 - 150);
  assert.match(t, /\[59,850 chars omitted\]/);
  const small = new CappedOutput(100, 50);
  small.push("short");
  assert.equal(small.text(), "short");
  assert.equal(small.omitted, 0);
});

test("SAFETY: a command printing 1 GB is cut off and memory stays bounded", async (t) => {
  const f = fixture();
  try {
    global.gc?.();
    const rssBefore = process.memoryUsage.rss();
    let peak = rssBefore;
    let streamed = 0;
    let calls = 0;
    const r = await f.call("bash", { command: "head -c 1000000000 /dev/zero | tr '\\0' a; echo finished-normally" }, {
      onOutput: (c) => {
        streamed += c.length;
        if (++calls % 64 === 0) peak = Math.max(peak, process.memoryUsage.rss());
      },
    });
    peak = Math.max(peak, process.memoryUsage.rss());
    const out = text(r);
    assert.equal(r.isError, true);
    assert.match(out, /killed: output passed 50 MB/);
    assert.ok(!out.includes("finished-normally"), "the command was killed before it finished");
    assert.match(out, /exit code: none \(killed by SIG(TERM|KILL)\)|exit code: \d+/);
    // What is kept is the head and the tail only.
    const kept = BASH_LIMITS.headChars + BASH_LIMITS.tailChars;
    assert.ok(out.length < kept + 1_000, `kept ${out.length} chars`);
    assert.match(out, /^a{30000}\n\n… \[[\d,]+ chars omitted\] …\n\na{10000}\n/);
    // Cut off near the kill cap, far below 1 GB.
    assert.ok(streamed <= BASH_LIMITS.killBytes + 1024 * 1024, `streamed ${streamed}`);
    assert.ok(streamed >= BASH_LIMITS.killBytes - 1024 * 1024, `streamed ${streamed}`);
    const growth = peak - rssBefore;
    t.diagnostic(`streamed ${streamed} chars before the kill; kept ${out.length} chars; rss ${(rssBefore / 1048576).toFixed(0)} MB → peak ${(peak / 1048576).toFixed(0)} MB (+${(growth / 1048576).toFixed(1)} MB)`);
    assert.ok(growth < 300 * 1024 * 1024, `rss grew by ${(growth / 1048576).toFixed(0)} MB`);
  } finally {
    f.cleanup();
  }
});

test("SAFETY: an endless printer (yes) is killed by the output cap, not by the timeout", async () => {
  const f = fixture();
  try {
    const r = await f.call("bash", { command: "yes" });
    assert.match(text(r), /killed: output passed/);
    assert.doesNotMatch(text(r), /timed out/);
    assert.ok(text(r).length < BASH_LIMITS.headChars + BASH_LIMITS.tailChars + 1_000);
  } finally {
    f.cleanup();
  }
});

test("SAFETY: a timeout kills the command's children too", async () => {
  const f = fixture();
  try {
    const r = await f.call("bash", { command: "sleep 300 & echo $! > child.pid; echo started; wait", timeout_ms: 1_000 });
    assert.equal(r.isError, true);
    assert.match(text(r), /^started\n\[timed out after 1 s; the command and its child processes were killed\]/);
    const pid = Number(readFileSync(join(f.ws, "child.pid"), "utf8"));
    assert.ok(pid > 0);
    assert.equal(isAlive(pid), false, `child ${pid} still alive`);
  } finally {
    f.cleanup();
  }
});

test("SAFETY: children that ignore SIGTERM get SIGKILL", async () => {
  const f = fixture();
  try {
    const tools = [createBashTool({ killGraceMs: 200 })];
    const r = await runToolCall(tools, { name: "bash", input: { command: "trap '' TERM; sleep 300 & echo $! > child.pid; wait", timeout_ms: 500 } }, f.ctx);
    assert.match(text(r), /timed out/);
    const pid = Number(readFileSync(join(f.ws, "child.pid"), "utf8"));
    assert.equal(isAlive(pid), false, `child ${pid} still alive`);
  } finally {
    f.cleanup();
  }
});

test("SAFETY: aborting ctx.signal kills the process group", async () => {
  const f = fixture();
  try {
    const ac = new AbortController();
    const pidFile = join(f.ws, "child.pid");
    const running = f.call("bash", { command: "sleep 300 & echo $! > child.pid.tmp; mv child.pid.tmp child.pid; wait" }, { signal: ac.signal });
    await waitFor(() => existsSync(pidFile));
    const pid = Number(readFileSync(pidFile, "utf8"));
    assert.equal(isAlive(pid), true);
    ac.abort();
    const r = await running;
    assert.equal(r.isError, true);
    assert.match(text(r), /cancelled; the command and its child processes were killed/);
    assert.equal(isAlive(pid), false, `child ${pid} still alive`);
    // An already-aborted signal runs nothing.
    const before = await f.call("bash", { command: "touch never.txt" }, { signal: ac.signal });
    assert.equal(before.isError, true);
    assert.ok(!existsSync(join(f.ws, "never.txt")));
  } finally {
    f.cleanup();
  }
});

test("a timeout over the maximum is capped, with a note; background holders do not hang the call", async () => {
  const f = fixture();
  try {
    const r = await f.call("bash", { command: "echo hi", timeout_ms: 10_000_000 });
    assert.match(text(r), /timeout_ms 10,000,000 was capped at 600,000/);
    // A background process keeping stdout open: the call returns once bash exits.
    const bg = await f.call("bash", { command: "(sleep 30; echo late) & echo $$ > group.pid; echo now" });
    assert.match(text(bg), /^now\n/);
    assert.match(text(bg), /background processes still hold its output/);
    assert.match(text(bg), /exit code: 0$/);
    process.kill(-Number(readFileSync(join(f.ws, "group.pid"), "utf8")), "SIGKILL");
  } finally {
    f.cleanup();
  }
});
