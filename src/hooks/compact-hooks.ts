// PreCompact / PostCompact hooks from the settings file: shell commands that receive the
// event as JSON on stdin. PreCompact's stdout adds instructions to the summary; exit code 2
// blocks the compaction (stderr says why). Any other failure is reported, never fatal.
import { spawn } from "node:child_process";
import type { CompactHooks } from "../compaction/compactor.ts";

export interface HookCommand {
  command: string;
  /** Milliseconds before the command is killed (default 60 s). */
  timeoutMs?: number;
  /** Only for this trigger: "auto" (threshold, reactive) or "manual" (/compact, compact tool). */
  matcher?: "auto" | "manual";
}

export interface HooksConfig {
  PreCompact?: HookCommand[];
  PostCompact?: HookCommand[];
}

export interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Claude Code's nested form ({matcher, hooks:[{type:"command", command}]}) and a flat form are both accepted. */
export function parseHooksConfig(raw: unknown): HooksConfig {
  const out: HooksConfig = {};
  if (!raw || typeof raw !== "object") return out;
  for (const event of ["PreCompact", "PostCompact"] as const) {
    const list = (raw as Record<string, unknown>)[event];
    if (!Array.isArray(list)) continue;
    const commands: HookCommand[] = [];
    for (const entry of list as Record<string, unknown>[]) {
      const matcher = entry.matcher === "auto" || entry.matcher === "manual" ? entry.matcher : undefined;
      const nested = Array.isArray(entry.hooks) ? (entry.hooks as Record<string, unknown>[]) : [entry];
      for (const h of nested) {
        if (typeof h.command !== "string" || !h.command.trim()) throw new Error(`lethe settings: hooks.${event} has an entry without a "command" string`);
        const timeoutMs = typeof h.timeout === "number" ? h.timeout * 1000 : typeof h.timeoutMs === "number" ? h.timeoutMs : undefined;
        commands.push({ command: h.command, timeoutMs, matcher });
      }
    }
    out[event] = commands;
  }
  return out;
}

export function runHookCommand(cmd: HookCommand, input: unknown, cwd: string): Promise<HookRun> {
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", cmd.command], { cwd, stdio: ["pipe", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const cap = (s: string, d: Buffer) => (s.length < 100_000 ? s + d.toString("utf8") : s);
    child.stdout.on("data", (d: Buffer) => (stdout = cap(stdout, d)));
    child.stderr.on("data", (d: Buffer) => (stderr = cap(stderr, d)));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, cmd.timeoutMs ?? 60_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: stderr || e.message, timedOut });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
  });
}

export interface CommandHooksOptions {
  cwd: string;
  sessionId?: string;
  transcriptPath?: string;
  /** Non-fatal problems (a hook that failed or timed out), for the host to show. */
  onWarning?: (message: string) => void;
}

const triggerOf = (t: string): "auto" | "manual" => (t === "manual" ? "manual" : "auto");

export function createCommandHooks(config: HooksConfig, opts: CommandHooksOptions): CompactHooks {
  const base = { session_id: opts.sessionId, transcript_path: opts.transcriptPath, cwd: opts.cwd };
  const warn = opts.onWarning ?? (() => {});
  const applicable = (list: HookCommand[] | undefined, trigger: "auto" | "manual") => (list ?? []).filter((h) => !h.matcher || h.matcher === trigger);
  return {
    async preCompact({ trigger, tokens, focus }) {
      const extra: string[] = [];
      for (const h of applicable(config.PreCompact, triggerOf(trigger))) {
        const r = await runHookCommand(h, { ...base, hook_event_name: "PreCompact", trigger: triggerOf(trigger), kind: trigger, tokens, custom_instructions: focus ?? "" }, opts.cwd);
        if (r.code === 2) return { block: r.stderr.trim() || `PreCompact hook "${h.command}" blocked the compaction` };
        if (r.code !== 0) {
          warn(`PreCompact hook "${h.command}" ${r.timedOut ? "timed out" : `exited with ${r.code}`}: ${r.stderr.trim().split("\n")[0] ?? ""}`);
          continue;
        }
        if (r.stdout.trim()) extra.push(r.stdout.trim());
      }
      return extra.length ? { instructions: extra.join("\n") } : undefined;
    },
    async postCompact({ trigger, tokensBefore, tokensAfter, summary }) {
      for (const h of applicable(config.PostCompact, triggerOf(trigger))) {
        const r = await runHookCommand(h, { ...base, hook_event_name: "PostCompact", trigger: triggerOf(trigger), kind: trigger, tokens_before: tokensBefore, tokens_after: tokensAfter, summary }, opts.cwd);
        if (r.code !== 0) warn(`PostCompact hook "${h.command}" ${r.timedOut ? "timed out" : `exited with ${r.code}`}: ${r.stderr.trim().split("\n")[0] ?? ""}`);
      }
    },
  };
}
