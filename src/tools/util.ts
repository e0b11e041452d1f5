// Helpers shared by the tools: workspace confinement, atomic writes, permission, formatting.
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, constants, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readlinkSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { ToolContext, ToolOutcome } from "./types.ts";

/** Thrown by a tool for a problem the model caused (shown as a one-line error result). */
export class ToolError extends Error {}

export const fmt = (n: number) => n.toLocaleString("en-US");
export const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();

export function fail(message: string): ToolOutcome {
  return { content: oneLine(message), isError: true };
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${fmt(n)} bytes`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]} (${fmt(n)} bytes)`;
}

/** Cuts a string to at most `max` chars, saying how much was left out. */
export function cutLine(line: string, max: number): string {
  return line.length <= max ? line : `${line.slice(0, max)}… [line cut: ${fmt(line.length)} chars]`;
}

// ───────────────────────── workspace confinement ─────────────────────────

const MAX_SYMLINK_HOPS = 40;

/**
 * realpath that also works for paths that do not exist yet: the nearest existing ancestor is
 * resolved and the missing rest appended. Dangling symlinks are followed by hand, so a link to a
 * not-yet-existing file outside the workspace still resolves to that outside path.
 */
export function realpathLoose(abs: string, hops = 0): string {
  try {
    return realpathSync.native(abs);
  } catch {
    // Missing (or partly missing) path: resolve the parent, then this component.
  }
  const parent = dirname(abs);
  if (parent === abs) return abs;
  const realParent = realpathLoose(parent, hops);
  const candidate = join(realParent, basename(abs));
  let st;
  try {
    st = lstatSync(candidate);
  } catch {
    return candidate;
  }
  if (st.isSymbolicLink()) {
    if (hops >= MAX_SYMLINK_HOPS) throw new ToolError(`too many levels of symbolic links at ${candidate}`);
    return realpathLoose(resolve(realParent, readlinkSync(candidate)), hops + 1);
  }
  return candidate;
}

const workspaceCache = new Map<string, string>();

/** The workspace root, symlinks resolved. */
export function workspaceRoot(ctx: Pick<ToolContext, "workspace">): string {
  let real = workspaceCache.get(ctx.workspace);
  if (!real) {
    real = realpathLoose(resolve(ctx.workspace));
    workspaceCache.set(ctx.workspace, real);
  }
  return real;
}

export function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

export interface ResolvedPath {
  /** The real path (symlinks resolved) the tool works on. */
  abs: string;
  /** The path relative to the workspace, for messages ("." for the root). */
  rel: string;
  root: string;
}

/**
 * Resolves a path the model gave (relative to the workspace, or absolute inside it) to a real
 * path inside the workspace; throws a ToolError when it (or a symlink on the way) leads outside.
 */
export function resolveInWorkspace(ctx: Pick<ToolContext, "workspace">, input: string): ResolvedPath {
  const root = workspaceRoot(ctx);
  if (input.includes("\0")) throw new ToolError(`invalid path ${JSON.stringify(input)}: contains a NUL byte`);
  const raw = input.trim() === "" ? "." : input;
  const lexical = isAbsolute(raw) ? resolve(raw) : resolve(root, raw);
  // An absolute path may name the workspace through a symlinked prefix (e.g. /tmp vs /private/tmp):
  // only the real path decides.
  const real = realpathLoose(lexical);
  if (!isInside(root, real)) {
    const via = real !== lexical && isInside(root, lexical) ? ` (it resolves to ${real} through a symbolic link)` : "";
    throw new ToolError(`${input} is outside the workspace (${root})${via}; file tools only work inside the workspace`);
  }
  const rel = relative(root, real) || ".";
  return { abs: real, rel, root };
}

/** Workspace-relative display form of a real path. */
export function displayPath(root: string, abs: string): string {
  return relative(root, abs) || ".";
}

// ───────────────────────── writes ─────────────────────────

// ───────────────────────── confinement under change ─────────────────────────
// Confinement that holds while the file system changes under the tools. A path is checked and
// then opened by name; a symlink swapped in between (a renameat2 RENAME_EXCHANGE loop) could make
// the open land outside the workspace. So the check is made on what was opened: the descriptor's
// own path (/proc/self/fd/N, Linux). Writes go through the verified parent folder's descriptor
// (/proc/self/fd/<dir>/name resolves through that very folder, like openat/renameat), and the
// rename replaces the last component without following it.
const PROC = existsSync("/proc/self/fd");

/** Where an open descriptor really points (undefined where the platform cannot say). */
export function fdPath(fd: number): string | undefined {
  if (!PROC) return undefined;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * Throws (and closes the descriptor) when what was opened is not inside the workspace, or not
 * `expected`: the path the permission rules were checked against.
 */
export function verifyFd(fd: number, root: string, shown: string, expected?: string): void {
  const real = fdPath(fd);
  if (real === undefined || (isInside(root, real) && (expected === undefined || real === expected))) return;
  closeSync(fd);
  throw new ToolError(
    isInside(root, real)
      ? `${shown}: the path changed while it was being opened (a symbolic link was swapped in, now leading to ${relative(root, real)}); nothing was read or written`
      : `${shown} is outside the workspace (${root}): the path changed while it was being opened (a symbolic link was swapped in); nothing was read or written`,
  );
}

/** Opens `abs` and checks the descriptor, not the name: it must be `abs` itself. */
export function openConfined(abs: string, flags: string | number, root: string, shown: string, mode?: number): number {
  const fd = openSync(abs, flags, mode);
  verifyFd(fd, root, shown, abs);
  return fd;
}

/**
 * The parent folder of a write, opened and verified; `at(name)` names an entry through the
 * descriptor, so later swaps of the folder's path do not redirect it. Without /proc, plain paths.
 */
export function confinedDir(dir: string, root: string, shown: string): { at(name: string): string; close(): void } {
  if (!PROC) return { at: (name) => `${dir}/${name}`, close: () => {} };
  const fd = openConfined(dir, constants.O_RDONLY | constants.O_DIRECTORY, root, shown);
  // (openConfined checked it is `dir` itself: the folder whose path the rules were checked on.)
  return {
    at: (name) => `/proc/self/fd/${fd}/${name}`,
    close: () => closeSync(fd),
  };
}

/**
 * Writes a file atomically (temp file in the same folder, then rename), keeping an existing file's
 * mode. With `root`, the folder is opened and verified first and every step goes through its
 * descriptor (./confined.ts), so a symlink swapped into the path mid-write cannot redirect it.
 */
export function atomicWrite(abs: string, data: string, root?: string): void {
  const dir = dirname(abs);
  mkdirSync(dir, { recursive: true });
  const folder = root !== undefined ? confinedDir(dir, root, relative(root, abs) || abs) : { at: (n: string) => join(dir, n), close: () => {} };
  try {
    const target = folder.at(basename(abs));
    let mode: number | undefined;
    try {
      const st = statSync(target);
      if (st.isDirectory()) throw new ToolError(`${abs} is a directory`);
      mode = st.mode & 0o7777;
    } catch (err) {
      if (err instanceof ToolError) throw err;
    }
    const tmp = folder.at(`.${basename(abs)}.lethe-${process.pid}-${randomBytes(4).toString("hex")}.tmp`);
    let fd: number | undefined;
    try {
      fd = openSync(tmp, "wx", mode ?? 0o666);
      const buf = Buffer.from(data, "utf8");
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
      fsyncSync(fd);
      closeSync(fd);
      fd = undefined;
      if (mode !== undefined) chmodSync(tmp, mode);
      renameSync(tmp, target);
    } catch (err) {
      if (fd !== undefined) {
        try {
          closeSync(fd);
        } catch {
          // already closed
        }
      }
      try {
        unlinkSync(tmp);
      } catch {
        // never created or already renamed
      }
      throw err;
    }
  } finally {
    folder.close();
  }
}

/**
 * Asks the host before a side effect. undefined when allowed (no askPermission means allowed);
 * otherwise what the model is told: the host's reason, or `deniedText` when the user said no.
 */
export async function refusal(ctx: ToolContext, tool: string, summary: string, deniedText: string, detail?: string, path?: string): Promise<string | undefined> {
  if (!ctx.askPermission) return undefined;
  const answer = await ctx.askPermission({ tool, summary, ...(detail !== undefined ? { detail } : {}), ...(path !== undefined ? { path } : {}) });
  if (answer === true) return undefined;
  return typeof answer === "string" ? answer : deniedText;
}

/** Counts lines the way editors do: "a\nb" and "a\nb\n" are both 2 lines; "" is 0. */
export function countLines(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}
