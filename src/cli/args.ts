// Command-line flags. Hand-rolled so that every mistake gets a precise one-line message.
import { UsageError } from "./errors.ts";
import { closest } from "../errors.ts";
import { PERMISSION_MODES, type PermissionMode, parseRule, splitRules } from "./permissions.ts";

export type OutputFormat = "text" | "json" | "stream-json";
export type AutoCompact = "on" | "off" | "ask";

export interface CliArgs {
  /** -p / --print: headless mode with this prompt ("" = read the prompt from stdin). */
  print?: string;
  provider?: "anthropic" | "openai" | "openai-responses";
  model?: string;
  fallbackModel?: string;
  baseUrl?: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  yes: boolean;
  cwd?: string;
  resume?: string;
  continue: boolean;
  /** --store: a conversation store (folder, file: or postgres:// URL) instead of .lethe/sessions. */
  store?: string;
  summarizer?: "model" | "digest" | "server";
  maxTurns?: number;
  maxBudgetUsd?: number;
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
  /** May be given more than once. */
  repeatable?: true;
  /** Puts the flag's value ("" for a flag that takes none) into the parsed arguments; throws a UsageError for a bad one. */
  apply: (out: CliArgs, v: string, flag: string) => void;
}

function positiveInt(flag: string, v: string): number {
  const n = Number(v.replace(/[_,]/g, ""));
  if (!/^\s*[\d_,]+\s*$/.test(v) || !Number.isSafeInteger(n) || n <= 0) throw new UsageError(`--${flag} needs a positive whole number, got ${JSON.stringify(v)}`);
  return n;
}

/** " (did you mean --x?)" for a mistyped long option, as settings keys have. */
function hintFor(name: string): string {
  const hint = name.length <= 40 ? closest(name, OPTIONS.map((o) => o.name)) : undefined;
  return hint ? ` (did you mean --${hint}?)` : "";
}

function positiveDollars(flag: string, v: string): number {
  const n = Number(v.trim().replace(/^\$/, ""));
  if (!/^\s*\$?\d*\.?\d+\s*$/.test(v) || !Number.isFinite(n) || n <= 0) throw new UsageError(`--${flag} needs an amount in dollars above 0, such as 0.50, got ${JSON.stringify(v)}`);
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

/** The value, unless it is blank (then the message, as a UsageError). */
function notBlank(v: string, message: string): string {
  if (!v.trim()) throw new UsageError(message);
  return v;
}

/** The value, unless it is "" (then the message, as a UsageError). */
function notEmpty(v: string, message: string): string {
  if (!v) throw new UsageError(message);
  return v;
}

/** The value, if it parses as a URL. */
function url(flag: string, v: string): string {
  try {
    new URL(v);
  } catch {
    throw new UsageError(`--${flag} needs a URL such as http://localhost:11434/v1, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** Permission rules, each checked (--allowedTools, --disallowedTools). */
function rules(flag: string, v: string): string[] {
  const list = splitRules(v);
  if (list.length === 0) throw new UsageError(`--${flag} needs rules such as "Bash(npm test:*)" or Edit`);
  for (const r of list) {
    try {
      parseRule(r);
    } catch (e) {
      throw new UsageError(`--${flag}: ${(e as Error).message}`);
    }
  }
  return list;
}

/** Every flag: its name and short form, the value it takes, its help line, and what it sets. */
export const OPTIONS: Spec[] = [
  { name: "print", short: "p", value: "prompt", help: "headless: run one prompt, print the final answer on stdout, exit (prompt from stdin when omitted)", apply: (o, v) => void (o.print = v) },
  { name: "output-format", value: "text|json|stream-json", help: "headless output: the text (default), one JSON object at the end, or one JSON event per line", apply: (o, v, f) => void (o.outputFormat = oneOf(f, v, ["text", "json", "stream-json"] as const)) },
  { name: "provider", value: "anthropic|openai|openai-responses", help: "model provider (openai = any OpenAI-compatible server's Chat Completions; openai-responses = OpenAI's Responses API)", apply: (o, v, f) => void (o.provider = oneOf(f, v, ["anthropic", "openai", "openai-responses"] as const)) },
  { name: "model", value: "name", help: "model name (env LETHE_MODEL)", apply: (o, v) => void (o.model = notBlank(v, "--model needs a model name").trim()) },
  { name: "fallback-model", value: "name", help: "switch to this model after repeated overloaded / 5xx errors", apply: (o, v) => void (o.fallbackModel = notBlank(v, "--fallback-model needs a model name").trim()) },
  { name: "base-url", value: "url", help: "API base URL (env ANTHROPIC_BASE_URL / OPENAI_BASE_URL)", apply: (o, v, f) => void (o.baseUrl = url(f, v)) },
  { name: "context-window", value: "N", help: "context window in tokens (default: known model table)", apply: (o, v, f) => void (o.contextWindow = positiveInt(f, v)) },
  { name: "max-output-tokens", value: "N", help: "reply token limit (default: known model table)", apply: (o, v, f) => void (o.maxOutputTokens = positiveInt(f, v)) },
  { name: "auto-compact", value: "on|off|ask", help: "summarise at the threshold automatically, never, or ask first (headless: ask = on)", apply: (o, v, f) => void (o.autoCompact = oneOf(f, v, ["on", "off", "ask"] as const)) },
  { name: "compact-threshold", value: "N|0.x|N%", help: "auto-compact threshold: tokens, or a share of the context window", apply: (o, v, f) => void (o.compactThreshold = parseThreshold(f, v)) },
  { name: "summarizer", value: "model|digest|server", help: "who writes summaries: the model, a deterministic digest (no model call), or Anthropic's server-side compaction", apply: (o, v, f) => void (o.summarizer = oneOf(f, v, ["model", "digest", "server"] as const)) },
  { name: "max-turns", value: "N", help: "stop after N model turns", apply: (o, v, f) => void (o.maxTurns = positiveInt(f, v)) },
  { name: "max-budget-usd", value: "dollars", help: "stop before the request (or summary) that would take this run past this many dollars", apply: (o, v, f) => void (o.maxBudgetUsd = positiveDollars(f, v)) },
  { name: "permission-mode", value: "default|acceptEdits|plan|bypassPermissions", help: "ask before commands and edits (default), allow edits (acceptEdits), change nothing (plan), or ask nothing (bypassPermissions)", apply: (o, v, f) => void (o.permissionMode = oneOf(f, v, PERMISSION_MODES)) },
  { name: "allowedTools", value: "rules", repeatable: true, help: "allow without asking, e.g. \"Bash(npm test:*) Edit\" (repeatable; comma or space separated)", apply: (o, v, f) => void o.allowedTools.push(...rules(f, v)) },
  { name: "disallowedTools", value: "rules", repeatable: true, help: "always refuse, e.g. \"Bash(rm:*)\"; a bare tool name hides the tool (beats every allow)", apply: (o, v, f) => void o.disallowedTools.push(...rules(f, v)) },
  { name: "yes", short: "y", repeatable: true, help: "no permission prompts: allow bash and file writes (= --permission-mode bypassPermissions)", apply: (o) => void (o.yes = true) },
  { name: "dangerously-skip-permissions", repeatable: true, help: "Claude Code's spelling of --yes", apply: (o) => void (o.yes = true) },
  { name: "system-prompt", value: "text", help: "replace lethe's role and working guidance (context notes, environment and AGENTS.md stay)", apply: (o, v) => void (o.systemPrompt = notBlank(v, "--system-prompt needs the text of the prompt")) },
  { name: "append-system-prompt", value: "text", help: "add text at the end of the system prompt", apply: (o, v) => void (o.appendSystemPrompt = notBlank(v, "--append-system-prompt needs text")) },
  { name: "verbose", repeatable: true, help: "headless: progress notices (compactions, retries) on stderr even when it is not a terminal", apply: (o) => void (o.verbose = true) },
  { name: "trust-workspace", help: "apply this folder's .lethe/settings.json hooks, baseUrl and permission rules for this run (see docs/cli.md, Workspace trust)", apply: (o) => void (o.trustWorkspace = true) },
  { name: "cwd", value: "dir", help: "workspace folder (default: the current directory)", apply: (o, v) => void (o.cwd = notEmpty(v, "--cwd needs a folder")) },
  { name: "resume", short: "r", value: "id", help: "resume a session (an id or a unique prefix of one)", apply: (o, v) => void (o.resume = notBlank(v, "--resume needs a session id").trim()) },
  { name: "continue", short: "c", help: "resume the most recent session of the workspace", apply: (o) => void (o.continue = true) },
  { name: "store", value: "path|url", help: "keep the session in a conversation store (a folder or postgres:// URL; env LETHE_STORE), to continue it from any machine that reaches it", apply: (o, v) => void (o.store = notBlank(v, "--store needs a folder or a postgres:// URL").trim()) },
  { name: "help", short: "h", help: "show this help", apply: (o) => void (o.help = true) },
  { name: "version", short: "v", help: "show the version", apply: (o) => void (o.version = true) },
];

const byName = new Map(OPTIONS.map((o) => [o.name, o]));
const byShort = new Map(OPTIONS.filter((o) => o.short).map((o) => [o.short!, o]));

/** The flag an argument names (with a value written into it: --name=value, -rID), or undefined for a word. */
function readFlag(arg: string): { spec: Spec; inline: string | undefined } | undefined {
  if (arg.startsWith("--")) {
    const eq = arg.indexOf("=");
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    const spec = byName.get(name);
    if (!spec) throw new UsageError(`unknown option --${name}${hintFor(name)}`);
    return { spec, inline: eq >= 0 ? arg.slice(eq + 1) : undefined };
  }
  if (!(arg.startsWith("-") && arg.length > 1 && !/^-\d/.test(arg))) return undefined;
  const spec = byShort.get(arg.slice(1, 2));
  if (!spec) throw new UsageError(`unknown option ${arg}`);
  if (arg.length === 2) return { spec, inline: undefined };
  if (!spec.value) throw new UsageError(`unknown option ${arg}`);
  return { spec, inline: arg.slice(2) };
}

/**
 * Whether the next argument is the flag's value: a word, or — after a numeric flag — something like
 * "-5", which is its (bad) value rather than an unknown option, so the message says it must be positive.
 */
function valueFollows(spec: Spec, next: string | undefined): next is string {
  if (next === undefined) return false;
  return !(next.startsWith("-") && next.length > 1) || (/^N\b/.test(spec.value ?? "") && /^-[\d.]/.test(next));
}

/** The command line (without node and the script); throws a one-line UsageError for any mistake. */
export function parseArgs(argv: readonly string[]): CliArgs {
  const out: CliArgs = { yes: false, trustWorkspace: false, allowedTools: [], disallowedTools: [], verbose: false, continue: false, outputFormat: "text", help: false, version: false, positional: [] };
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      out.positional.push(...argv.slice(i + 1));
      break;
    }
    const flag = readFlag(arg);
    if (!flag) {
      out.positional.push(arg);
      continue;
    }
    const { spec, inline } = flag;
    if (seen.has(spec.name) && !spec.repeatable) throw new UsageError(`--${spec.name} given twice`);
    seen.add(spec.name);
    let value = "";
    if (spec.value) {
      if (inline !== undefined) value = inline;
      else if (valueFollows(spec, argv[i + 1])) value = argv[++i]!;
      else if (spec.name !== "print") throw new UsageError(`--${spec.name} needs a value (${spec.value})`);
    } else if (inline !== undefined) {
      throw new UsageError(`--${spec.name} takes no value`);
    }
    spec.apply(out, value, spec.name);
  }
  if (out.resume !== undefined && out.continue) throw new UsageError("--resume and --continue cannot be used together");
  if (seen.has("output-format") && out.outputFormat !== "text" && out.print === undefined) throw new UsageError(`--output-format ${out.outputFormat} needs -p (headless mode)`);
  return out;
}

export function usageText(version: string): string {
  const lines = [
    `lethe ${version} — a coding agent whose context never hits the wall`,
    "",
    "Usage:",
    "  lethe [options] [prompt]        interactive session (REPL)",
    "  lethe -p \"<prompt>\" [options]   headless: print the final answer and exit",
    "  lethe sessions [--cwd <dir>] [--store <path|url>]",
    "                                  the workspace's sessions (or the store's conversations)",
    "  lethe export <id> [--format md|json] [-o <file>] [--cwd <dir>] [--store <path|url>]",
    "                                  a session as Markdown (compactions marked) or JSON",
    "  lethe view [id] [--port <n>] [--open] [--cwd <dir>] [--store <path|url>]",
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
    "  LETHE_STORE                             conversation store for every command (as --store)",
    "",
    "Settings: <workspace>/.lethe/settings.json over ~/.lethe/settings.json (model, provider, baseUrl,",
    "contextWindow, maxOutputTokens, autoCompact, compactThreshold, summarizer, compaction, hooks, …).",
    "Sessions: <workspace>/.lethe/sessions/<id>/ (transcript.jsonl, tool-results/).",
    "",
    "In the REPL: /compact [--preview] [instructions], /uncompact, /model [name], /context, /cost, /clear, /resume [id], /memory, /init, /help, /exit.",
    "Headless asks no questions: what the permission mode and rules do not allow is refused (the model is told why).",
    "Exit codes: 0 done, 1 error, 2 bad command line, 130 interrupted.",
  );
  return lines.join("\n");
}
