// Issue 9, security: the file tools checked a path, then opened or renamed it by name; a symlink
// swapped in between (a renameat2 RENAME_EXCHANGE loop) let writes land outside the workspace and
// reads return a file from outside. Now the check is made on what was opened (the descriptor), and
// writes go through the verified folder's descriptor.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createToolset, runToolCall } from "../../src/tools/index.ts";
import type { ToolContext } from "../../src/tools/types.ts";

const SWAP = join(import.meta.dirname, "helpers", "swap.py");

test("write_file, edit_file and read_file under a symlink-swap race: 0 escapes", { timeout: 120_000 }, async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "lethe-race-")));
  const ws = join(base, "ws");
  const outside = join(base, "outside");
  mkdirSync(join(ws, "sub"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(ws, "sub", "secret.txt"), "inside text\n");
  writeFileSync(join(outside, "secret.txt"), "OUTSIDE SECRET\n");
  writeFileSync(join(ws, "sub", "edit.txt"), "alpha\n");
  writeFileSync(join(outside, "edit.txt"), "alpha\n");
  symlinkSync(outside, join(ws, "link"));
  const stop = join(base, "stop");
  const swapper = spawn("python3", [SWAP, join(ws, "sub"), join(ws, "link"), stop], { stdio: ["ignore", "pipe", "pipe"] });
  let swaps = "";
  let swapErr = "";
  swapper.stdout.on("data", (d) => (swaps += d));
  swapper.stderr.on("data", (d) => (swapErr += d));
  const done = new Promise<number | null>((r) => swapper.on("close", (c) => r(c)));
  const tools = createToolset();
  const ctx: ToolContext = { workspace: ws, readState: new Map(), todos: [] };
  let writes = 0;
  let readsOutside = 0;
  let okReads = 0;
  let okWrites = 0;
  try {
    for (let i = 0; i < 400; i++) {
      const w = await runToolCall(tools, { name: "write_file", input: { path: `sub/out-${i}.txt`, content: `written ${i}\n` } }, ctx);
      writes++;
      if (w.isError !== true) okWrites++;
      ctx.readState.clear();
      const r = await runToolCall(tools, { name: "read_file", input: { path: "sub/secret.txt" } }, ctx);
      if (/OUTSIDE SECRET/.test(String(r.content))) readsOutside++;
      else if (r.isError !== true) okReads++;
      await runToolCall(tools, { name: "edit_file", input: { path: "sub/edit.txt", old_string: "alpha", new_string: "ALPHA" } }, ctx);
      await runToolCall(tools, { name: "edit_file", input: { path: "sub/edit.txt", old_string: "ALPHA", new_string: "alpha" } }, ctx);
    }
  } finally {
    writeFileSync(stop, "");
  }
  assert.equal(await done, 0, swapErr);
  const n = Number(swaps.trim());
  const escaped = readdirSync(outside).filter((f) => f.startsWith("out-") || f.startsWith(".out-") || f.includes(".lethe-"));
  console.log(`# ${n} swaps during ${writes} writes, 400 reads and 800 edits; ${okWrites} writes and ${okReads} reads went through inside, the rest were refused; escapes: ${escaped.length} files, ${readsOutside} reads`);
  try {
    assert.ok(n >= 2000, `the attacker made ${n} swaps`);
    assert.deepEqual(escaped, [], "no write landed outside");
    assert.equal(readsOutside, 0, "no read returned the outside file");
    assert.equal(readFileSync(join(outside, "edit.txt"), "utf8"), "alpha\n", "no edit changed the outside file");
    assert.ok(okWrites > 0 && okReads > 0, "the tools still work between swaps");
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
