// bash: runs a command with /bin/bash -c in the workspace, in its own process group, so a
// timeout, a cancel or runaway output kills the command and every child it started. Output is
// kept within a hard cap (head + tail) however much the command prints.
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { z } from "zod";
import type { Tool, ToolOutcome } from "./types.ts";
import { fail, fmt, formatBytes, refusal, workspaceRoot } from "./util.ts";

import { childEnv } from "./credentials.ts";

// lethe's own credentials never reach a command the model runs (`env` would put the key in the
// transcript and the next request); ./credentials.ts also keeps them out of /proc/<lethe>/environ.
export { CREDENTIAL_VARS, childEnv } from "./credentials.ts";

export interface BashLimits {
  /** Default 120 s. */
  defaultTimeoutMs: number;
  /** Longest timeout the model may ask for: 600 s. */
  maxTimeoutMs: number;
  /** Chars kept from the start of the output. */
  headChars: number;
  /** Chars kept from the end of the output. */
  tailChars: number;
  /** Bytes of output after which the command is killed. */
  killBytes: number;
  /** Between SIGTERM and SIGKILL. */
  killGraceMs: number;
  /** After bash exits, how long background processes may keep the output pipes open. */
  exitDrainMs: number;
}

export const BASH_LIMITS: BashLimits = {
  defaultTimeoutMs: 120_000,
  maxTimeoutMs: 600_000,
  headChars: 30_000,
  tailChars: 10_000,
  killBytes: 50 * 1024 * 1024,
  killGraceMs: 2_000,
  exitDrainMs: 500,
};

const schema = z.strictObject({
  command: z.string().min(1).describe("The command line, run with /bin/bash -c in the workspace root."),
  timeout_ms: z.number().int().positive().optional().describe("Timeout in milliseconds (default 120000, max 600000)."),
  description: z.string().optional().describe("A few words on what the command does, shown to the user."),
});

export type BashInput = z.infer<typeof schema>;

/** Keeps the first `headMax` and the last `tailMax` chars of a stream, counting the rest. */
export class CappedOutput {
  private head = "";
  private tailParts: string[] = [];
  private tailLen = 0;
  /** Chars pushed in all. */
  total = 0;

  constructor(
    private readonly headMax: number,
    private readonly tailMax: number,
  ) {}

  push(s: string): void {
    this.total += s.length;
    if (this.head.length < this.headMax) {
      const take = this.headMax - this.head.length;
      this.head += s.slice(0, take);
      s = s.slice(take);
      if (s === "") return;
    }
    this.tailParts.push(s);
    this.tailLen += s.length;
    if (this.tailLen > this.tailMax * 2) this.trimTail();
  }

  private trimTail(): void {
    let kept = this.tailParts.join("").slice(-this.tailMax);
    const c = kept.charCodeAt(0);
    if (c >= 0xdc00 && c <= 0xdfff) kept = kept.slice(1); // never start on half a character
    this.tailParts = [kept];
    this.tailLen = kept.length;
  }

  /** Chars held in memory right now. */
  get retained(): number {
    return this.head.length + this.tailLen;
  }

  /** Chars left out of text(). */
  get omitted(): number {
    if (this.total <= this.headMax + this.tailMax) return 0;
    this.trimTail();
    return this.total - this.head.length - this.tailLen;
  }

  text(): string {
    const omitted = this.omitted;
    const tail = this.tailParts.join("");
    if (omitted === 0) return this.head + tail;
    return `${this.head}\n\n… [${fmt(omitted)} chars omitted] …\n\n${tail}`;
  }
}

/** True while any process of the group is alive (zombies do not count). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  try {
    for (const d of readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${d}/stat`, "utf8");
      } catch {
        continue; // gone meanwhile
      }
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") return true;
    }
    return false;
  } catch {
    return true;
  }
}

function signalGroup(pgid: number | undefined, sig: NodeJS.Signals): void {
  if (!pgid) return;
  try {
    process.kill(-pgid, sig);
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits for the whole group to die, sending SIGKILL once the grace period is over. */
async function reapGroup(pgid: number | undefined, graceMs: number, termSentAt: number): Promise<boolean> {
  if (!pgid) return true;
  let killed = false;
  const giveUp = termSentAt + graceMs * 2 + 2_000;
  for (;;) {
    if (!groupAlive(pgid)) return true;
    const now = Date.now();
    if (!killed && now - termSentAt >= graceMs) {
      signalGroup(pgid, "SIGKILL");
      killed = true;
    }
    if (now > giveUp) return false;
    await sleep(25);
  }
}

type KillReason = "timeout" | "cap" | "cancel";

export function createBashTool(overrides: Partial<BashLimits> = {}): Tool<BashInput> {
  const L: BashLimits = { ...BASH_LIMITS, ...overrides };
  return {
    name: "bash",
    description:
      "Run a shell command (/bin/bash -c) in the workspace root. Each call starts fresh in the workspace root (cd does not persist); stdin is closed, so nothing interactive. " +
      `Returns stdout and stderr interleaved, then the exit code. Output over ${fmt(L.headChars + L.tailChars)} chars keeps only the first ${fmt(L.headChars)} and last ${fmt(L.tailChars)}; ` +
      `a command printing more than ${formatBytes(L.killBytes).split(" (")[0]} is killed. Timeout: default ${L.defaultTimeoutMs / 1000} s, max ${L.maxTimeoutMs / 1000} s (timeout_ms); ` +
      "on timeout the command and all its child processes are killed. Prefer read_file, glob, grep and edit_file over cat, find, grep and sed.",
    schema,
    readOnly: false,
    async run(input, ctx): Promise<ToolOutcome> {
      if (ctx.signal?.aborted) return fail("bash: cancelled before the command ran.");
      const asked = input.timeout_ms ?? L.defaultTimeoutMs;
      const timeoutMs = Math.min(asked, L.maxTimeoutMs);
      const summary = input.description ? `${input.description}: ${input.command}` : input.command;
      const refused = await refusal(ctx, "bash", summary, "The user denied permission to run this command.");
      if (refused) return fail(refused);
      if (ctx.signal?.aborted) return fail("bash: cancelled before the command ran.");
      const cwd = workspaceRoot(ctx);

      return new Promise<ToolOutcome>((resolve) => {
        const out = new CappedOutput(L.headChars, L.tailChars);
        let bytes = 0;
        let killedFor: KillReason | null = null;
        let termSentAt = 0;
        let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
        let spawnError: Error | null = null;
        let backgroundHolders = false;
        let finished = false;
        const timers: NodeJS.Timeout[] = [];

        const child = spawn("/bin/bash", ["-c", input.command], {
          cwd,
          detached: true, // its own process group: we can kill the command and all its children
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...childEnv(process.env, ctx.passEnv), PAGER: "cat", GIT_PAGER: "cat", GIT_TERMINAL_PROMPT: "0" },
        });
        const pgid = child.pid;

        const kill = (why: KillReason) => {
          if (killedFor || finished) return;
          killedFor = why;
          termSentAt = Date.now();
          signalGroup(pgid, "SIGTERM");
          timers.push(setTimeout(() => signalGroup(pgid, "SIGKILL"), L.killGraceMs));
        };

        const onData = (decoder: StringDecoder) => (buf: Buffer) => {
          bytes += buf.length;
          if (killedFor === "cap") return; // keep nothing more once over the cap
          const s = decoder.write(buf);
          if (s !== "") {
            out.push(s);
            try {
              ctx.onOutput?.(s);
            } catch {
              // A failing UI callback must not break the command.
            }
          }
          if (bytes > L.killBytes) kill("cap");
        };
        const outDecoder = new StringDecoder("utf8");
        const errDecoder = new StringDecoder("utf8");
        child.stdout?.on("data", onData(outDecoder));
        child.stderr?.on("data", onData(errDecoder));
        child.stdout?.on("error", () => {});
        child.stderr?.on("error", () => {});

        const onAbort = () => kill("cancel");
        ctx.signal?.addEventListener("abort", onAbort, { once: true });
        timers.push(setTimeout(() => kill("timeout"), timeoutMs));

        const finish = async () => {
          if (finished) return;
          finished = true;
          ctx.signal?.removeEventListener("abort", onAbort);
          if (killedFor) await reapGroup(pgid, L.killGraceMs, termSentAt);
          for (const t of timers) clearTimeout(t);
          if (killedFor !== "cap") {
            const rest = outDecoder.end() + errDecoder.end();
            if (rest) out.push(rest);
          }
          resolve(render());
        };

        const render = (): ToolOutcome => {
          if (spawnError) return fail(`bash: could not start /bin/bash: ${spawnError.message}`);
          const lines: string[] = [];
          const body = out.text().replace(/\n$/, "");
          lines.push(body === "" ? "(no output)" : body);
          const notes: string[] = [];
          if (out.omitted > 0) {
            notes.push(`[output was ${fmt(out.total)} chars; only the first ${fmt(L.headChars)} and last ${fmt(L.tailChars)} are shown — redirect to a file and use grep/read_file to see the rest]`);
          }
          if (killedFor === "timeout") notes.push(`[timed out after ${timeoutMs / 1000} s; the command and its child processes were killed]`);
          if (killedFor === "cap") notes.push(`[killed: output passed ${formatBytes(L.killBytes)}; the command and its child processes were killed]`);
          if (killedFor === "cancel") notes.push("[cancelled; the command and its child processes were killed]");
          if (asked > L.maxTimeoutMs) notes.push(`[timeout_ms ${fmt(asked)} was capped at ${fmt(L.maxTimeoutMs)}]`);
          if (backgroundHolders) notes.push("[the command exited but background processes still hold its output open; their later output is not captured]");
          lines.push(...notes);
          const code = exit?.code ?? null;
          lines.push(code !== null ? `exit code: ${code}` : `exit code: none (killed by ${exit?.signal ?? "a signal"})`);
          return { content: lines.join("\n"), ...(killedFor ? { isError: true } : {}) };
        };

        child.on("error", (err) => {
          spawnError = err;
          void finish();
        });
        child.on("exit", (code, signal) => {
          exit = { code, signal };
          // Background children may keep the pipes open; do not wait for them forever.
          timers.push(
            setTimeout(() => {
              if (finished) return;
              backgroundHolders = true;
              child.stdout?.destroy();
              child.stderr?.destroy();
              void finish();
            }, killedFor ? L.killGraceMs * 2 + 2_000 : L.exitDrainMs),
          );
        });
        child.on("close", (code, signal) => {
          if (!exit) exit = { code, signal };
          void finish();
        });
      });
    },
  };
}

export const bashTool = createBashTool();
