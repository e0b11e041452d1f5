// Settings files: ~/.lethe/settings.json (user) and <workspace>/.lethe/settings.json
// (workspace; wins over the user's). Command-line flags and environment variables win over both.
//
// {
//   "provider": "anthropic" | "openai" | "openai-responses",
//   "model": "claude-sonnet-4-5",          "fallbackModel": "claude-haiku-4-5",
//   "baseUrl": "http://localhost:11434/v1",
//   "contextWindow": 32768,                 "maxOutputTokens": 4096,
//   "autoCompact": "on" | "off" | "ask",    "compactThreshold": 150000 | 0.8,
//   "summarizer": "model" | "digest" | "server",
//   "maxTurns": 200,
//   "compaction": { "micro": { "keepRecent": 5 }, … },       (src/compaction/config.ts)
//   "hooks": { "PreCompact": [ … ], "PostCompact": [ … ] },  (src/hooks/compact-hooks.ts)
//   "retry": { "maxAttempts": 5, "baseMs": 500, "maxMs": 30000 },
//   "pricing": { "<model prefix>": { "input": 3, "output": 15, "cacheWrite": 3.75, "cacheRead": 0.3 } }
// }
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { CompactionConfig, DeepPartial } from "../compaction/config/config.ts";
import { parseHooksConfig } from "../hooks/compact-hooks.ts";
import { ConfigError, oneLine } from "./errors.ts";
import { describeIssue } from "../compaction/config/schema.ts";
import { type TrustKey, keysNeedingTrust } from "./trust.ts";
import { PERMISSION_MODES, type PermissionMode } from "./permissions.ts";
import { type Pricing, type Settings, settingsSchema as schema } from "./settings-schema.ts";

export { PERMISSION_MODES, type PermissionMode, type Pricing, type Settings };

export const USER_SETTINGS = () => join(homedir(), ".lethe", "settings.json");
export const WORKSPACE_SETTINGS = (workspace: string) => join(workspace, ".lethe", "settings.json");

/** One settings file; undefined when it does not exist. Throws a one-line ConfigError naming the file. */
export function loadSettingsFile(path: string): Settings | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new ConfigError(`lethe: cannot read settings file ${path}: ${oneLine((e as Error).message)}`);
  }
  if (text.trim() === "") return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`lethe: settings file ${path} is not valid JSON: ${oneLine((e as Error).message)}`);
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new ConfigError(`lethe: settings file ${path} must hold a JSON object`);
  const r = schema.safeParse(raw);
  if (!r.success) {
    throw new ConfigError(`lethe: settings file ${path}: ${oneLine(describeIssue(schema, r.error))}`);
  }
  const { $schema: _s, hooks, compaction, ...rest } = r.data;
  const out: Settings = { ...rest } as Settings;
  if (compaction) out.compaction = compaction as DeepPartial<CompactionConfig>;
  if (hooks) {
    try {
      out.hooks = parseHooksConfig(hooks);
    } catch (e) {
      throw new ConfigError(`lethe: settings file ${path}: ${oneLine((e as Error).message).replace(/^lethe settings: /, "")}`);
    }
  }
  return out;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function deepMerge<T>(a: T | undefined, b: T | undefined): T | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (!isObj(a) || !isObj(b)) return b;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isObj(v) && isObj(out[k]) ? deepMerge(out[k], v) : v;
  return out as T;
}

export interface LoadedSettings {
  settings: Settings;
  /** The files that were read, user first. */
  files: string[];
  /** The user's own settings (trusted folders live there). */
  user: Settings | undefined;
  /** The workspace file's settings as written (before trust was applied). */
  workspace: Settings | undefined;
  workspacePath: string;
  /** Workspace keys left out because the folder is not trusted. */
  ignored: TrustKey[];
}

/**
 * The user's settings overlaid with the workspace's. Hooks of both files run (user's first).
 * Workspace keys that can run commands or redirect the API key (TRUST_KEYS) apply only when
 * `trusted` decides so for the folder; a workspace cannot trust itself (its trustedFolders is ignored).
 */
export function loadSettings(workspace: string, userPath = USER_SETTINGS(), trusted: boolean | ((user: Settings | undefined) => boolean) = false): LoadedSettings {
  const files: string[] = [];
  const user = loadSettingsFile(userPath);
  if (user) files.push(userPath);
  const wsPath = WORKSPACE_SETTINGS(workspace);
  const wsRaw = wsPath === userPath ? undefined : loadSettingsFile(wsPath);
  if (wsRaw) files.push(wsPath);
  const risky = keysNeedingTrust(wsRaw);
  const trustIt = risky.length > 0 && (typeof trusted === "function" ? trusted(user) : trusted);
  const ignored = trustIt ? [] : risky;
  const ws: Settings | undefined = wsRaw ? { ...wsRaw } : undefined;
  if (ws) {
    delete ws.trustedFolders;
    for (const k of ignored) {
      if (k === "permissions") {
        // Deny rules still apply: they only take rights away.
        if (ws.permissions?.deny?.length) ws.permissions = { deny: ws.permissions.deny };
        else delete ws.permissions;
      } else delete ws[k];
    }
  }
  const settings: Settings = { ...user, ...ws };
  settings.compaction = deepMerge(user?.compaction, ws?.compaction);
  settings.retry = deepMerge(user?.retry, ws?.retry);
  settings.pricing = deepMerge(user?.pricing, ws?.pricing);
  if (user?.permissions || ws?.permissions) {
    settings.permissions = {
      allow: [...(user?.permissions?.allow ?? []), ...(ws?.permissions?.allow ?? [])],
      deny: [...(user?.permissions?.deny ?? []), ...(ws?.permissions?.deny ?? [])],
      ...((ws?.permissions?.defaultMode ?? user?.permissions?.defaultMode) ? { defaultMode: ws?.permissions?.defaultMode ?? user?.permissions?.defaultMode } : {}),
    };
  }
  settings.trustedFolders = user?.trustedFolders;
  if (user?.hooks || ws?.hooks) {
    settings.hooks = {
      PreCompact: [...(user?.hooks?.PreCompact ?? []), ...(ws?.hooks?.PreCompact ?? [])],
      PostCompact: [...(user?.hooks?.PostCompact ?? []), ...(ws?.hooks?.PostCompact ?? [])],
    };
  }
  for (const k of Object.keys(settings) as (keyof Settings)[]) if (settings[k] === undefined) delete settings[k];
  return { settings, files, user, workspace: wsRaw, workspacePath: wsPath, ignored };
}
