// The benchmark's own definition of the files and shell commands in a recorded history. Retention
// (retention.ts) looks for these items in every rebuilt context. The code is written from the
// definition below and shares no code with the engine (src/), so a bug in lethe's file ledger
// or work record cannot score itself as retained.
//
// Tool calls are matched by name, case-insensitively. A path is the value of the call's first
// `file_path`, `path`, `filename` or `notebook_path` input, exactly as written. A file tool call
// whose tool_result has is_error set did nothing, so it counts for nothing.
//
// READ: the paths named by
//   - file-reading tools: Read, read_file, view_file, NotebookRead, SWE-agent's `open`, and
//     str_replace_editor / str_replace_based_edit_tool with command "view";
//   - obvious shell reads: `cat`, `head`, `tail`, `less`, `nl` and `wc` of plain path arguments,
//     and `sed -n SCRIPT FILE…` (without -i).
//   Nothing else counts as a read: not grep/awk/diff, not a script run (`python x.py`), not the
//   source of a `cp`, not a directory listing. The definition is conservative on purpose.
// MODIFIED: the paths named by
//   - file-writing and editing tools: Write, write_file, create_file, Edit, edit_file,
//     MultiEdit, NotebookEdit, SWE-agent's `create`, str_replace_editor /
//     str_replace_based_edit_tool with any command other than "view";
//   - SWE-agent's path-less `edit` / `insert`: the file last opened by `open` or `create`;
//   - a patch: apply_patch (as a tool whose input holds the patch, or as a shell command), or
//     `patch` / `git apply` (not --dry-run / --check) fed a diff. The diff is a heredoc of the
//     same command, or else the content last written to the patch file by an earlier heredoc
//     (`cat > fix.patch << 'EOF'`) or Write call. The files a patch changes are those its
//     `+++ b/PATH` lines name (or `--- a/PATH` when `+++` is /dev/null, for a deletion), a/ and
//     b/ stripped, and its `*** Add|Update|Delete File: PATH` and `*** Move to: PATH` lines;
//   - obvious shell writes: the target of `>`, `>>`, `>|`, `&>` (with or without an fd number;
//     not /dev/…), the files of `tee`, of `sed -i` / `--in-place` and of `touch`; the
//     destination of `cp`; every path of `mv`; the arguments of `rm`; the paths of
//     `git checkout -- PATH…`, of `git restore PATH…` and a `git checkout PATH.ext`;
//   - Python that writes a literal path: `open('PATH', 'w'|'a'|'x'…)` or
//     `Path('PATH').write_text(…)`/`.write_bytes(…)` anywhere in a shell command's text (a
//     `python -c` script, a heredoc). A script written to a file and run later counts at the
//     command that writes it.
//   `rm` and the source of `mv` count: deleting a file or moving it away changes what is at
//   that path, and a final diff lists a deleted file too. `mkdir` does not count: it makes no
//   file. A shell command counts whatever its exit code, because a command line that failed
//   may still have done part of its work.
//   A shell argument is a PLAIN PATH when it is not an option (it does not start with `-`), has
//   no unquoted `$`, backtick, `*`, `?`, `[` or `{` (the shell would expand it), contains a `/`
//   or a `.` followed by a character (a path or a file name with an extension, so `README`,
//   `20` or `1,20p` are not), is not made only of digits, dots and commas, and is not under
//   /dev/. Quotes are removed; a `~` is kept as written.
//   Shell parsing: a command line splits into simple commands at unquoted `;`, `&`, `&&`, `|`,
//   `||`, `(`, `)` and newlines; a backslash-newline joins lines; a heredoc's body is data,
//   not commands; leading `NAME=value` words are skipped and the command's name is the last
//   part of its first word (`/usr/bin/cat` is `cat`). A command line with a quote, backtick or
//   `$(` that is never closed is a syntax error the shell runs nothing of: it touches no file.
// Both lists are in first-seen order, each path once.
//
// SHELL COMMANDS: every call of a shell tool (bash, shell, sh, exec_command, execute_bash,
// execute_command, run_command, run_shell_command, run_terminal_cmd, terminal, local_shell)
// that has a tool_result, oldest first. The command is its `command` or `cmd` input (an argv
// list is joined with spaces, except `[sh|bash|zsh, -c|-lc, SCRIPT]`, which is the SCRIPT).
//   - The item's command is the first non-blank line of the command, trimmed, its first 200
//     characters (what a record of past work can show, searchable as a substring).
//   - It FAILED when its tool_result has is_error, or its output states a non-zero exit code:
//     `<returncode>N</returncode>` (mini-swe-agent) or a line `Exit code N` (Claude Code). No
//     other output makes it a failure: a traceback printed by a command that exited 0 is
//     output, not a failed command.
//   - A failed command's error line is the line of its output that says what went wrong: after
//     the last `Traceback (most recent call last):`, the first non-blank line that is not
//     indented (the exception that ended the program); without a traceback, the first line
//     that names an error (error, exception, fail, fatal, not found, no such file, denied,
//     cannot, can't, unable, invalid, timed out), skipping pytest's `===`/`___` banner lines.
//     Trimmed, its first 120 characters. The `<returncode>`/`<output>` tags are removed first.
//     A failure with no such line (e.g. grep finding nothing) has no error line.
import type { ContentBlock, Message, ToolUseBlock } from "../../src/messages/types.ts";

/** Characters of a command line an item keeps. */
export const COMMAND_LINE_CHARS = 200;
/** Characters of an error line an item keeps. */
export const ERROR_LINE_CHARS = 120;

/** Files a history read and modified, each in first-seen order. */
export interface FilesTouched {
  modified: string[];
  read: string[];
}

/** One shell command of a history and how it ended. */
export interface ShellCommand {
  /** First non-blank line of the command, trimmed, at most COMMAND_LINE_CHARS characters. */
  command: string;
  /** The exit code the output states ("0", "1", …); "error" when only is_error says it failed; "ok" when nothing is stated. */
  exit: string;
  /** For a failed command: the line that says what went wrong. */
  error?: string;
}

const SHELL_TOOLS = new Set([
  "bash",
  "shell",
  "sh",
  "exec_command",
  "execute_bash",
  "execute_command",
  "run_command",
  "run_shell_command",
  "run_terminal_cmd",
  "terminal",
  "local_shell",
]);
const READ_TOOLS = new Set(["read", "read_file", "view_file", "notebookread", "open"]);
const WRITE_TOOLS = new Set(["write", "write_file", "create_file", "edit", "edit_file", "multiedit", "notebookedit", "create", "insert"]);
const EDITOR_TOOLS = new Set(["str_replace_editor", "str_replace_based_edit_tool"]);
const PATH_KEYS = ["file_path", "path", "filename", "notebook_path"];

const blocks = (m: Message): ContentBlock[] => (typeof m.content === "string" ? [] : m.content);
const inputOf = (use: ToolUseBlock): Record<string, unknown> => (use.input && typeof use.input === "object" ? (use.input as Record<string, unknown>) : {});

function pathOf(input: Record<string, unknown>): string | undefined {
  for (const k of PATH_KEYS) {
    const v = input[k];
    if (typeof v === "string" && v.trim() !== "") return v;
  }
  return undefined;
}

/**
 * The command line a shell tool call runs, unescaped (as the model wrote it), or undefined when
 * the call is not a shell call.
 */
export function commandText(use: ToolUseBlock): string | undefined {
  if (!SHELL_TOOLS.has(use.name.toLowerCase())) return undefined;
  const input = inputOf(use);
  const c = input.command ?? input.cmd;
  if (typeof c === "string") return c.trim() === "" ? undefined : c;
  if (Array.isArray(c) && c.length > 0 && c.every((x) => typeof x === "string")) {
    const argv = c as string[];
    if (argv.length === 3 && /^(?:\/\S*\/)?(?:sh|bash|zsh)$/.test(argv[0]!) && /^-l?c$/.test(argv[1]!)) return argv[2];
    return argv.join(" ");
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Shell command lines.

interface Word {
  text: string;
  /** No unquoted expansion ($, backtick, glob, brace) in it. */
  plain: boolean;
}

interface Redirect {
  op: string;
  target: Word;
}

/** A simple command: its words, its redirections and the heredoc(s) fed to it. */
export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  heredoc?: string;
}

/**
 * Splits a command line into simple commands (see the definition above); undefined when a quote,
 * a backtick or a `$(` is never closed (the shell would stop at that syntax error and run nothing).
 */
export function simpleCommands(line: string): SimpleCommand[] | undefined {
  const s = line.replace(/\\\r?\n/g, "");
  const out: SimpleCommand[] = [];
  let cmd: SimpleCommand = { words: [], redirects: [] };
  let text = "";
  let inWord = false;
  let plain = true;
  let pendingOp: string | undefined;
  const heredocs: { delim: string; tabs: boolean; cmd: SimpleCommand }[] = [];

  const endWord = () => {
    if (!inWord) return;
    const w: Word = { text, plain };
    if (pendingOp !== undefined) {
      cmd.redirects.push({ op: pendingOp, target: w });
      if (pendingOp === "<<" || pendingOp === "<<-") heredocs.push({ delim: text, tabs: pendingOp === "<<-", cmd });
      pendingOp = undefined;
    } else {
      cmd.words.push(w);
    }
    text = "";
    inWord = false;
    plain = true;
  };
  const endCommand = () => {
    endWord();
    pendingOp = undefined;
    if (cmd.words.length > 0 || cmd.redirects.length > 0) out.push(cmd);
    cmd = { words: [], redirects: [] };
  };

  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\n") {
      endCommand();
      // Heredoc bodies start on the next line and end at their delimiter line.
      for (const h of heredocs.splice(0)) {
        const body: string[] = [];
        let j = i + 1;
        let closed = false;
        while (j <= s.length) {
          const nl = s.indexOf("\n", j);
          const end = nl < 0 ? s.length : nl;
          const l = s.slice(j, end);
          j = end + 1;
          if ((h.tabs ? l.replace(/^\t+/, "") : l).trim() === h.delim) {
            closed = true;
            break;
          }
          body.push(l);
          if (nl < 0) break;
        }
        h.cmd.heredoc = (h.cmd.heredoc === undefined ? "" : `${h.cmd.heredoc}\n`) + body.join("\n");
        i = closed ? j - 1 : s.length;
      }
      continue;
    }
    if (c === " " || c === "\t" || c === "\r") {
      endWord();
      continue;
    }
    if (c === "#" && !inWord) {
      const nl = s.indexOf("\n", i);
      i = (nl < 0 ? s.length : nl) - 1;
      continue;
    }
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) return undefined;
      text += s.slice(i + 1, end);
      inWord = true;
      i = end;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      for (; j < s.length && s[j] !== '"'; j++) {
        if (s[j] === "\\" && j + 1 < s.length && '"\\$`'.includes(s[j + 1]!)) {
          text += s[++j];
          continue;
        }
        if (s[j] === "$" || s[j] === "`") plain = false;
        text += s[j];
      }
      if (j >= s.length) return undefined;
      inWord = true;
      i = j;
      continue;
    }
    if (c === "\\") {
      if (i + 1 < s.length) text += s[++i];
      inWord = true;
      continue;
    }
    if (c === "$" || c === "`") {
      plain = false;
      inWord = true;
      // $(…) and `…` are kept inside the word, whatever separators they hold.
      const open = c === "`" ? "`" : s[i + 1] === "(" ? "(" : s[i + 1] === "{" ? "{" : undefined;
      if (open === undefined) {
        text += c;
        continue;
      }
      const close = open === "(" ? ")" : open === "{" ? "}" : "`";
      let depth = 0;
      let j = c === "`" ? i + 1 : i + 2;
      for (; j < s.length; j++) {
        if (s[j] === close && depth === 0) break;
        if (open !== "`" && s[j] === open) depth++;
        else if (open !== "`" && s[j] === close) depth--;
      }
      if (j >= s.length) return undefined;
      text += s.slice(i, j + 1);
      i = j;
      continue;
    }
    if (c === "*" || c === "?" || c === "[" || c === "{") {
      plain = false;
      text += c;
      inWord = true;
      continue;
    }
    if (c === ";" || c === "(" || c === ")") {
      endCommand();
      continue;
    }
    if (c === "|") {
      endCommand();
      if (s[i + 1] === "|" || s[i + 1] === "&") i++;
      continue;
    }
    if (c === "&") {
      if (s[i + 1] === ">") {
        endWord();
        const op = s[i + 2] === ">" ? "&>>" : "&>";
        i += op.length - 1;
        pendingOp = op;
        continue;
      }
      endCommand();
      if (s[i + 1] === "&") i++;
      continue;
    }
    if (c === ">" || c === "<") {
      // An fd number right before the operator (2>, 1>>) belongs to it.
      if (inWord && plain && /^\d+$/.test(text)) {
        text = "";
        inWord = false;
      } else {
        endWord();
      }
      const op = /^(?:<<<|<<-|<<|<>|<&|<|>>|>\||>&|>)/.exec(s.slice(i))![0];
      i += op.length - 1;
      pendingOp = op;
      continue;
    }
    text += c;
    inWord = true;
  }
  endCommand();
  return out;
}

const isPlainPath = (w: Word): boolean => w.plain && isPathText(w.text);

function isPathText(t: string): boolean {
  if (t === "" || t.startsWith("-") || t.startsWith("/dev/") || /^[\d.,]+$/.test(t)) return false;
  return t.includes("/") ? /[^./]/.test(t) : /\.[^.]/.test(t);
}

const isOption = (w: Word): boolean => w.text.startsWith("-") && w.text !== "-";

/** The words after the command's name (leading NAME=value assignments skipped), and the name. */
function commandParts(c: SimpleCommand): { name: string; args: Word[] } | undefined {
  let k = 0;
  while (k < c.words.length && /^[A-Za-z_]\w*=/.test(c.words[k]!.text)) k++;
  const first = c.words[k];
  if (!first) return undefined;
  return { name: first.text.split("/").pop()!, args: c.words.slice(k + 1) };
}

/** The arguments that are not options, and not the values of the given options. */
function operands(args: readonly Word[], valued: ReadonlySet<string> = new Set()): Word[] {
  const out: Word[] = [];
  let afterDashDash = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (afterDashDash) {
      out.push(a);
      continue;
    }
    if (a.text === "--") {
      afterDashDash = true;
      continue;
    }
    if (isOption(a)) {
      if (valued.has(a.text)) i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

const SIMPLE_READS = new Set(["cat", "head", "tail", "less", "nl", "wc"]);
const SED_SCRIPT_OPTS = new Set(["-e", "--expression", "-f", "--file"]);
const WRITE_OPS = new Set([">", ">>", ">|", "&>", "&>>"]);

/** The files named by a patch text: unified diff headers and apply_patch's file lines. */
export function patchFiles(patch: string): string[] {
  const out: string[] = [];
  const lines = patch.split("\n");
  const strip = (p: string) => p.replace(/\t.*$/, "").trim().replace(/^[ab]\//, "");
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const ap = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/.exec(l);
    if (ap) {
      out.push(ap[1]!.trim());
      continue;
    }
    if (l.startsWith("+++ ")) {
      const target = l.slice(4).replace(/\t.*$/, "").trim();
      if (target !== "/dev/null") out.push(strip(target));
      else {
        const prev = lines[i - 1];
        if (prev?.startsWith("--- ")) out.push(strip(prev.slice(4)));
      }
    }
  }
  return out.filter((p) => p !== "" && p !== "/dev/null");
}

const PY_OPEN = /\bopen\(\s*\\?(["'])([^"'\\\n]+)\\?\1\s*,\s*(?:mode\s*=\s*)?\\?(["'])([a-zA-Z+]*)\\?\3/g;
const PY_PATH_WRITE = /\bPath\(\s*\\?(["'])([^"'\\\n]+)\\?\1\s*\)\.write_(?:text|bytes)\(/g;

/** Literal paths a Python script in a command's text opens for writing. */
function pythonWrites(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(PY_OPEN)) if (/[wax]/.test(m[4]!)) out.push(m[2]!);
  for (const m of text.matchAll(PY_PATH_WRITE)) out.push(m[2]!);
  return out.filter(isPathText);
}

const samePatchFile = (p: string) => p.replace(/^\.\//, "");

/** What one shell command line reads and writes, given the files earlier commands wrote. */
function shellFilesTouched(command: string, written: Map<string, string>, into: FilesTouched): void {
  const commands = simpleCommands(command);
  if (commands === undefined) return;
  into.modified.push(...pythonWrites(command));
  for (const c of commands) {
    // Redirections write their target; a heredoc sent to a file writes that content there.
    for (const r of c.redirects) {
      if (!WRITE_OPS.has(r.op) || !isPlainPath(r.target)) continue;
      into.modified.push(r.target.text);
      if (c.heredoc !== undefined) written.set(samePatchFile(r.target.text), c.heredoc);
    }
    const parts = commandParts(c);
    if (!parts) continue;
    const { name, args } = parts;
    const paths = (ws: readonly Word[]) => ws.filter(isPlainPath).map((w) => w.text);
    if (SIMPLE_READS.has(name)) {
      into.read.push(...paths(operands(args)));
    } else if (name === "sed") {
      const inPlace = args.some((a) => a.text === "--in-place" || a.text.startsWith("--in-place=") || /^-[a-zA-Z]*i/.test(a.text));
      const quiet = args.some((a) => a.text === "--quiet" || a.text === "--silent" || /^-[a-zA-Z]*n/.test(a.text));
      const scripted = args.some((a) => SED_SCRIPT_OPTS.has(a.text));
      const files = operands(args, SED_SCRIPT_OPTS).slice(scripted ? 0 : 1);
      if (inPlace) into.modified.push(...paths(files));
      else if (quiet) into.read.push(...paths(files));
    } else if (name === "tee" || name === "touch" || name === "rm") {
      into.modified.push(...paths(operands(args)));
    } else if (name === "cp" || name === "mv") {
      const ps = paths(operands(args));
      if (ps.length >= 2) into.modified.push(...(name === "mv" ? ps : ps.slice(-1)));
    } else if (name === "git" && (args[0]?.text === "checkout" || args[0]?.text === "restore")) {
      const rest = args.slice(1);
      const dash = rest.findIndex((a) => a.text === "--");
      if (dash >= 0) into.modified.push(...paths(rest.slice(dash + 1)));
      else if (args[0]!.text === "restore") into.modified.push(...paths(operands(rest, new Set(["-s", "--source"]))));
      else if (!rest.some((a) => a.text === "-b" || a.text === "-B" || a.text === "--orphan")) {
        into.modified.push(...paths(operands(rest)).filter((p) => /\.\w+$/.test(p.split("/").pop()!)));
      }
    } else if (name === "patch" || (name === "git" && args[0]?.text === "apply")) {
      const opts = name === "git" ? args.slice(1) : args;
      if (opts.some((a) => a.text === "--dry-run" || a.text === "--check")) continue;
      let diff = c.heredoc;
      if (diff === undefined) {
        const i = opts.findIndex((a) => a.text === "-i" || a.text === "--input");
        const input = c.redirects.find((r) => r.op === "<")?.target.text ?? (i >= 0 ? opts[i + 1]?.text : undefined);
        const file = input ?? (name === "git" ? operands(opts, new Set(["-p", "--directory", "--exclude", "--include"]))[0]?.text : undefined);
        if (file !== undefined) diff = written.get(samePatchFile(file));
      }
      if (diff !== undefined) into.modified.push(...patchFiles(diff));
    } else if (name === "apply_patch" || name === "applypatch") {
      into.modified.push(...patchFiles(c.heredoc ?? command));
    }
  }
}

/** The files a history read and modified (see the definition at the top of this file). */
export function filesTouched(history: readonly Message[]): FilesTouched {
  const failed = new Set<string>();
  for (const m of history) for (const b of blocks(m)) if (b.type === "tool_result" && b.is_error === true) failed.add(b.tool_use_id);
  const all: FilesTouched = { modified: [], read: [] };
  /** Content last written to a path by a heredoc or a Write call (for patches applied later). */
  const written = new Map<string, string>();
  let opened: string | undefined;
  for (const m of history) {
    if (m.role !== "assistant") continue;
    for (const b of blocks(m)) {
      if (b.type !== "tool_use") continue;
      const shell = commandText(b);
      if (shell !== undefined) {
        shellFilesTouched(shell, written, all);
        continue;
      }
      if (failed.has(b.id)) continue;
      const name = b.name.toLowerCase();
      const input = inputOf(b);
      const path = pathOf(input);
      if (EDITOR_TOOLS.has(name)) {
        if (path !== undefined) (input.command === "view" ? all.read : all.modified).push(path);
      } else if (name === "apply_patch") {
        const patch = [input.input, input.patch].find((x): x is string => typeof x === "string");
        if (patch !== undefined) all.modified.push(...patchFiles(patch));
        if (path !== undefined) all.modified.push(path);
      } else if (READ_TOOLS.has(name)) {
        if (path !== undefined) all.read.push(path);
        if (name === "open" && path !== undefined) opened = path;
      } else if (WRITE_TOOLS.has(name)) {
        // SWE-agent's edit/insert name no file: they change the one opened last.
        const target = path ?? ((name === "edit" || name === "insert") ? opened : undefined);
        if (target !== undefined) all.modified.push(target);
        if (name === "create" && path !== undefined) opened = path;
        if (path !== undefined && typeof input.content === "string") written.set(samePatchFile(path), input.content);
      }
    }
  }
  return { modified: [...new Set(all.modified)], read: [...new Set(all.read)] };
}

// ---------------------------------------------------------------------------------------------
// Shell commands and their outcomes.

const resultText = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((c: { type?: string; text?: string }) => (c.type === "text" && typeof c.text === "string" ? c.text : "")).join("\n")
      : "";

/** The first non-blank line of a command, trimmed, at most COMMAND_LINE_CHARS characters. */
export function commandLineOf(command: string): string {
  for (const l of command.split("\n")) if (l.trim() !== "") return l.trim().slice(0, COMMAND_LINE_CHARS);
  return "";
}

/** The exit code an output states, if any. */
function statedExit(output: string): string | undefined {
  return /<returncode>\s*(-?\d+)\s*<\/returncode>/.exec(output)?.[1] ?? /^\s*Exit code (-?\d+)\s*$/im.exec(output)?.[1];
}

const NAMES_ERROR = /error|exception|fail|fatal|not found|no such file|denied|cannot|can't|unable|invalid|timed out/i;

/** The line of a failed command's output that says what went wrong (see the definition above). */
export function failureLine(output: string): string | undefined {
  const lines = output.replace(/<\/?(?:returncode|output)>/g, "\n").split("\n");
  let line: string | undefined;
  let tb = -1;
  lines.forEach((l, i) => {
    if (l.includes("Traceback (most recent call last):")) tb = i;
  });
  if (tb >= 0) line = lines.slice(tb + 1).find((l) => l.trim() !== "" && !/^\s/.test(l));
  line ??= lines.find((l) => NAMES_ERROR.test(l) && !/^\s*(?:===|___)/.test(l));
  const t = line?.trim();
  return t ? t.slice(0, ERROR_LINE_CHARS) : undefined;
}

/** Every answered shell call of a history, oldest first, with how it ended. */
export function shellCommands(history: readonly Message[]): ShellCommand[] {
  const results = new Map<string, { text: string; isError: boolean }>();
  for (const m of history) {
    for (const b of blocks(m)) if (b.type === "tool_result") results.set(b.tool_use_id, { text: resultText(b.content), isError: b.is_error === true });
  }
  const out: ShellCommand[] = [];
  for (const m of history) {
    if (m.role !== "assistant") continue;
    for (const b of blocks(m)) {
      if (b.type !== "tool_use") continue;
      const text = commandText(b);
      const r = results.get(b.id);
      if (text === undefined || r === undefined) continue;
      const command = commandLineOf(text);
      if (command === "") continue;
      const stated = statedExit(r.text);
      const exit = stated ?? (r.isError ? "error" : "ok");
      const item: ShellCommand = { command, exit };
      if (r.isError || (stated !== undefined && stated !== "0")) {
        const e = failureLine(r.text);
        if (e !== undefined) item.error = e;
      }
      out.push(item);
    }
  }
  return out;
}
