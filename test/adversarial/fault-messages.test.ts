// Issue 9, input: fault messages that pointed the wrong way. A 200 that is not an event stream
// was reported as "connection cut mid-stream"; a garbage transcript as "no session to continue".
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, keyEnv, makeWorkspace, runCli } from "../cli/support.ts";

test("a 200 that is not an event stream says so (both providers), not 'connection cut'", async () => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<html><body>Welcome to the gateway</body></html>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  const ws = makeWorkspace({ retry: { maxAttempts: 1, baseMs: 1, maxMs: 1 } });
  try {
    for (const [provider, url, model] of [["anthropic", `http://127.0.0.1:${port}`, "claude-sonnet-4-6"], ["openai", `http://127.0.0.1:${port}/v1`, "gpt-4o"]] as const) {
      const r = await runCli(["--provider", provider, "--base-url", url, "--model", model, "--cwd", ws.dir, "-p", "hi"], { env: cliEnv(ws, keyEnv(provider)) });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /answered 200 but sent no stream (events|chunks) \(not an event stream: check the base URL/, r.stderr);
      assert.doesNotMatch(r.stderr, /connection cut/);
    }
  } finally {
    server.close();
    ws.cleanup();
  }
});

test("--continue with a garbage transcript names the session and what is wrong, not 'no session to continue'", async () => {
  const ws = makeWorkspace();
  try {
    const dir = join(ws.dir, ".lethe", "sessions", "20260101-000000-000-abcdef0123");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "transcript.jsonl"), "this is not json\n{\"also\": broken\nnull\n");
    const r = await runCli(["--provider", "anthropic", "--cwd", ws.dir, "--continue", "-p", "hi"], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the latest session 20260101-000000-000-abcdef0123 has no readable message \(.*transcript\.jsonl:\d+: /);
    assert.equal(r.stderr.trim().split("\n").length, 1);
  } finally {
    ws.cleanup();
  }
});

test("a read-only workspace says so (not 'ENOENT … mkdir')", async () => {
  const { spawnSync } = await import("node:child_process");
  const { chmodSync, mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const ws = makeWorkspace();
  const dir = mkdtempSync(join(tmpdir(), "lethe-ro-"));
  // A real read-only file system where we may mount one (root); otherwise a folder we may not write.
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", dir]).status === 0;
  if (!mounted) chmodSync(dir, 0o555);
  try {
    const r = await runCli(["--provider", "anthropic", "--cwd", dir, "-p", "hi"], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 1);
    assert.match(r.stderr, mounted ? /cannot keep the session in .*\.lethe: the file system is read-only \(EROFS\); run lethe in a folder you can write to/ : /cannot keep the session in .*\.lethe: permission denied/);
    assert.doesNotMatch(r.stderr, /ENOENT/);
  } finally {
    if (mounted) spawnSync("umount", [dir]);
    else chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
    ws.cleanup();
  }
});
