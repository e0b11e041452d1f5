// What a shell command does to files, for the file ledger (ledger.ts): the usual idioms of coding
// agents read from the command text alone (a best effort, never a guess at content). Pure; each
// call's answer is memoised by the ledger.

/** What a shell command (or a tool call) does to files. */
export interface ShellFiles {
  read: string[];
  modified: string[];
  /** Patch files this command writes (a heredoc of a unified diff), with the files each touches. */
  patches?: Record<string, string[]>;
  /** Patch files this command applies (`patch -p1 < fix.patch`, `git apply fix.patch`). */
  applies?: string[];
  /** SWE-agent's `open <path>` / `create <path>`: the file later `edit` commands act on. */
  opened?: string;
  /** SWE-agent's `edit N:M` / `insert` (no path): edits the file opened last. */
  editsOpened?: boolean;
}

// A token that names a file: has a slash or a dot-extension, no shell metacharacters.
const PATHLIKE = /^(?:~|\.{1,2}|[\w@+-]+)?(?:\/[\w@.+-]+)+\/?$|^[\w@+-][\w@.+-]*\.[A-Za-z0-9]{1,8}$|^\.[\w@+-][\w@.+-]*$/;
export const isPath = (t: string) => PATHLIKE.test(t) && !t.startsWith("/dev/") && !/^\d+(\.\d+)*$/.test(t);

/**
 * The simple commands of a command line: split at unquoted `&&`, `||`, `;`, `|` and newlines, after
 * joining backslash-newline continuations (shell quoting: nothing is special inside '…', a
 * backslash escapes inside "…" and outside quotes). Unbalanced quotes: split at every separator.
 */
export function segments(text: string): string[] {
  const joined = text.replace(/\\\r?\n/g, " ");
  const out: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < joined.length; i++) {
    const ch = joined[i]!;
    if (quote === "'") {
      if (ch === "'") quote = null;
    } else if (ch === "\\") {
      i++;
    } else if (quote === '"') {
      if (ch === '"') quote = null;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
    } else if (ch === ";" || ch === "\n" || ch === "|" || (ch === "&" && joined[i + 1] === "&")) {
      out.push(joined.slice(start, i));
      if ((ch === "|" && joined[i + 1] === "|") || ch === "&") i++;
      start = i + 1;
    }
  }
  if (quote !== null) return joined.split(/&&|\|\||;|\||\n/);
  out.push(joined.slice(start));
  return out;
}

function words(segment: string): string[] {
  return segment.match(/'[^']*'|"[^"]*"|[^\s'"]+/g)?.map((w) => w.replace(/^['"]|['"]$/g, "")) ?? [];
}

const READ_CMDS = new Set(["cat", "head", "tail", "less", "more", "nl", "sed", "awk", "grep", "wc", "diff", "bat", "view", "open"]);
/** Options whose next word is a script or pattern, not a file. */
const SCRIPT_OPTS = new Set(["-e", "-E", "-f", "--expression", "--file", "--regexp"]);

/** The file a unified diff's `+++ b/path` (or `--- a/path` for a deletion) line names. */
function diffTarget(line: string): string | undefined {
  const m = /^(?:\+\+\+|---) (?:[ab]\/)?([^\t\n]+?)(?:\t.*)?$/.exec(line);
  return m && m[1] !== "/dev/null" ? m[1]!.trim() : undefined;
}

/** A quoted string whose quote is capture group `n` (its text, group n + 1). */
const str = (n: number) => `(['"])([^'"\\n]+)\\${n}`;
/** `name = 'path'` and `name = Path('path')` assignments of a script. */
const ASSIGN = new RegExp(`\\b(\\w+)\\s*=\\s*(?:(?:pathlib\\.)?Path\\(\\s*)?${str(2)}`, "g");
/** `open('path', 'w')` / `open(name, "a")`, `Path('path').write_text(`, `name.write_text(`. */
const OPEN_LITERAL = new RegExp(`\\bopen\\(\\s*${str(1)}\\s*,\\s*(?:mode\\s*=\\s*)?['"][wax]`, "g");
const OPEN_NAME = /\bopen\(\s*(\w+)\s*,\s*(?:mode\s*=\s*)?['"][wax]/g;
const PATH_WRITE_LITERAL = new RegExp(`\\bPath\\(\\s*${str(1)}\\s*\\)\\.write_(?:text|bytes)\\(`, "g");
const NAME_WRITE = /\b(\w+)\.write_(?:text|bytes)\(/g;

/**
 * Files a script embedded in a command writes (python heredocs, `python -c`, scripts written to a
 * file): `open(…, 'w'|'a'|'x')` and pathlib's `write_text` / `write_bytes`, on a literal path or on a
 * name assigned a literal path in the same text.
 */
export function scriptWrites(text: string): string[] {
  if (!text.includes("open(") && !text.includes(".write_")) return [];
  const out: string[] = [];
  const names = new Map<string, string>();
  for (const m of text.matchAll(ASSIGN)) names.set(m[1]!, m[3]!);
  for (const m of text.matchAll(OPEN_LITERAL)) out.push(m[2]!);
  for (const m of text.matchAll(PATH_WRITE_LITERAL)) out.push(m[2]!);
  for (const re of [OPEN_NAME, NAME_WRITE]) {
    for (const m of text.matchAll(re)) {
      const p = names.get(m[1]!);
      if (p !== undefined && isPath(p)) out.push(p);
    }
  }
  return out;
}

export function shellFiles(command: string): ShellFiles {
  const read: string[] = [];
  const modified: string[] = scriptWrites(command);
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
      } else if (heredoc && /^(?:\+\+\+|---) /.test(line)) {
        const f = diffTarget(line);
        if (f && !heredoc.files.includes(f)) heredoc.files.push(f);
      }
      continue;
    }
    const h = /<<-?\s*['"]?(\w+)['"]?/.exec(line);
    if (h) {
      inHeredoc = h[1]!;
      const target = /(?:^|\s)>\s*(\S+)/.exec(line.replace(/<<-?\s*['"]?\w+['"]?/, ""))?.[1];
      heredoc = { ...(target ? { target } : {}), toPatch: /(?:^|[\s;&|(])(?:patch\b|git\s+apply\b)/.test(line), files: [] };
    }
    body.push(line);
  }
  for (const segment of segments(body.join("\n"))) {
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
    // Options, the scripts given to -e/-f, and redirections (with a bare operator's target word) are not the command's files.
    let args = w.slice(1).filter((a, i, all) => !a.startsWith("-") && !/^\d?[<>]/.test(a) && !/^\d?(?:>>?|<)$/.test(all[i - 1] ?? "") && !SCRIPT_OPTS.has(all[i - 1] ?? ""));
    const scripted = w.some((a) => SCRIPT_OPTS.has(a));
    // sed/awk/grep/perl take a script or pattern first (unless given with -e): it is not a file.
    if ((cmd === "sed" || cmd === "awk" || cmd === "grep" || cmd === "perl") && !scripted) args = args.slice(1);
    if ((cmd === "sed" && w.some((a) => a === "-i" || a.startsWith("-i") || a === "--in-place")) || (cmd === "perl" && w.some((a) => /^-[a-hj-zA-Z]*i/.test(a)))) {
      // The files come last, after the script (which may span words when its quoting is odd).
      let k = args.length;
      while (k > 0 && isPath(args[k - 1]!)) k--;
      modified.push(...args.slice(k));
    } else if (cmd === "git" && (w[1] === "checkout" || w[1] === "restore") && !w.some((a) => a === "-b" || a === "-B" || a === "--orphan")) {
      // Paths checked out or restored are rewritten (a branch name has no extension or slash).
      for (const a of w.slice(2)) if (!a.startsWith("-") && isPath(a)) modified.push(a);
    } else if (cmd === "patch" || (cmd === "git" && w[1] === "apply")) {
      // The patch file is read from `< file`, `-i file` or (git apply) an argument.
      const input = w.findIndex((x) => x === "<" || x === "-i" || x === "--input");
      const file = input >= 0 ? w[input + 1] : w.find((x) => x.startsWith("<") && x.length > 1)?.slice(1) ?? (cmd === "git" ? w.slice(2).find((x) => !x.startsWith("-")) : undefined);
      if (file) applies.push(file);
      else if (cmd === "patch") for (const a of args) if (isPath(a)) modified.push(a);
    } else if (cmd === "touch" || cmd === "rm" || cmd === "mkdir") {
      for (const a of args) if (isPath(a)) modified.push(a);
    } else if (cmd === "create" && args[0] && isPath(args[0])) {
      // SWE-agent's `create path`: a new file, opened for the edits that follow.
      modified.push(args[0]);
      opened = args[0];
    } else if (cmd === "open" && args[0] && isPath(args[0])) {
      // SWE-agent's file viewer: `open path [line]`.
      read.push(args[0]);
      opened = args[0];
    } else if (cmd === "edit" && args[0] && isPath(args[0]) && !/^\d+:\d+$/.test(args[0])) {
      // An editor on a named file.
      modified.push(args[0]);
    } else if (cmd === "edit" || (cmd === "insert" && (args.length === 0 || /^\d+$/.test(args[0]!)))) {
      // SWE-agent's `edit N:M`, `edit 'search' 'replace'` and `insert N`: the file opened last.
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
