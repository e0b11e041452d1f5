// Workspace trust. A repository can ship `.lethe/settings.json`; cloning a hostile one and running
// lethe in it must not run its commands or send the API key to its server. The keys that can
// execute or redirect anything apply only once the user trusted that folder (asked once in the
// REPL, remembered in the user's own settings) or passed --trust-workspace for one run.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { ConfigError, oneLine } from "./errors.ts";
import type { Settings } from "./settings-schema.ts";

/**
 * Workspace keys that need trust: hooks run shell commands; a base URL receives the API key and
 * every prompt; permission rules and the default mode would grant the repository's own commands.
 */
export const TRUST_KEYS = ["hooks", "baseUrl", "permissions", "passEnv"] as const satisfies readonly (keyof Settings)[];
export type TrustKey = (typeof TRUST_KEYS)[number];

/** The keys of a workspace settings object that need trust (in TRUST_KEYS order). */
export function keysNeedingTrust(ws: Settings | undefined): TrustKey[] {
  if (!ws) return [];
  return TRUST_KEYS.filter((k) => {
    const v = ws[k];
    if (v === undefined) return false;
    if (k === "hooks") {
      const h = v as Settings["hooks"];
      return (h?.PreCompact?.length ?? 0) + (h?.PostCompact?.length ?? 0) > 0;
    }
    if (k === "permissions") {
      // Deny rules only take rights away: they need no trust.
      const p = v as NonNullable<Settings["permissions"]>;
      return (p.allow?.length ?? 0) > 0 || (p.defaultMode !== undefined && p.defaultMode !== "default" && p.defaultMode !== "plan");
    }
    return true;
  });
}

/** What the keys would do, for the trust question and the "ignored" notice. */
export function describeTrustKeys(ws: Settings, keys: readonly TrustKey[]): string[] {
  const out: string[] = [];
  for (const k of keys) {
    if (k === "hooks") {
      const cmds = [...(ws.hooks?.PreCompact ?? []), ...(ws.hooks?.PostCompact ?? [])].map((h) => h.command);
      out.push(`run shell commands at each compaction: ${cmds.map((c) => JSON.stringify(oneLine(c, 80))).join(", ")}`);
    } else if (k === "baseUrl") out.push(`send your API key and every prompt to ${ws.baseUrl}`);
    else if (k === "passEnv") out.push(`let the commands the model runs see ${ws.passEnv!.join(", ")}`);
    else if (k === "permissions") {
      const p = ws.permissions!;
      const parts = [...(p.allow?.length ? [`allow ${p.allow.join(", ")} without asking`] : []), ...(p.defaultMode ? [`start in permission mode ${p.defaultMode}`] : [])];
      out.push(parts.join("; "));
    }
  }
  return out;
}

/** Whether the user's settings list this folder (its real path, exactly: subfolders are not covered). */
export function isTrusted(workspace: string, userSettings: Settings | undefined): boolean {
  return (userSettings?.trustedFolders ?? []).includes(workspace);
}

/**
 * Adds the folder to "trustedFolders" in the user's settings file, keeping every other key as it
 * is; written to a temporary file and renamed, so a crash never leaves half a settings file.
 */
export function rememberTrust(workspace: string, userSettingsPath: string): void {
  let raw: Record<string, unknown> = {};
  try {
    const text = readFileSync(userSettingsPath, "utf8");
    if (text.trim()) raw = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") throw new ConfigError(`lethe: cannot update ${userSettingsPath} to remember the trusted folder: ${oneLine((e as Error).message)}`);
  }
  const list = Array.isArray(raw.trustedFolders) ? (raw.trustedFolders as unknown[]).filter((x): x is string => typeof x === "string") : [];
  if (!list.includes(workspace)) list.push(workspace);
  raw.trustedFolders = list;
  mkdirSync(dirname(userSettingsPath), { recursive: true });
  const tmp = `${userSettingsPath}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(raw, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, userSettingsPath);
}
