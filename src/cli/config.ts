// Everything a run needs, resolved once from flags, environment and settings files
// (flags > environment > workspace settings > user settings > defaults).
import { realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { type CompactionConfig, type DeepPartial, maxThreshold, resolveConfig, withThresholdTokens } from "../compaction/config/config.ts";
import type { HooksConfig } from "../hooks/compact-hooks.ts";
import { resolveModelInfo } from "../model/models.ts";
import type { CliArgs } from "./args.ts";
import { ConfigError, UsageError, oneLine, registerSecret } from "./errors.ts";
import { type Pricing, type Settings, USER_SETTINGS, loadSettings } from "./settings.ts";
import { type TrustKey, describeTrustKeys, isTrusted } from "./trust.ts";
import { type PermissionMode, type Policy, parseRule } from "./permissions.ts";

export const DEFAULT_MAX_OUTPUT = 32_000;

/** The least room a threshold must leave for the conversation itself, above the system prompt and tools. */
const MIN_HISTORY_ROOM = 500;

/** A threshold below what every request carries before any message can never be reached by compacting: refused in one line. */
export function checkThresholdRoom(threshold: number, fixedTokens: number): void {
  if (threshold >= fixedTokens + MIN_HISTORY_ROOM) return;
  throw new ConfigError(`lethe: the auto-compact threshold (${threshold.toLocaleString("en-US")} tokens) is below what every request carries before any message (system prompt and tools: ${fixedTokens.toLocaleString("en-US")} tokens, plus ${MIN_HISTORY_ROOM.toLocaleString("en-US")} for the conversation); no compaction could get under it. Raise --compact-threshold (e.g. 0.8) or compactThreshold`);
}

/** The summarizer asked for; the server's compaction is Anthropic's only. */
function summarizerOf(s: RunConfig["summarizer"], provider: RunConfig["provider"]): RunConfig["summarizer"] {
  if (s === "server" && provider !== "anthropic") throw new ConfigError(`lethe: --summarizer server is Anthropic's server-side compaction; the provider is ${provider} (use model or digest)`);
  return s;
}
export const DEFAULT_MODELS = { anthropic: "claude-sonnet-4-6", openai: "gpt-4o", "openai-responses": "gpt-5" } as const;

export interface RunConfig {
  workspace: string;
  /** "openai-responses": OpenAI's Responses API (stateless, reasoning carried back); "openai": Chat Completions. */
  provider: "anthropic" | "openai" | "openai-responses";
  model: string;
  fallbackModel?: string;
  baseUrl?: string;
  apiKey?: string;
  /** ANTHROPIC_AUTH_TOKEN, read at start (the CLI takes it out of the environment). */
  authToken?: string;
  contextWindow: number;
  maxOutputTokens: number;
  /** Where the window came from: "flag", "settings", or the model table's "exact" / "prefix" / "default". */
  windowSource: string;
  /** Auto-compact as the user asked for it ("ask" is treated as "on" headless). */
  autoCompact: "on" | "off" | "ask";
  /** "server": Anthropic's own compaction writes the summaries (its block kept verbatim). */
  summarizer: "model" | "digest" | "server";
  maxTurns?: number;
  /** The run's spending limit in dollars (--max-budget-usd, settings maxBudgetUsd). */
  maxBudgetUsd?: number;
  /** Resolved once, here: the engine takes it as it is. */
  compaction: CompactionConfig;
  hooks?: HooksConfig;
  retry?: { maxAttempts?: number; baseMs?: number; maxMs?: number };
  pricing: Record<string, Pricing>;
  yes: boolean;
  settingsFiles: string[];
  /** The permission policy: mode and rules from flags over settings (--yes = bypassPermissions). */
  policy: Policy;
  /** --system-prompt / --append-system-prompt. */
  systemPrompt?: string;
  appendSystemPrompt?: string;
  verbose: boolean;
  /** Stream idle timeout in ms (settings "idleTimeout", seconds). */
  idleTimeoutMs?: number;
  /** OpenAI-compatible servers: reasoning_content carried back (settings "reasoningContent"). */
  reasoningContent?: "auto" | "never" | "tool-turns" | "always";
  /** Credential variables bash may see (settings "passEnv"). */
  passEnv: string[];
  /** Workspace settings left out because the folder is not trusted (empty when nothing was). */
  untrusted: { path: string; keys: TrustKey[]; what: string[] } | undefined;
  userSettingsPath: string;
  /** One-line notes for the user (a threshold that had to be lowered, …). */
  warnings: string[];
  /** The user's home (for ~/.lethe/AGENTS.md); the process's by default. */
  home?: string;
  /**
   * --store or LETHE_STORE: the conversation store sessions are kept in. Never from a settings
   * file: a repository's settings must not send its sessions to a database of its choosing.
   */
  store?: string;
}

export type Env = Record<string, string | undefined>;

const OPENAI_MODEL = /^(?:gpt-|o\d|chatgpt-|text-|davinci)/i;

function workspaceOf(args: CliArgs, cwd: string): string {
  const dir = resolve(cwd, args.cwd ?? ".");
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new UsageError(`--cwd: no such folder: ${dir}`);
  }
  if (!st.isDirectory()) throw new UsageError(`--cwd: not a folder: ${dir}`);
  return realpathSync(dir);
}

/** The compaction settings resolved, or one line saying which one is wrong. */
function checkedCompaction(compaction: DeepPartial<CompactionConfig>): CompactionConfig {
  try {
    return resolveConfig(compaction);
  } catch (e) {
    throw new ConfigError(`lethe: ${oneLine((e as Error).message).replace(/^lethe config: /, "compaction settings: ")}`);
  }
}

function resolvePolicy(args: CliArgs, settings: Settings): Policy {
  const rules = (list: readonly string[], where: string) =>
    list.map((r) => {
      try {
        return parseRule(r);
      } catch (e) {
        throw new ConfigError(`lethe: ${where}: ${(e as Error).message}`);
      }
    });
  const mode: PermissionMode = args.yes ? "bypassPermissions" : (args.permissionMode ?? settings.permissions?.defaultMode ?? "default");
  return {
    mode,
    allow: [...rules(settings.permissions?.allow ?? [], "permissions.allow (settings)"), ...rules(args.allowedTools, "--allowedTools")],
    deny: [...rules(settings.permissions?.deny ?? [], "permissions.deny (settings)"), ...rules(args.disallowedTools, "--disallowedTools")],
  };
}

export function resolveRunConfig(args: CliArgs, env: Env, opts: { cwd?: string; headless: boolean; userSettingsPath?: string; trusted?: boolean }): RunConfig {
  const workspace = workspaceOf(args, opts.cwd ?? process.cwd());
  const userSettingsPath = opts.userSettingsPath ?? USER_SETTINGS();
  const loaded = loadSettings(workspace, userSettingsPath, (user) => !!opts.trusted || args.trustWorkspace || isTrusted(workspace, user));
  const { settings, files } = loaded;
  const envModel = env.LETHE_MODEL?.trim() || undefined;

  const explicitModel = args.model ?? envModel ?? settings.model;
  let provider = args.provider ?? settings.provider;
  if (!provider) {
    if (explicitModel && OPENAI_MODEL.test(explicitModel)) provider = "openai";
    else if (!env.ANTHROPIC_API_KEY && (env.OPENAI_BASE_URL || env.OPENAI_API_KEY)) provider = "openai";
    else provider = "anthropic";
  }
  const model = explicitModel ?? DEFAULT_MODELS[provider];
  const fallbackModel = args.fallbackModel ?? settings.fallbackModel;

  const envBase = provider === "anthropic" ? env.ANTHROPIC_BASE_URL : env.OPENAI_BASE_URL;
  const baseUrl = args.baseUrl ?? (envBase?.trim() || undefined) ?? settings.baseUrl;
  if (baseUrl) {
    try {
      new URL(baseUrl);
    } catch {
      throw new ConfigError(`lethe: the base URL ${JSON.stringify(baseUrl)} is not a URL`);
    }
  }

  let apiKey: string | undefined;
  if (provider === "anthropic") {
    apiKey = env.ANTHROPIC_API_KEY?.trim() || undefined;
    if (!apiKey && !env.ANTHROPIC_AUTH_TOKEN) {
      throw new ConfigError("lethe: ANTHROPIC_API_KEY is not set; export it, or use --provider openai --base-url <url> for an OpenAI-compatible server");
    }
  } else {
    apiKey = env.OPENAI_API_KEY?.trim() || undefined;
    const official = !baseUrl || /(^|\.)openai\.com$/i.test(new URL(baseUrl).hostname);
    if (!apiKey && official) {
      throw new ConfigError("lethe: OPENAI_API_KEY is not set; export it, or pass --base-url <url> for a local OpenAI-compatible server (no key needed)");
    }
    apiKey ??= "no-key";
  }

  registerSecret(apiKey);
  registerSecret(env.ANTHROPIC_AUTH_TOKEN?.trim());
  const info = resolveModelInfo(model, { contextWindow: args.contextWindow ?? settings.contextWindow, maxOutputTokens: args.maxOutputTokens ?? settings.maxOutputTokens });
  // Unless configured, replies are capped at 32k tokens (the table's maximum can be 128k, and
  // every token reserved for the reply is a token the context cannot use).
  if (args.maxOutputTokens === undefined && settings.maxOutputTokens === undefined) info.maxOutputTokens = Math.min(info.maxOutputTokens, DEFAULT_MAX_OUTPUT);
  const windowSource = args.contextWindow !== undefined ? "flag" : settings.contextWindow !== undefined ? "settings" : info.source;
  if (info.maxOutputTokens >= info.contextWindow) {
    throw new UsageError(`the reply limit (${info.maxOutputTokens} tokens) must be below the context window (${info.contextWindow} tokens)`);
  }

  const autoCompact = args.autoCompact ?? settings.autoCompact ?? "on";
  const engineAuto = autoCompact === "ask" && opts.headless ? "on" : autoCompact;

  // Compaction settings, then the auto-compact mode and threshold on top.
  const partial: DeepPartial<CompactionConfig> = structuredClone(settings.compaction ?? {});
  partial.summary = { ...partial.summary, auto: engineAuto };
  let compaction = checkedCompaction(partial);
  const window = { contextWindow: info.contextWindow, maxOutputTokens: info.maxOutputTokens };
  const wanted = args.compactThreshold ?? settings.compactThreshold;
  const warnings: string[] = [];
  if (wanted !== undefined) {
    const flag = args.compactThreshold !== undefined ? "--compact-threshold" : "compactThreshold (settings)";
    const tokens = wanted <= 1 ? Math.floor(wanted * info.contextWindow) : Math.floor(wanted);
    if (tokens >= info.contextWindow) throw new UsageError(`${flag} ${tokens} must be below the context window (${info.contextWindow} tokens)`);
    if (tokens < 1) throw new UsageError(`${flag} ${wanted} is less than one token of the ${info.contextWindow}-token window`);
    const max = maxThreshold(window, compaction);
    if (tokens > max) warnings.push(`${flag} ${tokens} leaves no room for the reply (${info.contextWindow - max} tokens reserved): auto-compact runs at ${max}`);
    compaction = withThresholdTokens(compaction, Math.min(tokens, max));
  }

  return {
    workspace,
    provider,
    model,
    ...(fallbackModel ? { fallbackModel } : {}),
    ...(baseUrl ? { baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(provider === "anthropic" && env.ANTHROPIC_AUTH_TOKEN?.trim() ? { authToken: env.ANTHROPIC_AUTH_TOKEN.trim() } : {}),
    contextWindow: info.contextWindow,
    maxOutputTokens: info.maxOutputTokens,
    windowSource,
    autoCompact,
    summarizer: summarizerOf(args.summarizer ?? settings.summarizer ?? "model", provider),
    ...(args.maxTurns ?? settings.maxTurns ? { maxTurns: args.maxTurns ?? settings.maxTurns } : {}),
    ...(args.maxBudgetUsd ?? settings.maxBudgetUsd ? { maxBudgetUsd: args.maxBudgetUsd ?? settings.maxBudgetUsd } : {}),
    compaction,
    ...(settings.hooks ? { hooks: settings.hooks } : {}),
    ...(settings.retry ? { retry: settings.retry } : {}),
    pricing: settings.pricing ?? {},
    yes: args.yes,
    settingsFiles: files,
    policy: resolvePolicy(args, settings),
    ...(args.systemPrompt !== undefined ? { systemPrompt: args.systemPrompt } : {}),
    ...(args.appendSystemPrompt !== undefined ? { appendSystemPrompt: args.appendSystemPrompt } : {}),
    verbose: args.verbose,
    passEnv: settings.passEnv ?? [],
    ...(settings.reasoningContent ? { reasoningContent: settings.reasoningContent } : {}),
    ...(settings.idleTimeout !== undefined ? { idleTimeoutMs: Math.round(settings.idleTimeout * 1000) } : {}),
    untrusted: loaded.ignored.length ? { path: loaded.workspacePath, keys: loaded.ignored, what: describeTrustKeys(loaded.workspace!, loaded.ignored) } : undefined,
    userSettingsPath,
    warnings,
    ...((args.store ?? env.LETHE_STORE?.trim()) ? { store: args.store ?? env.LETHE_STORE!.trim() } : {}),
  };
}

/**
 * For a local OpenAI-compatible server: ask Ollama what context it really runs the model with
 * (its OpenAI endpoint truncates silently past it, and a request cannot change it). Without a
 * configured window that is the window; a configured one larger than the server's gives way to
 * it, with a warning. Other servers answer the probe with an error and nothing changes.
 */
export async function discoverWindow(cfg: RunConfig, opts: { fetch?: typeof fetch } = {}): Promise<RunConfig> {
  if (cfg.provider !== "openai") return cfg;
  const { discoverOllamaContext, mayBeOllama } = await import("../model/ollama.ts");
  if (!mayBeOllama(cfg.baseUrl)) return cfg;
  const found = await discoverOllamaContext(cfg.baseUrl!, cfg.model, opts);
  if (!found || found.contextWindow === cfg.contextWindow) return cfg;
  const configured = cfg.windowSource === "flag" || cfg.windowSource === "settings";
  if (configured && found.contextWindow > cfg.contextWindow) return cfg;
  const warnings = configured
    ? [
        ...cfg.warnings,
        `the server runs ${cfg.model} with a ${found.contextWindow.toLocaleString("en-US")}-token context (${found.source}), not the ${cfg.contextWindow.toLocaleString("en-US")} given: lethe works to ${found.contextWindow.toLocaleString("en-US")} (raise num_ctx in Ollama to use more)`,
      ]
    : cfg.warnings;
  const maxOutputTokens = Math.min(cfg.maxOutputTokens, Math.floor(found.contextWindow / 4));
  const window = { contextWindow: found.contextWindow, maxOutputTokens };
  const tokens = cfg.compaction.threshold.tokens;
  const compaction = tokens !== undefined ? withThresholdTokens(cfg.compaction, Math.min(tokens, maxThreshold(window, cfg.compaction))) : cfg.compaction;
  return { ...cfg, warnings, contextWindow: found.contextWindow, maxOutputTokens, windowSource: found.source, compaction };
}

/** What the system prompt takes from the run configuration: the project instructions, a replaced base, what is appended. */
export interface PromptParts {
  instructions?: string;
  base?: string;
  append?: string;
}

/** The system prompt's parts for `cfg` (plan mode says so; --system-prompt, --append-system-prompt). */
export function promptParts(cfg: RunConfig, instructionsText: string): PromptParts {
  const append = [
    ...(cfg.policy.mode === "plan"
      ? ["<permission-mode>plan: you may read and search, but not run commands or change files (those calls are refused). Investigate, then present a concrete plan; the user switches modes to carry it out.</permission-mode>"]
      : []),
    ...(cfg.appendSystemPrompt ? [cfg.appendSystemPrompt] : []),
  ].join("\n\n");
  return {
    ...(instructionsText ? { instructions: instructionsText } : {}),
    ...(cfg.systemPrompt !== undefined ? { base: cfg.systemPrompt } : {}),
    ...(append ? { append } : {}),
  };
}
