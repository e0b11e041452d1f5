// lethe's own credentials, out of reach of every command the model runs. Leaving them out of a
// child's environment is not enough: any process of the same user can read the environment lethe
// itself was started with from /proc/<pid>/environ, and deleting a variable from process.env does
// not change what that file shows (it is the process's initial environment block, in its memory).
// So the CLI seals them at start: it reads them, removes them from process.env, and on Linux
// overwrites their values in that block through /proc/self/mem, which a process may write itself.
import { closeSync, openSync, readFileSync, readSync, writeSync } from "node:fs";

export const CREDENTIAL_VARS = /^(ANTHROPIC_API_KEY|ANTHROPIC_AUTH_TOKEN|OPENAI_API_KEY)$/;
const NAMES = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"] as const;

/** Sealed values: the model clients get them from here, passEnv names let them through to bash. */
const sealed = new Map<string, string>();

export interface SealResult {
  /** The credentials that were in the environment. */
  values: Record<string, string>;
  /** Their values no longer show in /proc/<pid>/environ (false off Linux, or when the write was refused). */
  scrubbed: boolean;
}

/**
 * Takes the credential variables out of this process: kept in memory for lethe's own clients,
 * deleted from process.env, overwritten in the initial environment block.
 */
export function sealCredentials(env: NodeJS.ProcessEnv = process.env): SealResult {
  const values: Record<string, string> = {};
  for (const name of NAMES) {
    const v = env[name];
    if (v !== undefined) {
      values[name] = v;
      sealed.set(name, v);
    }
  }
  const scrubbed = Object.keys(values).length === 0 ? true : scrubEnvironBlock(Object.keys(values));
  for (const name of Object.keys(values)) delete env[name];
  return { values, scrubbed };
}

/** A sealed credential's value (undefined when it was never set). */
export function sealedCredential(name: string): string | undefined {
  return sealed.get(name);
}

/** Overwrites `NAME=value` entries' values with NUL bytes in /proc/self's environment block. */
function scrubEnvironBlock(names: readonly string[]): boolean {
  let fd: number | undefined;
  try {
    // /proc/self/stat: "pid (comm) state …"; env_start and env_end are fields 50 and 51.
    const stat = readFileSync("/proc/self/stat", "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const start = Number(fields[50 - 3]);
    const end = Number(fields[51 - 3]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start || end - start > 16 * 1024 * 1024) return false;
    fd = openSync("/proc/self/mem", "r+");
    const block = Buffer.alloc(end - start);
    if (readSync(fd, block, 0, block.length, start) !== block.length) return false;
    let found = 0;
    for (let at = 0; at < block.length; ) {
      const nul = block.indexOf(0, at);
      const stop = nul < 0 ? block.length : nul;
      const entry = block.toString("latin1", at, stop);
      const eq = entry.indexOf("=");
      if (eq > 0 && names.includes(entry.slice(0, eq)) && stop > at + eq + 1) {
        const from = at + eq + 1;
        const zeros = Buffer.alloc(stop - from);
        if (writeSync(fd, zeros, 0, zeros.length, start + from) !== zeros.length) return false;
        found++;
      }
      at = stop + 1;
    }
    // Check what others will see.
    const after = readFileSync("/proc/self/environ", "latin1").split("\0");
    return found > 0 && !after.some((e) => names.some((n) => e.startsWith(`${n}=`) && e.length > n.length + 1));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The environment a command the model runs gets: lethe's credentials left out, unless `passEnv`
 * names them (then the sealed value, if the CLI sealed it).
 */
export function childEnv(env: NodeJS.ProcessEnv, passEnv: readonly string[] = []): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!CREDENTIAL_VARS.test(k) || passEnv.includes(k)) out[k] = v;
  for (const k of passEnv) if (out[k] === undefined && sealed.has(k)) out[k] = sealed.get(k);
  return out;
}
