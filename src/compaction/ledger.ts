// The file ledger: every file read and every file modified so far. It survives each
// compaction verbatim (a summary may forget a path; the ledger does not), and a rebuilt
// history carries it as a tagged block, so the next compaction folds it back in.
import { LEDGER_CLOSE, LEDGER_OPEN } from "./tags.ts";
import { blocksOf, toolUsesOf } from "../messages/blocks.ts";
import type { Message, ToolUseBlock } from "../messages/types.ts";

/** Every file read and modified in a session, carried across compactions. */
export interface FileLedger {
  /** Paths in first-seen order (Sets keep insertion order). */
  read: Set<string>;
  modified: Set<string>;
}

export const emptyLedger = (): FileLedger => ({ read: new Set(), modified: new Set() });

const READ_TOOLS = new Set(["read", "read_file", "open", "view", "notebookread", "cat"]);
const WRITE_TOOLS = new Set(["write", "write_file", "edit", "edit_file", "multiedit", "create", "insert", "notebookedit", "apply_patch"]);
const PATH_KEYS = ["file_path", "path", "filename", "notebook_path", "file"];

function inputPath(input: Record<string, unknown>): string | undefined {
  for (const k of PATH_KEYS) if (typeof input[k] === "string" && input[k]) return input[k] as string;
  return undefined;
}

// A token that names a file: has a slash or a dot-extension, no shell metacharacters.
const PATHLIKE = /^(?:~|\.{1,2}|[\w@+-]+)?(?:\/[\w@.+-]+)+\/?$|^[\w@+-][\w@.+-]*\.[A-Za-z0-9]{1,8}$/;
const isPath = (t: string) => PATHLIKE.test(t) && !t.startsWith("/dev/") && !/^\d+(\.\d+)*$/.test(t);

function words(segment: string): string[] {
  return segment.match(/'[^']*'|"[^"]*"|[^\s'"]+/g)?.map((w) => w.replace(/^['"]|['"]$/g, "")) ?? [];
}

const READ_CMDS = new Set(["cat", "head", "tail", "less", "more", "nl", "sed", "awk", "grep", "wc", "diff", "bat", "view", "open"]);

/** Files a shell command reads and writes, from the usual idioms (a best effort, never a guess at content). */
/** What a shell command does to files. */
export interface ShellFiles {
  read: string[];
  modified: string[];
  /** Patch files this command writes (a heredoc of a unified diff), with the files each touches. */
  patches?: Record<string, string[]>;
  /** Patch files this command applies (`patch -p1 < fix.patch`, `git apply fix.patch`). */
  applies?: string[];
  /** SWE-agent's `open <path>`: the file later `edit` commands act on. */
  opened?: string;
  /** SWE-agent's `edit N:M` (no path): edits the file opened last. */
  editsOpened?: boolean;
}

/** The file a unified diff's `+++ b/path` (or `--- a/path` for a deletion) line names. */
function diffTarget(line: string): string | undefined {
  const m = /^(?:\+\+\+|---) (?:[ab]\/)?([^\t\n]+?)(?:\t.*)?$/.exec(line);
  return m && m[1] !== "/dev/null" ? m[1]!.trim() : undefined;
}

export function shellFiles(command: string): ShellFiles {
  const read: string[] = [];
  const modified: string[] = [];
  const patches: Record<string, string[]> = {};
  const applies: string[] = [];
  let opened: string | undefined;
  let editsOpened = false;
  // Heredoc bodies are content, not commands: look only at their first line.
  const lines = command.split("\n");
  const body: string[] = [];
  let inHeredoc: string | null = null;
  // The heredoc being read: where it goes (a file, or a command's stdin) and the files its diff names.
  let heredoc: { target?: string; toPatch: boolean; files: string[] } | undefined;
  for (const line of lines) {
    if (inHeredoc !== null) {
      if (line.trim() === inHeredoc) {
        inHeredoc = null;
        if (heredoc && heredoc.files.length > 0) {
          // A diff fed straight to patch / git apply is applied now; one written to a file, later.
          if (heredoc.toPatch) modified.push(...heredoc.files);
          else if (heredoc.target) patches[heredoc.target] = [...new Set(heredoc.files)];
        }
        heredoc = undefined;
      } else {
        // Python scripts in heredocs write files with open(path, "w").
        for (const m of line.matchAll(/open\(\s*['"]([^'"]+)['"]\s*,\s*['"][wax]/g)) modified.push(m[1]!);
        if (heredoc && /^(?:\+\+\+|---) /.test(line)) {
          const f = diffTarget(line);
          if (f && !heredoc.files.includes(f)) heredoc.files.push(f);
        }
        continue;
      }
    }
    const h = /<<-?\s*['"]?(\w+)['"]?/.exec(line);
    if (h) {
      inHeredoc = h[1]!;
      const target = /(?:^|\s)>\s*(\S+)/.exec(line.replace(/<<-?\s*['"]?\w+['"]?/, ""))?.[1];
      heredoc = { ...(target ? { target } : {}), toPatch: /(?:^|[\s;&|(])(?:patch\b|git\s+apply\b)/.test(line), files: [] };
    }
    body.push(line);
  }
  for (const m of body.join("\n").matchAll(/open\(\s*['"]([^'"]+)['"]\s*,\s*['"][wax]/g)) modified.push(m[1]!);
  for (const segment of body.join("\n").split(/&&|\|\||;|\||\n/)) {
    const w = words(segment.trim());
    if (w.length === 0) continue;
    // Redirections write files.
    for (let i = 0; i < w.length; i++) {
      const t = w[i]!;
      const redir = /^\d?>>?(.*)$/.exec(t);
      if (redir) {
        const target = redir[1] || w[i + 1];
        if (target && isPath(target)) modified.push(target);
      }
      if (t === "tee" && w[i + 1]) for (const x of w.slice(i + 1)) if (isPath(x)) modified.push(x);
    }
    const cmd = w[0]!.split("/").pop()!;
    // Options and redirections (with a bare operator's target word) are not the command's files.
    let args = w.slice(1).filter((a, i, all) => !a.startsWith("-") && !/^\d?[<>]/.test(a) && !/^\d?(?:>>?|<)$/.test(all[i - 1] ?? ""));
    // sed/awk/grep take a script or pattern first (unless given with -e): it is not a file.
    if ((cmd === "sed" || cmd === "awk" || cmd === "grep") && !w.includes("-e")) args = args.slice(1);
    if (cmd === "sed" && w.some((a) => a === "-i" || a.startsWith("-i"))) {
      for (const a of args) if (isPath(a)) modified.push(a);
    } else if (cmd === "patch" || (cmd === "git" && w[1] === "apply")) {
      // The patch file is read from `< file`, `-i file` or (git apply) an argument.
      const input = w.findIndex((x) => x === "<" || x === "-i" || x === "--input");
      const file = input >= 0 ? w[input + 1] : w.find((x) => x.startsWith("<") && x.length > 1)?.slice(1) ?? (cmd === "git" ? w.slice(2).find((x) => !x.startsWith("-")) : undefined);
      if (file) applies.push(file);
      else if (cmd === "patch") for (const a of args) if (isPath(a)) modified.push(a);
    } else if (cmd === "touch" || cmd === "rm" || cmd === "mkdir" || cmd === "create") {
      for (const a of args) if (isPath(a)) modified.push(a);
    } else if (cmd === "open" && args[0] && isPath(args[0])) {
      // SWE-agent's file viewer: `open path [line]`.
      read.push(args[0]);
      opened = args[0];
    } else if (cmd === "edit" && (args.length === 0 || /^\d+:\d+$/.test(args[0]!))) {
      editsOpened = true;
    } else if (cmd === "cp" || cmd === "mv") {
      const paths = args.filter(isPath);
      if (paths.length >= 2) {
        modified.push(paths[paths.length - 1]!);
        if (cmd === "mv") modified.push(...paths.slice(0, -1));
        else read.push(...paths.slice(0, -1));
      }
    } else if (READ_CMDS.has(cmd)) {
      for (const a of args) if (isPath(a)) read.push(a);
    } else if (cmd === "python" || cmd === "python3") {
      // `python file.py` runs (reads) a script.
      const script = args.find(isPath);
      if (script && script.endsWith(".py")) read.push(script);
    }
  }
  const out: ShellFiles = { read, modified };
  if (Object.keys(patches).length > 0) out.patches = patches;
  if (applies.length > 0) out.applies = applies;
  if (opened) out.opened = opened;
  if (editsOpened) out.editsOpened = true;
  return out;
}

// Blocks are never mutated, and every compaction walks the same calls again: parse each once.
const filesByCall = new WeakMap<ToolUseBlock, ShellFiles>();

/** What one tool call read and modified. */
export function callFiles(use: ToolUseBlock): ShellFiles {
  let f = filesByCall.get(use);
  if (!f) {
    f = parseCallFiles(use);
    filesByCall.set(use, f);
  }
  return f;
}

function parseCallFiles(use: ToolUseBlock): ShellFiles {
  const input = (use.input ?? {}) as Record<string, unknown>;
  const name = use.name.toLowerCase();
  const path = inputPath(input);
  if (name === "str_replace_editor" || name === "str_replace_based_edit_tool") {
    if (!path) return { read: [], modified: [] };
    return input.command === "view" ? { read: [path], modified: [] } : { read: [], modified: [path] };
  }
  if (READ_TOOLS.has(name)) return { read: path ? [path] : [], modified: [] };
  if (WRITE_TOOLS.has(name)) return { read: [], modified: path ? [path] : [] };
  const command = input.command ?? input.cmd;
  if (typeof command === "string") return shellFiles(command);
  return { read: [], modified: [] };
}

export { LEDGER_CLOSE, LEDGER_OPEN };

/** Render as a tagged block the next compaction can parse back. */
export function renderLedger(l: FileLedger): string {
  const lines = [LEDGER_OPEN, "Files modified so far (re-read before editing again):"];
  for (const p of l.modified) lines.push(`modified: ${p}`);
  lines.push("Files read so far:");
  for (const p of l.read) lines.push(`read: ${p}`);
  lines.push(LEDGER_CLOSE);
  return lines.join("\n");
}

export function parseLedger(text: string, into: FileLedger = emptyLedger()): FileLedger {
  const start = text.indexOf(LEDGER_OPEN);
  const end = text.indexOf(LEDGER_CLOSE, start);
  if (start < 0 || end < 0) return into;
  for (const line of text.slice(start, end).split("\n")) {
    const m = /^(read|modified): (.+)$/.exec(line);
    if (m) into[m[1] as "read" | "modified"].add(m[2]!);
  }
  return into;
}

/** The ledger of a history: the one carried by an earlier rebuild, plus every call since. */
export function ledgerOf(history: readonly Message[], base: FileLedger = emptyLedger()): FileLedger {
  const l: FileLedger = { read: new Set(base.read), modified: new Set(base.modified) };
  const patches = new Map<string, string[]>();
  let opened: string | undefined;
  for (const m of history) {
    if (m.role === "user") {
      for (const b of blocksOf(m)) if (b.type === "text" && b.text.includes(LEDGER_OPEN)) parseLedger(b.text, l);
      continue;
    }
    for (const use of toolUsesOf(m)) {
      const f = callFiles(use);
      for (const p of f.read) l.read.add(p);
      for (const p of f.modified) l.modified.add(p);
      // Patches written now and applied later; SWE-agent's edits of the file opened last.
      if (f.patches) for (const [file, touched] of Object.entries(f.patches)) patches.set(file, touched);
      for (const file of f.applies ?? []) for (const p of patches.get(file) ?? patches.get(file.replace(/^\.\//, "")) ?? []) l.modified.add(p);
      if (f.opened) opened = f.opened;
      if (f.editsOpened && opened) l.modified.add(opened);
    }
  }
  return l;
}

/**
 * Parses the file operations of calls in messages not seen before (newest first, up to the first
 * one seen), so the ledger's cost is paid a turn at a time, O(new messages), and a compaction that
 * walks thirty calls at once (a snip, a summary) finds them parsed.
 */
export function indexNewCalls(history: readonly Message[], seen: WeakSet<Message>): void {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (seen.has(m)) break;
    seen.add(m);
    if (m.role === "assistant") for (const use of toolUsesOf(m)) callFiles(use);
  }
}
