// Command-line flags. Hand-rolled so that every mistake gets a precise one-line message.
import { UsageError } from "./errors.ts";
import { PERMISSION_MODES, type PermissionMode, parseRule, splitRules } from "./permissions.ts";

export type OutputFormat = "text" | "json" | "stream-json";
export type AutoCompact = "on" | "off" | "ask";

export interface CliArgs {
  /** -p / --print: headless mode with this prompt ("" = read the prompt from stdin). */
  print?: string;
  provider?: "anthropic" | "openai";
  model?: string;
  fallbackModel?: string;
  baseUrl?: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  yes: boolean;
  cwd?: string;
  resume?: string;
  continue: boolean;
  summarizer?: "model" | "digest";
  maxTurns?: number;
  outputFormat: OutputFormat;
  autoCompact?: AutoCompact;
  /** Tokens (> 1) or a share of the context window (0 < x ≤ 1). */
  compactThreshold?: number;
  /** Apply this workspace's command-running settings for this run without asking. */
  trustWorkspace: boolean;
  permissionMode?: PermissionMode;
  /** Permission rules from --allowedTools / --disallowedTools (repeatable, comma or space separated). */
  allowedTools: string[];
  disallowedTools: string[];
  /** Progress notices on stderr even when it is not a terminal (Claude Code's --verbose). */
  verbose: boolean;
  systemPrompt?: string;
  appendSystemPrompt?: string;
  help: boolean;
  version: boolean;
  /** Words after the flags: the first prompt of a REPL session (or of -p when -p has none). */
  positional: string[];
}

interface Spec {
  name: string;
  short?: string;
  value?: string;
  help: string;
}

export const OPTIONS: Spec[] = [
  { name: "print", short: "p", value: "prompt", help: "headless: run one prompt, print the final answer on stdout, exit (prompt from stdin when omitted)" },
  { name: "output-format", value: "text|json|stream-json", help: "headless output: the text (default), one JSON object at the end, or one JSON event per line" },
  { name: "provider", value: "anthropic|openai", help: "model provider (openai = any OpenAI-compatible server)" },
  { name: "model", value: "name", help: "model name (env LETHE_MODEL)" },
  { name: "fallback-model", value: "name", help: "switch to this model after repeated overloaded / 5xx errors" },
  { name: "base-url", value: "url", help: "API base URL (env ANTHROPIC_BASE_URL / OPENAI_BASE_URL)" },
  { name: "context-window", value: "N", help: "context window in tokens (default: known model table)" },
  { name: "max-output-tokens", value: "N", help: "reply token limit (default: known model table)" },
  { name: "auto-compact", value: "on|off|ask", help: "summarise at the threshold automatically, never, or ask first (headless: ask = on)" },
  { name: "compact-threshold", value: "N|0.x|N%", help: "auto-compact threshold: tokens, or a share of the context window" },
  { name: "summarizer", value: "model|digest", help: "who writes summaries: the model, or a deterministic digest (no model call)" },
  { name: "max-turns", value: "N", help: "stop after N model turns" },
  { name: "permission-mode", value: "default|acceptEdits|plan|bypassPermissions", help: "ask before commands and edits (default), allow edits (acceptEdits), change nothing (plan), or ask nothing (bypassPermissions)" },
  { name: "allowedTools", value: "rules", help: "allow without asking, e.g. \"Bash(npm test:*) Edit\" (repeatable; comma or space separated)" },
  { name: "disallowedTools", value: "rules", help: "always refuse, e.g. \"Bash(rm:*)\"; a bare tool name hides the tool (beats every allow)" },
  { name: "yes", short: "y", help: "no permission prompts: allow bash and file writes (= --permission-mode bypassPermissions)" },
  { name: "dangerously-skip-permissions", help: "Claude Code's spelling of --yes" },
  { name: "system-prompt", value: "text", help: "replace lethe's role and working guidance (context notes, environment and AGENTS.md stay)" },
  { name: "append-system-prompt", value: "text", help: "add text at the end of the system prompt" },
  { name: "verbose", help: "headless: progress notices (compactions, retries) on stderr even when it is not a terminal" },
  { name: "trust-workspace", help: "apply this folder's .lethe/settings.json hooks, baseUrl and permission rules for this run (see docs/cli.md, Workspace trust)" },
  { name: "cwd", value: "dir", help: "workspace folder (default: the current directory)" },
  { name: "resume", short: "r", value: "id", help: "resume a session (an id or a unique prefix of one)" },
  { name: "continue", short: "c", help: "resume the most recent session of the workspace" },
  { name: "help", short: "h", help: "show this help" },
  { name: "version", short: "v", help: "show the version" },
];

const REPEATABLE = new Set(["yes", "allowedTools", "disallowedTools", "verbose", "dangerously-skip-permissions"]);
const byName = new Map(OPTIONS.map((o) => [o.name, o]));
const byShort = new Map(OPTIONS.filter((o) => o.short).map((o) => [o.short!, o]));

function positiveInt(flag: string, v: string): number {
  const n = Number(v.replace(/[_,]/g, ""));
  if (!/^\s*[\d_,]+\s*$/.test(v) || !Number.isSafeInteger(n) || n <= 0) throw new UsageError(`--${flag} needs a positive whole number, got ${JSON.stringify(v)}`);
  return n;
}

function oneOf<T extends string>(flag: string, v: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`--${flag} must be one of ${allowed.join(", ")}, got ${JSON.stringify(v)}`);
  return v as T;
}

/** "150000", "150k", "0.8", "80%". */
export function parseThreshold(flag: string, v: string): number {
  const s = v.trim().toLowerCase();
  let n: number;
  if (s.endsWith("%")) n = Number(s.slice(0, -1)) / 100;
  else if (s.endsWith("k")) n = Number(s.slice(0, -1)) * 1000;
  else n = Number(s.replace(/[_,]/g, ""));
  if (!Number.isFinite(n) || n <= 0 || (n > 1 && !Number.isInteger(n))) {
    throw new UsageError(`--${flag} needs a token count (e.g. 150000) or a share of the window (e.g. 0.8 or 80%), got ${JSON.stringify(v)}`);
  }
  return n;
}

export function parseArgs(argv: readonly string[]): CliArgs {
  const out: CliArgs = { yes: false, trustWorkspace: false, allowedTools: [], disallowedTools: [], verbose: false, continue: false, outputFormat: "text", help: false, version: false, positional: [] };
  const seen = new Set<string>();
  let outputFormatGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      out.positional.push(...argv.slice(i + 1));
      break;
    }
    let spec: Spec | undefined;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
      inline = eq >= 0 ? arg.slice(eq + 1) : undefined;
      spec = byName.get(name);
      if (!spec) throw new UsageError(`unknown option --${name}`);
    } else if (arg.startsWith("-") && arg.length > 1 && !/^-\d/.test(arg)) {
      const short = arg.slice(1, 2);
      spec = byShort.get(short);
      if (!spec) throw new UsageError(`unknown option ${arg}`);
      if (arg.length > 2) {
        if (!spec.value) throw new UsageError(`unknown option ${arg}`);
        inline = arg.slice(2);
      }
    } else {
      out.positional.push(arg);
      continue;
    }
    if (seen.has(spec.name) && !REPEATABLE.has(spec.name)) throw new UsageError(`--${spec.name} given twice`);
    seen.add(spec.name);
    let value: string | undefined;
    if (spec.value) {
      if (inline !== undefined) value = inline;
      // "-5" after a numeric flag is its (bad) value, not an unknown option: say it must be positive.
      else if (i + 1 < argv.length && (!(argv[i + 1]!.startsWith("-") && argv[i + 1]!.length > 1) || (/^N\b/.test(spec.value) && /^-[\d.]/.test(argv[i + 1]!)))) value = argv[++i];
      else if (spec.name === "print") value = "";
      else throw new UsageError(`--${spec.name} needs a value (${spec.value})`);
    } else if (inline !== undefined) {
      throw new UsageError(`--${spec.name} takes no value`);
    }
    const v = value ?? "";
    switch (spec.name) {
      case "print":
        out.print = v;
        break;
      case "output-format":
        out.outputFormat = oneOf(spec.name, v, ["text", "json", "stream-json"] as const);
        outputFormatGiven = true;
        break;
      case "provider":
        out.provider = oneOf(spec.name, v, ["anthropic", "openai"] as const);
        break;
      case "model":
        if (!v.trim()) throw new UsageError("--model needs a model name");
        out.model = v.trim();
        break;
      case "fallback-model":
        if (!v.trim()) throw new UsageError("--fallback-model needs a model name");
        out.fallbackModel = v.trim();
        break;
      case "base-url":
        try {
          new URL(v);
        } catch {
          throw new UsageError(`--base-url needs a URL such as http://localhost:11434/v1, got ${JSON.stringify(v)}`);
        }
        out.baseUrl = v;
        break;
      case "context-window":
        out.contextWindow = positiveInt(spec.name, v);
        break;
      case "max-output-tokens":
        out.maxOutputTokens = positiveInt(spec.name, v);
        break;
      case "auto-compact":
        out.autoCompact = oneOf(spec.name, v, ["on", "off", "ask"] as const);
        break;
      case "compact-threshold":
        out.compactThreshold = parseThreshold(spec.name, v);
        break;
      case "summarizer":
        out.summarizer = oneOf(spec.name, v, ["model", "digest"] as const);
        break;
      case "max-turns":
        out.maxTurns = positiveInt(spec.name, v);
        break;
      case "yes":
        out.yes = true;
        break;
      case "cwd":
        if (!v) throw new UsageError("--cwd needs a folder");
        out.cwd = v;
        break;
      case "resume":
        if (!v.trim()) throw new UsageError("--resume needs a session id");
        out.resume = v.trim();
        break;
      case "continue":
        out.continue = true;
        break;
      case "permission-mode":
        out.permissionMode = oneOf(spec.name, v, PERMISSION_MODES);
        break;
      case "allowedTools":
      case "disallowedTools": {
        const rules = splitRules(v);
        if (rules.length === 0) throw new UsageError(`--${spec.name} needs rules such as "Bash(npm test:*)" or Edit`);
        for (const r of rules) {
          try {
            parseRule(r);
          } catch (e) {
            throw new UsageError(`--${spec.name}: ${(e as Error).message}`);
          }
        }
        (spec.name === "allowedTools" ? out.allowedTools : out.disallowedTools).push(...rules);
        break;
      }
      case "dangerously-skip-permissions":
        out.yes = true;
        break;
      case "verbose":
        out.verbose = true;
        break;
      case "system-prompt":
        if (!v.trim()) throw new UsageError("--system-prompt needs the text of the prompt");
        out.systemPrompt = v;
        break;
      case "append-system-prompt":
        if (!v.trim()) throw new UsageError("--append-system-prompt needs text");
        out.appendSystemPrompt = v;
        break;
      case "trust-workspace":
        out.trustWorkspace = true;
        break;
      case "help":
        out.help = true;
        break;
      case "version":
        out.version = true;
        break;
    }
  }
  if (out.resume !== undefined && out.continue) throw new UsageError("--resume and --continue cannot be used together");
  if (outputFormatGiven && out.outputFormat !== "text" && out.print === undefined) throw new UsageError(`--output-format ${out.outputFormat} needs -p (headless mode)`);
  return out;
}

export function usageText(version: string): string {
  const lines = [
    `lethe ${version} — a coding agent whose context never hits the wall`,
    "",
    "Usage:",
    "  lethe [options] [prompt]        interactive session (REPL)",
    "  lethe -p \"<prompt>\" [options]   headless: print the final answer and exit",
    "  lethe sessions [--cwd <dir>]    the workspace's sessions",
    "  lethe export <id> [--format md|json] [-o <file>] [--cwd <dir>]",
    "                                  a session as Markdown (compactions marked) or JSON",
    "  lethe view [id] [--port <n>] [--open] [--cwd <dir>]",
    "                                  a session in the browser (127.0.0.1; default: the latest)",
    "",
    "Options:",
  ];
  for (const o of OPTIONS) {
    const left = `  ${o.short ? `-${o.short}, ` : "    "}--${o.name}${o.value ? ` <${o.value}>` : ""}`;
    lines.push(left.length >= 40 ? `${left}\n${" ".repeat(40)}${o.help}` : `${left.padEnd(40)}${o.help}`);
  }
  lines.push(
    "",
    "Environment:",
    "  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL   Anthropic credentials and endpoint",
    "  OPENAI_API_KEY, OPENAI_BASE_URL         OpenAI or any OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio, OpenRouter)",
    "  LETHE_MODEL                             default model",
    "",
    "Settings: <workspace>/.lethe/settings.json over ~/.lethe/settings.json (model, provider, baseUrl,",
    "contextWindow, maxOutputTokens, autoCompact, compactThreshold, summarizer, compaction, hooks, …).",
    "Sessions: <workspace>/.lethe/sessions/<id>/ (transcript.jsonl, tool-results/).",
    "",
    "In the REPL: /compact [instructions], /context, /cost, /clear, /resume [id], /help, /exit.",
    "Headless asks no questions: what the permission mode and rules do not allow is refused (the model is told why).",
    "Exit codes: 0 done, 1 error, 2 bad command line, 130 interrupted.",
  );
  return lines.join("\n");
}
