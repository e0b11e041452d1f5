// Walking the workspace the way git sees it: .gitignore files (root and nested; negation,
// folder-only and anchored patterns, **), .git/ and node_modules/ always skipped unless named.
// Symlinked folders are not followed; a symlinked file is kept only when it points inside the workspace.
import { type Dirent, readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { globToRegExp } from "./glob-match.ts";
import { isInside } from "./util.ts";

export interface IgnoreRule {
  re: RegExp;
  negate: boolean;
  dirOnly: boolean;
  /** A pattern without "/" matches a name at any depth; with one, the path from the .gitignore's folder. */
  nameOnly: boolean;
}

export interface RuleSet {
  /** The folder holding the .gitignore (real path). */
  base: string;
  rules: IgnoreRule[];
}

/** Parses a .gitignore file's text. */
export function parseGitignore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split("\n")) {
    let line = raw.replace(/\r$/, "");
    if (line === "" || line.startsWith("#")) continue;
    // Trailing spaces are dropped unless escaped with a backslash.
    line = line.replace(/(?<!\\)[ \t]+$/, "");
    let negate = false;
    if (line.startsWith("!")) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith("/")) {
      dirOnly = true;
      line = line.replace(/\/+$/, "");
    }
    if (line === "") continue;
    const anchored = line.includes("/");
    line = line.replace(/^\/+/, "");
    if (line === "") continue;
    try {
      rules.push({ re: globToRegExp(line), negate, dirOnly, nameOnly: !anchored });
    } catch {
      // A line we cannot read is skipped, as git does with malformed patterns.
    }
  }
  return rules;
}

const toPosix = (p: string) => (sep === "/" ? p : p.split(sep).join("/"));

/** True when the last matching rule (outer .gitignore files first) excludes the path. */
export function isIgnored(abs: string, isDir: boolean, sets: readonly RuleSet[]): boolean {
  let ignored = false;
  const name = basename(abs);
  for (const set of sets) {
    if (set.rules.length === 0) continue;
    const rel = toPosix(relative(set.base, abs));
    for (const r of set.rules) {
      if (r.dirOnly && !isDir) continue;
      if (r.re.test(r.nameOnly ? name : rel)) ignored = !r.negate;
    }
  }
  return ignored;
}

function loadRules(dir: string): RuleSet | null {
  const file = join(dir, ".gitignore");
  try {
    const st = statSync(file);
    if (!st.isFile() || st.size > 1_000_000) return null;
    const rules = parseGitignore(readFileSync(file, "utf8"));
    return rules.length ? { base: dir, rules } : null;
  } catch {
    return null;
  }
}

/** Folders skipped unless the pattern or path names them. */
export const ALWAYS_SKIPPED = new Set([".git", "node_modules"]);

export interface WalkEntry {
  /** The path as found in the tree (a symlink keeps its own path). */
  abs: string;
  /** The real file to read (differs from abs for a symlink). */
  real: string;
  /** "/"-separated path relative to the walk root. */
  rel: string;
  name: string;
}

export interface WalkOptions {
  /** Real path of the workspace root (.gitignore files are read from here down). */
  workspace: string;
  /** Real path of the folder to walk (inside the workspace). */
  root: string;
  /** Folder names the caller asked for explicitly: never skipped or ignored. */
  named?: ReadonlySet<string>;
  signal?: AbortSignal;
  /** Bound on directory entries looked at. */
  maxEntries?: number;
  /** Called per file; return false to stop the walk. */
  onFile: (e: WalkEntry) => boolean | void;
}

export interface WalkStats {
  entries: number;
  /** True when maxEntries stopped the walk early. */
  capped: boolean;
  stopped: boolean;
  unreadable: number;
}

export const DEFAULT_MAX_ENTRIES = 200_000;

/** The rule sets of the folders from the workspace root down to `dir` (inclusive). */
export function ruleSetsFor(workspace: string, dir: string): RuleSet[] {
  const chain: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    chain.unshift(d);
    if (d === workspace || !isInside(workspace, d) || dirname(d) === d) break;
  }
  return chain.map(loadRules).filter((s): s is RuleSet => s !== null);
}

/** Depth-first walk: a folder's files in name order, then its subfolders in name order. */
export function walk(opts: WalkOptions): WalkStats {
  const named = opts.named ?? new Set<string>();
  const maxEntries = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const stats: WalkStats = { entries: 0, capped: false, stopped: false, unreadable: 0 };
  const stack: { dir: string; sets: RuleSet[] }[] = [{ dir: opts.root, sets: ruleSetsFor(opts.workspace, opts.root) }];

  while (stack.length > 0) {
    if (opts.signal?.aborted) {
      stats.stopped = true;
      break;
    }
    const { dir, sets } = stack.pop() as { dir: string; sets: RuleSet[] };
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      stats.unreadable++;
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: { dir: string; sets: RuleSet[] }[] = [];
    for (const ent of entries) {
      if (++stats.entries > maxEntries) {
        stats.capped = true;
        return stats;
      }
      const abs = join(dir, ent.name);
      const explicit = named.has(ent.name);
      if (ent.isDirectory()) {
        if (!explicit && (ALWAYS_SKIPPED.has(ent.name) || isIgnored(abs, true, sets))) continue;
        const own = loadRules(abs);
        subdirs.push({ dir: abs, sets: own ? [...sets, own] : sets });
        continue;
      }
      if (ent.name === ".git") continue; // a worktree's .git file
      let real = abs;
      if (ent.isSymbolicLink()) {
        // Symlinked folders are not followed (loops, escapes); symlinked files must stay inside.
        try {
          real = realpathSync.native(abs);
          if (!isInside(opts.workspace, real) || !statSync(real).isFile()) continue;
        } catch {
          continue;
        }
      } else if (!ent.isFile()) continue;
      if (!explicit && isIgnored(abs, false, sets)) continue;
      const keepGoing = opts.onFile({ abs, real, rel: toPosix(relative(opts.root, abs)), name: ent.name });
      if (keepGoing === false) {
        stats.stopped = true;
        return stats;
      }
    }
    // Push in reverse so the walk visits folders in name order.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i] as { dir: string; sets: RuleSet[] });
  }
  return stats;
}

/** Literal (non-glob) segment names of patterns: folders the caller named explicitly. */
export function namedSegments(...patterns: (string | undefined)[]): Set<string> {
  const out = new Set<string>();
  for (const p of patterns) {
    if (!p) continue;
    for (const s of p.split(/[/\\{},]/)) if (s && !/[*?[]/.test(s)) out.add(s);
  }
  return out;
}
