// glob: files of the workspace matching a pattern, newest first. Pure JS; respects .gitignore.
import { statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import { expandBraces, globToRegExp, splitStatic } from "./glob-match.ts";
import type { Tool, ToolContext, ToolOutcome } from "./types.ts";
import { ToolError, displayPath, fmt, resolveInWorkspace } from "./util.ts";
import { DEFAULT_MAX_ENTRIES, namedSegments, walk } from "./walk.ts";

export const GLOB_MAX_RESULTS = 200;
/** Bound on matches held before sorting. */
const GLOB_MAX_COLLECTED = 100_000;

const schema = z.strictObject({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.ts", "src/**/*.{ts,tsx}", "test/*.test.ts".'),
  path: z.string().optional().describe("Folder to search in, relative to the workspace root (default: the workspace root)."),
});

export type GlobInput = z.infer<typeof schema>;

/** The folder a search starts from: a real directory inside the workspace. */
export function searchRoot(ctx: ToolContext, path: string | undefined): { abs: string; rel: string; root: string; isFile: boolean } {
  const r = resolveInWorkspace(ctx, path ?? ".");
  const denied = ctx.readDenied?.(r.abs);
  if (denied) throw new ToolError(denied);
  let st;
  try {
    st = statSync(r.abs);
  } catch {
    throw new ToolError(`${path} does not exist`);
  }
  return { ...r, isFile: st.isFile() };
}

export interface GlobMatch {
  /** Workspace-relative, "/"-separated. */
  path: string;
  mtimeMs: number;
}

export interface GlobResult {
  matches: GlobMatch[];
  /** A folder named by the pattern without any glob syntax. */
  namedFolder?: string;
  walkCapped: boolean;
}

/** All files matching `pattern` under `base` (real path), newest first. Throws ToolError on escapes. */
export function globFiles(ctx: ToolContext, pattern: string, baseAbs: string): GlobResult {
  const found = new Map<string, GlobMatch>();
  let walkCapped = false;
  let namedFolder: string | undefined;
  for (const p of expandBraces(pattern)) {
    const { prefix, rest } = splitStatic(p);
    let target: string;
    let root: string;
    try {
      const r = resolveInWorkspace(ctx, prefix === "" ? baseAbs : isAbsolute(prefix) ? prefix : join(baseAbs, prefix));
      target = r.abs;
      root = r.root;
    } catch (err) {
      if (err instanceof ToolError) throw new ToolError(`pattern ${p}: ${err.message}`);
      throw err;
    }
    let st;
    try {
      st = statSync(target);
    } catch {
      continue;
    }
    if (rest === "") {
      if (st.isFile() && !ctx.readDenied?.(target)) found.set(target, { path: displayPath(root, target), mtimeMs: st.mtimeMs });
      else if (st.isDirectory()) namedFolder = displayPath(root, target);
      continue;
    }
    if (!st.isDirectory()) continue;
    const re = globToRegExp(rest);
    const stats = walk({
      workspace: root,
      root: target,
      named: namedSegments(rest),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      maxEntries: DEFAULT_MAX_ENTRIES,
      onFile: (e) => {
        // A file the read rules keep from the model is not listed either.
        if (!re.test(e.rel) || found.has(e.abs) || ctx.readDenied?.(e.real)) return;
        let mtimeMs = 0;
        try {
          mtimeMs = statSync(e.real).mtimeMs;
        } catch {
          return;
        }
        found.set(e.abs, { path: displayPath(root, e.abs), mtimeMs });
        if (found.size >= GLOB_MAX_COLLECTED) return false;
      },
    });
    if (stats.capped || found.size >= GLOB_MAX_COLLECTED) walkCapped = true;
  }
  const matches = [...found.values()].sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { matches, walkCapped, ...(namedFolder !== undefined ? { namedFolder } : {}) };
}

export const globTool: Tool<GlobInput> = {
  name: "glob",
  description:
    "Find files by name pattern (** * ? [abc] {a,b}) in the workspace; returns workspace-relative paths, most recently modified first, " +
    `at most ${GLOB_MAX_RESULTS}. Files ignored by .gitignore, .git/ and node_modules/ are skipped unless the pattern names them; symlinked folders are not followed.`,
  schema,
  readOnly: true,
  async run(input, ctx): Promise<ToolOutcome> {
    const base = searchRoot(ctx, input.path);
    if (base.isFile) throw new ToolError(`path ${input.path} is a file; give a folder (or put the file name in the pattern)`);
    const r = globFiles(ctx, input.pattern, base.abs);
    const where = base.rel === "." ? "the workspace" : base.rel;
    if (r.matches.length === 0) {
      const hint = r.namedFolder !== undefined ? ` ${r.namedFolder} is a folder; use "${r.namedFolder}/*" or "${r.namedFolder}/**/*" to list its files.` : "";
      return { content: `No files match ${input.pattern} in ${where}.${hint}` };
    }
    const shown = r.matches.slice(0, GLOB_MAX_RESULTS).map((m) => m.path);
    const notes: string[] = [];
    if (r.matches.length > GLOB_MAX_RESULTS) notes.push(`[${fmt(r.matches.length)} files match; showing the ${GLOB_MAX_RESULTS} most recently modified — narrow the pattern or path to see others]`);
    if (r.walkCapped) notes.push("[the search stopped early in a very large tree; results may be incomplete — narrow the path]");
    return { content: [...shown, ...notes].join("\n") };
  },
};
