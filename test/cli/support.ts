// Helpers for the CLI's end-to-end tests: the built CLI runs as a subprocess (bin/lethe.js, the
// real entry point, on dist/ as an installed package would) against the fake servers, in a
// temporary workspace with its own HOME. `npm test` builds dist/ first.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startFakeAnthropic } from "../support/fakes/anthropic.ts";
import { startFakeOpenAI } from "../support/fakes/openai.ts";
import type { FakeOptions, FakeServer } from "../support/fakes/common.ts";
import { type LoadedTranscript, loadTranscript } from "../../src/session/transcript.ts";
import type { RunConfig } from "../../src/cli/config.ts";
import { createEngine } from "../../src/engine/index.ts";

export const ROOT = resolve(import.meta.dirname, "../..");
export const BIN = join(ROOT, "bin", "lethe.js");
const BUILT = join(ROOT, "dist", "cli", "main.js");

/** The newest modification time under a folder (the sources the build came from). */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

let checked = false;

/** bin/lethe.js, once dist/ is known to be built from the current sources. */
export function builtBin(): string {
  if (!checked) {
    // A stale build would test old code: refuse it with the fix, rather than pass or fail on it.
    if (!existsSync(BUILT)) throw new Error("dist/ is missing: run `npm run build` (npm test does) before the CLI tests");
    if (newestMtime(join(ROOT, "src")) > newestMtime(join(ROOT, "dist")) + 1) {
      throw new Error("dist/ is older than src/: run `npm run build` (npm test does) before the CLI tests");
    }
    checked = true;
  }
  return BIN;
}

export type Provider = "anthropic" | "openai";

export const MODELS: Record<Provider, string> = { anthropic: "claude-sonnet-4-6", openai: "gpt-4o" };

export function startFake(provider: Provider, opts: FakeOptions): Promise<FakeServer> {
  return provider === "anthropic" ? startFakeAnthropic(opts) : startFakeOpenAI(opts);
}

export interface Workspace {
  dir: string;
  home: string;
  cleanup(): void;
}

export function makeWorkspace(settings?: unknown): Workspace {
  const base = mkdtempSync(join(tmpdir(), "lethe-cli-"));
  const dir = join(base, "ws");
  const home = join(base, "home");
  mkdirSync(dir, { recursive: true });
  mkdirSync(home, { recursive: true });
  if (settings !== undefined) {
    mkdirSync(join(dir, ".lethe"), { recursive: true });
    writeFileSync(join(dir, ".lethe", "settings.json"), typeof settings === "string" ? settings : JSON.stringify(settings, null, 2));
  }
  return { dir, home, cleanup: () => removeTree(base) };
}

/**
 * Removes a test's folder. A lethe killed with its terminal (tmux kill-server) may still be
 * writing its transcript as the folder goes, so ENOTEMPTY gets a fresh pass (each pass lists
 * the folder again), for up to ~5 s.
 */
export function removeTree(path: string): void {
  for (let pass = 1; ; pass++) {
    try {
      rmSync(path, { recursive: true, force: true });
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (pass >= 25 || (code !== "ENOTEMPTY" && code !== "EBUSY")) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
}

/** A clean environment: no provider variables from the machine running the tests. */
export function cliEnv(ws: Workspace, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(ANTHROPIC_|OPENAI_|LETHE_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, HOME: ws.home, NO_COLOR: "1", LETHE_USE_DIST: "1", ...extra };
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Whether two dollar amounts are the same sum: the json result prices the run's summed usage, the
 * transcript each request, and prices are multiples of $0.05 per million tokens, so a total can sit
 * exactly on a half-millionth and round either way under toFixed(6). Apart by less than 1e-9.
 */
export function sameCost(a: number, b: number): boolean {
  return Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) < 1e-9;
}

/** Runs the CLI to completion (asynchronously: the fake server lives in this process). */
export function runCli(args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string; input?: string }): Promise<CliRun> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [builtBin(), ...args], { cwd: opts.cwd ?? ROOT, env: opts.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code, signal) => resolveRun({ code, signal, stdout, stderr }));
    child.stdin.end(opts.input ?? "");
  });
}

/** A port on 127.0.0.1 that nothing listens on (a server that is down). */
export async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** Provider flags for a fake server. */
export function providerArgs(provider: Provider, fake: FakeServer): string[] {
  return ["--provider", provider, "--base-url", fake.url, "--model", MODELS[provider]];
}

export function keyEnv(provider: Provider): Record<string, string> {
  return provider === "anthropic" ? { ANTHROPIC_API_KEY: "test-key" } : { OPENAI_API_KEY: "test-key" };
}

/** The only session of a workspace (its folder and loaded transcript). */
export function onlySession(ws: Workspace): { id: string; dir: string; transcript: LoadedTranscript; transcriptPath: string } {
  const root = join(ws.dir, ".lethe", "sessions");
  const ids = readdirSync(root);
  if (ids.length !== 1) throw new Error(`expected one session, found ${ids.length}`);
  const dir = join(root, ids[0]!);
  const transcriptPath = join(dir, "transcript.jsonl");
  return { id: ids[0]!, dir, transcript: loadTranscript(transcriptPath), transcriptPath };
}

export function readText(path: string): string {
  return readFileSync(path, "utf8");
}

/** Is this request body a summary request (tools forbidden)? */
export function isSummaryRequest(body: any): boolean {
  const tc = body?.tool_choice;
  return tc === "none" || tc?.type === "none";
}

/** The text of the last message of a request, whatever the provider's shape. */
export function lastMessageText(body: any): string {
  return JSON.stringify(body?.messages?.at(-1) ?? "");
}

/** Whether a request comes from a subagent (its system prompt says so). */
export function isSubagentRequest(body: any): boolean {
  const system = Array.isArray(body?.system) ? body.system.map((b: any) => b.text).join("") : typeof body?.system === "string" ? body.system : JSON.stringify(body?.messages?.[0] ?? "");
  return system.includes("You are a lethe subagent");
}

/** Tool-call ids of a request (Anthropic tool_use / OpenAI tool_calls) and result ids. */
export function idsOf(body: any): { uses: string[]; results: string[] } {
  const uses: string[] = [];
  const results: string[] = [];
  for (const m of body?.messages ?? []) {
    if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls) uses.push(c.id);
    if (m.role === "tool" && m.tool_call_id) results.push(m.tool_call_id);
    if (Array.isArray(m.content)) {
      for (const b of m.content) {
        if (b?.type === "tool_use") uses.push(b.id);
        if (b?.type === "tool_result") results.push(b.tool_use_id);
      }
    }
  }
  return { uses, results };
}

/** The auto-compact threshold an engine built from a run configuration works to (what the CLI shows). */
export function thresholdOf(cfg: RunConfig): number {
  return createEngine({ contextWindow: cfg.contextWindow, maxOutputTokens: cfg.maxOutputTokens, config: cfg.compaction }).threshold;
}
