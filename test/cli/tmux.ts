// A real terminal for the REPL tests: tmux (send-keys / capture-pane) runs the built `lethe`.
// Tests skip (with a note) when tmux is not installed; .ci/run installs it.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { builtBin, ROOT, type Workspace } from "./support.ts";

export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
export const TMUX_SKIP = hasTmux ? false : "tmux is not installed (apt-get install -y tmux)";
const socket = `lethe-test-${process.pid}`;
export const tmux = (...args: string[]) => spawnSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });

export class Terminal {
  constructor(readonly name: string) {}

  start(ws: Workspace, env: NodeJS.ProcessEnv, args: string[]) {
    // A wrapper script: exact environment and arguments, and the exit code left on screen.
    const script = join(ws.dir, "..", `${this.name}.sh`);
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const exports = Object.entries(env)
      .filter(([k, v]) => v !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
      .map(([k, v]) => `export ${k}=${q(v!)}`)
      .join("\n");
    writeFileSync(script, `#!/bin/sh\n${exports}\nexport TERM=xterm-256color\ncd ${q(ROOT)}\n${q(process.execPath)} ${q(builtBin())} ${args.map(q).join(" ")}\necho "LETHE-EXITED $?"\nsleep 600\n`);
    chmodSync(script, 0o755);
    const r = tmux("new-session", "-d", "-s", this.name, "-x", "160", "-y", "50", script);
    assert.equal(r.status, 0, r.stderr);
  }

  screen(): string {
    return tmux("capture-pane", "-p", "-J", "-S", "-1000", "-t", this.name).stdout;
  }

  keys(...keys: string[]) {
    const r = tmux("send-keys", "-t", this.name, ...keys);
    assert.equal(r.status, 0, r.stderr);
  }

  /** Types a line and presses Enter. */
  type(line: string) {
    this.keys("-l", line);
    this.keys("Enter");
  }

  /** Waits until the screen (after `from` characters) matches; returns the new part. */
  async waitFor(pattern: RegExp, from = 0, what = String(pattern)): Promise<string> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const text = this.screen().slice(from);
      if (pattern.test(text)) return text;
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; screen:\n${this.screen()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  mark(): number {
    return this.screen().trimEnd().length;
  }
}
