// PreCompact / PostCompact hooks from the settings file: shell commands that receive the
// event as JSON on stdin. PreCompact's stdout adds instructions to the summary; exit code 2
// blocks the compaction (stderr says why). Any other failure is reported, never fatal.
import { spawn } from "node:child_process";
import type { CompactHooks } from "../compaction/summary/compactor.ts";

/** One hook: a shell command, its time limit, and the trigger it matches (auto or manual). */
export interface HookCommand {
  command: string;
  /** Milliseconds before the command is killed (default 60 s). */
  timeoutMs?: number;
  /** Only for this trigger: "auto" (threshold, reactive) or "manual" (/compact, compact tool). */
  matcher?: "auto" | "manual";
}

/** The settings file's hooks, by event. */
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
  if (raw === undefined) return out;
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new Error("lethe settings: hooks must be an object ({ PreCompact: [...], PostCompact: [...] })");
  // A typo in an event name would silently never run: refuse it.
  for (const key of Object.keys(raw)) {
    if (key !== "PreCompact" && key !== "PostCompact") throw new Error(`lethe settings: hooks.${key}: unknown hook event (lethe runs PreCompact and PostCompact)`);
  }
  for (const event of ["PreCompact", "PostCompact"] as const) {
    const list = (raw as Record<string, unknown>)[event];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw new Error(`lethe settings: hooks.${event} must be a list`);
    const commands: HookCommand[] = [];
    list.forEach((entry: unknown, i) => {
      const at = `hooks.${event}.${i}`;
      if (!entry || typeof entry !== "object" || Array.isArray(entry)) throw new Error(`lethe settings: ${at} must be an object`);
      const e = entry as Record<string, unknown>;
      for (const k of Object.keys(e)) if (!["matcher", "hooks", "command", "timeout", "timeoutMs", "type"].includes(k)) throw new Error(`lethe settings: ${at}.${k}: unknown key`);
      if (e.matcher !== undefined && e.matcher !== "auto" && e.matcher !== "manual" && e.matcher !== "" && e.matcher !== "*") throw new Error(`lethe settings: ${at}.matcher must be "auto" or "manual"`);
      const matcher = e.matcher === "auto" || e.matcher === "manual" ? e.matcher : undefined;
      const nested = Array.isArray(e.hooks) ? (e.hooks as Record<string, unknown>[]) : [e];
      nested.forEach((h, j) => {
        const hat = Array.isArray(e.hooks) ? `${at}.hooks.${j}` : at;
        if (Array.isArray(e.hooks)) for (const k of Object.keys(h ?? {})) if (!["command", "timeout", "timeoutMs", "type"].includes(k)) throw new Error(`lethe settings: ${hat}.${k}: unknown key`);
        if (h.type !== undefined && h.type !== "command") throw new Error(`lethe settings: ${hat}.type must be "command"`);
        if (typeof h.command !== "string" || !h.command.trim()) throw new Error(`lethe settings: hooks.${event} has an entry without a "command" string`);
        for (const k of ["timeout", "timeoutMs"] as const) if (h[k] !== undefined && (typeof h[k] !== "number" || !((h[k] as number) > 0))) throw new Error(`lethe settings: ${hat}.${k} must be a positive number`);
        const timeoutMs = typeof h.timeout === "number" ? h.timeout * 1000 : typeof h.timeoutMs === "number" ? h.timeoutMs : undefined;
        commands.push({ command: h.command, timeoutMs, matcher });
      });
    });
    out[event] = commands;
  }
  return out;
}

/**
 * Runs one hook: `input` as JSON on stdin; `env` added to the environment (the context's size,
 * threshold and window as LETHE_CONTEXT_TOKENS, LETHE_CONTEXT_THRESHOLD, LETHE_CONTEXT_WINDOW).
 */
export function runHookCommand(cmd: HookCommand, input: unknown, cwd: string, env: Record<string, string> = {}): Promise<HookRun> {
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", cmd.command], { cwd, stdio: ["pipe", "pipe", "pipe"], detached: true, env: { ...process.env, ...env } });
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

/** The context's size (before a compaction; after it for PostCompact), threshold and window, for a hook's environment. */
const contextEnv = (tokens: number, threshold: number, contextWindow: number): Record<string, string> => ({
  LETHE_CONTEXT_TOKENS: String(tokens),
  LETHE_CONTEXT_THRESHOLD: String(threshold),
  LETHE_CONTEXT_WINDOW: String(contextWindow),
});

const triggerOf = (t: string): "auto" | "manual" => (t === "manual" ? "manual" : "auto");

/** PreCompact / PostCompact hooks that run shell commands (the settings file's `hooks`). */
export function createCommandHooks(config: HooksConfig, opts: CommandHooksOptions): CompactHooks {
  const base = { session_id: opts.sessionId, transcript_path: opts.transcriptPath, cwd: opts.cwd };
  const warn = opts.onWarning ?? (() => {});
  const applicable = (list: HookCommand[] | undefined, trigger: "auto" | "manual") => (list ?? []).filter((h) => !h.matcher || h.matcher === trigger);
  return {
    async preCompact({ trigger, tokens, focus, threshold, contextWindow }) {
      const extra: string[] = [];
      const env = contextEnv(tokens, threshold, contextWindow);
      for (const h of applicable(config.PreCompact, triggerOf(trigger))) {
        const r = await runHookCommand(h, { ...base, hook_event_name: "PreCompact", trigger: triggerOf(trigger), kind: trigger, tokens, threshold, context_window: contextWindow, custom_instructions: focus ?? "" }, opts.cwd, env);
        if (r.code === 2) return { block: r.stderr.trim() || `PreCompact hook "${h.command}" blocked the compaction` };
        if (r.code !== 0) {
          warn(`PreCompact hook "${h.command}" ${r.timedOut ? "timed out" : `exited with ${r.code}`}: ${r.stderr.trim().split("\n")[0] ?? ""}`);
          continue;
        }
        if (r.stdout.trim()) extra.push(r.stdout.trim());
      }
      return extra.length ? { instructions: extra.join("\n") } : undefined;
    },
    async postCompact({ trigger, tokensBefore, tokensAfter, summary, threshold, contextWindow }) {
      const env = contextEnv(tokensAfter, threshold, contextWindow);
      for (const h of applicable(config.PostCompact, triggerOf(trigger))) {
        const r = await runHookCommand(h, { ...base, hook_event_name: "PostCompact", trigger: triggerOf(trigger), kind: trigger, tokens_before: tokensBefore, tokens_after: tokensAfter, threshold, context_window: contextWindow, summary }, opts.cwd, env);
        if (r.code !== 0) warn(`PostCompact hook "${h.command}" ${r.timedOut ? "timed out" : `exited with ${r.code}`}: ${r.stderr.trim().split("\n")[0] ?? ""}`);
      }
    },
  };
}
