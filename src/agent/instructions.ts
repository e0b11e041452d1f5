// Project instructions: AGENTS.md and CLAUDE.md from the user's ~/.lethe and from the repository
// root down to the workspace. They go into the system prompt, which compaction never edits, so the
// project's rules survive every compaction (the top complaint about compaction in every agent).
import { readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";

export const INSTRUCTION_NAMES = ["AGENTS.md", "CLAUDE.md"] as const;
/** Caps, in characters: one file, and all of them together (the system prompt is paid every request). */
export const MAX_FILE_CHARS = 40_000;
export const MAX_TOTAL_CHARS = 80_000;

export interface InstructionFile {
  path: string;
  /** Where it comes from: "user" (~/.lethe) or "project". */
  scope: "user" | "project";
  text: string;
  truncated: boolean;
}

export interface LoadedInstructions {
  files: InstructionFile[];
  warnings: string[];
}

/** The nearest folder at or above `dir` holding a `.git` entry; undefined when there is none. */
export function repositoryRoot(dir: string, exists: (p: string) => boolean = pathExists): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    if (exists(join(d, ".git"))) return d;
    if (dirname(d) === d) return undefined;
  }
}

function pathExists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Candidate paths, in prompt order: the user's first, then from the repository root down to the
 * workspace (the closest file last, so it has the last word). Without a repository, only the
 * workspace itself: never every folder up to /.
 */
export function instructionCandidates(workspace: string, home: string, exists: (p: string) => boolean = pathExists): { path: string; scope: "user" | "project" }[] {
  const out: { path: string; scope: "user" | "project" }[] = INSTRUCTION_NAMES.map((n) => ({ path: join(home, ".lethe", n), scope: "user" as const }));
  const root = repositoryRoot(workspace, exists) ?? workspace;
  const dirs: string[] = [];
  for (let d = workspace; ; d = dirname(d)) {
    dirs.unshift(d);
    if (d === root || dirname(d) === d) break;
  }
  for (const d of dirs) for (const n of INSTRUCTION_NAMES) out.push({ path: join(d, n), scope: "project" });
  return out;
}

export type ReadText = (path: string) => string | undefined;

/** Reads a regular text file; undefined when absent. Throws with a short reason otherwise. */
export function readTextFile(path: string): string | undefined {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new Error(code === "ELOOP" ? "a symlink loop" : (e as Error).message);
  }
  if (!st.isFile()) throw new Error("not a regular file");
  // Read a bounded prefix: a 2 GB AGENTS.md must not take the process down.
  const buf = readFileSync(path);
  const text = buf.subarray(0, MAX_FILE_CHARS * 4).toString("utf8");
  if (text.includes("\u0000")) throw new Error("not a text file");
  return text;
}

export function loadInstructions(workspace: string, home: string, read: ReadText = readTextFile, exists?: (p: string) => boolean): LoadedInstructions {
  const files: InstructionFile[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const c of instructionCandidates(workspace, home, exists)) {
    if (seen.has(c.path)) continue; // home inside the repository: read once
    seen.add(c.path);
    let text: string | undefined;
    try {
      text = read(c.path);
    } catch (e) {
      warnings.push(`skipped instructions file ${c.path}: ${(e as Error).message}`);
      continue;
    }
    if (text === undefined || text.trim() === "") continue;
    let truncated = false;
    const room = Math.min(MAX_FILE_CHARS, MAX_TOTAL_CHARS - total);
    if (room <= 0) {
      warnings.push(`skipped instructions file ${c.path}: the instruction files already hold ${MAX_TOTAL_CHARS.toLocaleString("en-US")} characters`);
      continue;
    }
    if (text.length > room) {
      text = text.slice(0, room);
      truncated = true;
      warnings.push(`instructions file ${c.path} cut to ${room.toLocaleString("en-US")} characters (keep AGENTS.md short: it is sent with every request)`);
    }
    total += text.length;
    files.push({ path: c.path, scope: c.scope, text: text.trimEnd(), truncated });
  }
  return { files, warnings };
}

/** The system prompt section; "" when there is nothing. Paths are shown relative to the workspace. */
export function renderInstructions(files: readonly InstructionFile[], workspace: string): string {
  if (files.length === 0) return "";
  const parts = files.map((f) => {
    const shown = f.scope === "user" ? `~/.lethe/${f.path.split(/[\\/]/).pop()}` : relative(workspace, f.path) || f.path;
    return `<instructions file="${shown}">\n${f.text}${f.truncated ? "\n[… cut: the file is longer]" : ""}\n</instructions>`;
  });
  return `<project-instructions>
The user's and the project's instructions for you. Follow them: they take precedence over the general guidance above. Later files are closer to the workspace and win over earlier ones.
${parts.join("\n")}
</project-instructions>`;
}

/** Starter prompt of /init: the model explores the repository and writes (or improves) AGENTS.md. */
export function initPrompt(exists: boolean): string {
  const task = exists
    ? "An AGENTS.md already exists in the workspace root. Read it, then improve it where it is wrong, missing something important or too long; keep what is right. Edit it with edit_file."
    : "Create AGENTS.md in the workspace root with write_file.";
  return `Please analyse this repository and write the project instructions file AGENTS.md, which future sessions of coding agents (lethe, Claude Code, Codex, opencode) will read at the start of every session.
${task}
Explore first (glob, grep, read_file: README, package manifests, build and CI files, existing CLAUDE.md / .cursorrules / copilot instructions). Then include, concisely:
- the commands to build, lint, run all tests and run a single test;
- the architecture in a few lines (the main folders and what lives where);
- code style and conventions that are not obvious from the code (naming, error handling, imports, formatting);
- anything a newcomer would get wrong (generated files, required environment, gotchas).
Keep it short (under about 60 lines): it is sent with every request. Do not invent commands you did not see in the repository.`;
}
