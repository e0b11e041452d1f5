// The paths permission rules see: the path a tool will touch, never the text the model wrote.
// `src/../.env`, `./src//x`, a symlink into a denied file and (on a case-insensitive file system)
// `.ENV` are all resolved the way the file tools resolve them (realpathLoose, the function that
// also confines them) before a rule is matched.
import { statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import { globToRegExp } from "../tools/glob-match.ts";
import { isInside, realpathLoose } from "../tools/util.ts";

export interface RulePaths {
  /** The workspace, symlinks resolved. */
  root: string;
  home: string;
  /** Names differ only in case on this file system: rules match without case. */
  caseInsensitive: boolean;
}

export interface Target {
  /** The real path (symlinks followed as the tools follow them). */
  abs: string;
  /** "/"-separated, relative to the workspace; undefined outside it. */
  rel?: string;
}

const caseCache = new Map<string, boolean>();

/** Whether `dir`'s file system folds case (macOS, Windows): its own path in swapped case is the same folder. */
export function foldsCase(dir: string): boolean {
  let known = caseCache.get(dir);
  if (known !== undefined) return known;
  const swapped = [...dir].map((ch) => (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase())).join("");
  known = false;
  if (swapped !== dir) {
    try {
      const a = statSync(dir);
      const b = statSync(swapped);
      known = a.ino === b.ino && a.dev === b.dev;
    } catch {
      // The swapped name does not exist: case matters here.
    }
  }
  caseCache.set(dir, known);
  return known;
}

export function rulePaths(workspace: string, home = homedir()): RulePaths {
  const root = realpathLoose(resolve(workspace));
  return { root, home, caseInsensitive: foldsCase(root) };
}

/** Where `path` (relative to `cwd`, default the workspace) really is. */
export function resolveTarget(paths: RulePaths, path: string, cwd = paths.root): Target {
  const abs = realpathLoose(isAbsolute(path) ? resolve(path) : resolve(cwd, path));
  return targetOf(paths, abs);
}

/** A real path as a rule sees it. */
export function targetOf(paths: RulePaths, abs: string): Target {
  if (!isInside(paths.root, abs)) return { abs };
  return { abs, rel: relative(paths.root, abs).split(sep).join("/") || "." };
}

/** Compiled globs: grep asks the read rules once per file it walks. */
const globCache = new Map<string, RegExp>();
function compiled(glob: string, flags: string): RegExp {
  const key = `${flags}\0${glob}`;
  let re = globCache.get(key);
  if (!re) {
    if (globCache.size > 1_000) globCache.clear();
    re = globToRegExp(glob, flags);
    globCache.set(key, re);
  }
  return re;
}

/**
 * Does a path rule's pattern cover this target? `//x` is the absolute path /x, `~/x` is in the
 * home folder, anything else is relative to the workspace. Claude Code reads `/x` as relative to
 * the settings file: for a deny rule both readings count, for an allow rule only the workspace's.
 */
export function pathRuleCovers(paths: RulePaths, spec: string, target: Target, deny: boolean): boolean {
  const flags = paths.caseInsensitive ? "i" : "";
  const test = (glob: string, path: string) => compiled(posix.normalize(glob), flags).test(path);
  // Globs match "/"-separated relative paths: absolute ones are compared without the leading "/".
  const absolute = (glob: string) => test(glob.replace(/^\/+/, ""), target.abs.split(sep).join("/").replace(/^\/+/, ""));
  if (spec.startsWith("//")) return absolute(spec.slice(1));
  if (spec === "~" || spec.startsWith("~/")) return absolute(join(paths.home, spec.slice(1)).split(sep).join("/"));
  const relSpec = spec.replace(/^(\.\/)+/, "").replace(/^\/+/, "");
  if (target.rel !== undefined) {
    if (relSpec === "" || relSpec === ".") return target.rel === ".";
    const norm = posix.normalize(relSpec);
    // A workspace pattern with `..` in it names a place outside the workspace: compare whole paths.
    if (norm.startsWith("../")) return absolute(posix.join(paths.root.split(sep).join("/"), norm));
    if (test(norm, target.rel)) return true;
  }
  return deny && spec.startsWith("/") && absolute(spec);
}
