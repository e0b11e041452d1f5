// Every command a shell line runs, for the permission rules: the simple commands of ./parse.ts,
// then, for each command that runs another one, that one too. `sudo rm x` is both `sudo rm x` and
// `rm x`; `bash -c "…"`, `eval …`, `find -exec …` and the commands inside `$(…)` are read again;
// `find -delete` counts as `rm`. A deny rule is checked against all of them.
import { type Redirect, type Word, parseShell } from "./parse.ts";

export interface Command {
  words: Word[];
  /** The wrappers that run it ("sudo", "bash -c", …); empty for a command of the line itself. */
  via: string[];
}

export interface Analysis {
  commands: Command[];
  redirects: Redirect[];
  /** The line runs commands through substitutions (`$(…)`, backticks, `<(…)`). */
  hidden: boolean;
  /** Why the line cannot be read with confidence; undefined when it can. */
  unsure?: string;
}

const MAX_DEPTH = 8;

/** The command's name as a deny rule sees it: `/usr/bin/rm` and `./rm` are `rm`. */
export function commandName(w: Word): string {
  return w.text.slice(w.text.lastIndexOf("/") + 1);
}

type Options = { flags?: string; withValue?: string; long?: string[]; longWithValue?: string[] };

/**
 * Skips a wrapper's options: the index of its first operand. `withValue` letters take the next
 * word (or the rest of the same one), `flags` letters take none; any other option is unknown.
 */
function skipOptions(words: Word[], from: number, o: Options): { at: number; unknown?: string } {
  let i = from;
  while (i < words.length) {
    const t = words[i]!.text;
    if (t === "--") return { at: i + 1 };
    if (!t.startsWith("-") || t === "-") return { at: i };
    if (t.startsWith("--")) {
      const name = t.slice(2).split("=")[0]!;
      if (o.longWithValue?.includes(name)) i += t.includes("=") ? 1 : 2;
      else if (o.long?.includes(name)) i++;
      else return { at: i, unknown: t };
      continue;
    }
    let j = 1;
    for (; j < t.length; j++) {
      const ch = t[j]!;
      if (o.withValue?.includes(ch)) {
        if (j === t.length - 1) i++;
        break;
      }
      if (!o.flags?.includes(ch) && !/\d/.test(ch)) return { at: i, unknown: t };
    }
    i++;
  }
  return { at: i };
}

const SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "rbash", "fish"]);

/**
 * What a wrapper runs: the words of the command it starts (`next`), or a line to parse again
 * (`line`). Undefined when the command runs no other command we know of.
 */
function unwrap(words: Word[]): { next?: Word[]; line?: Word[]; also?: Word[][]; unsure?: string } | undefined {
  const name = commandName(words[0]!);
  const rest = (o: Options, from = 1) => {
    const r = skipOptions(words, from, o);
    return r.unknown ? { unsure: `${name} has an option lethe does not know (${r.unknown})`, next: words.slice(r.at) } : { next: words.slice(r.at) };
  };
  switch (name) {
    case "command":
      return rest({ flags: "pvV" });
    case "builtin":
    case "nohup":
    case "unbuffer":
    case "exec":
      return name === "exec" ? rest({ flags: "cl", withValue: "a" }) : rest({});
    case "time":
      return rest({ flags: "pav", withValue: "fo", long: ["portability", "append", "verbose"], longWithValue: ["format", "output"] });
    case "nice":
      return rest({ withValue: "n", longWithValue: ["adjustment"] });
    case "ionice":
      return rest({ flags: "tu", withValue: "cnp", long: ["ignore"], longWithValue: ["class", "classdata", "pid", "pgid", "uid"] });
    case "setsid":
      return rest({ flags: "cfw", long: ["ctty", "fork", "wait"] });
    case "stdbuf":
      return rest({ withValue: "ioe", longWithValue: ["input", "output", "error"] });
    case "chrt":
      return rest({ flags: "bdfiormRpa", withValue: "TPD" });
    case "sudo":
    case "doas": {
      const r = skipOptions(words, 1, { flags: "AbEeHiKklnPSsVBN", withValue: "CDghpRrTtUu", long: ["preserve-env", "login", "non-interactive", "shell", "stdin", "background", "edit"], longWithValue: ["user", "group", "host", "prompt", "chdir", "close-from", "other-user", "role", "type", "command-timeout", "chroot"] });
      const next = words.slice(r.at);
      // `sudo -s` / `sudo -i` with a command runs it through a shell.
      return r.unknown ? { unsure: `${name} has an option lethe does not know (${r.unknown})`, next } : { next };
    }
    case "env": {
      let i = 1;
      const lines: Word[][] = [];
      for (; i < words.length; i++) {
        const t = words[i]!.text;
        if (t === "--") {
          i++;
          break;
        }
        if (t === "-S" || t === "--split-string") {
          if (words[i + 1]) lines.push([words[i + 1]!, ...words.slice(i + 2)]);
          return { line: lines[0] ?? [] };
        }
        if (t.startsWith("-S")) return { line: [{ ...words[i]!, text: t.slice(2) }, ...words.slice(i + 1)] };
        if (/^-[iv0]+$/.test(t) || t === "--ignore-environment" || t === "--null") continue;
        if (t === "-u" || t === "-C" || t === "--unset" || t === "--chdir") {
          i++;
          continue;
        }
        if (/^--(unset|chdir)=/.test(t) || /^-[uC]./.test(t)) continue;
        if (t.startsWith("-")) return { unsure: `env has an option lethe does not know (${t})`, next: words.slice(i + 1) };
        if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(t)) break;
      }
      return { next: words.slice(i) };
    }
    case "timeout": {
      const r = skipOptions(words, 1, { flags: "v", withValue: "sk", long: ["foreground", "preserve-status", "verbose"], longWithValue: ["signal", "kill-after"] });
      return { next: words.slice(r.at + 1), ...(r.unknown ? { unsure: `timeout has an option lethe does not know (${r.unknown})` } : {}) };
    }
    case "taskset": {
      const r = skipOptions(words, 1, { flags: "acp", long: ["all-tasks", "cpu-list", "pid"] });
      return { next: words.slice(r.at + 1) };
    }
    case "chroot":
      return { next: words.slice(skipOptions(words, 1, { longWithValue: ["userspec", "groups"], long: ["skip-chdir"] }).at + 1) };
    case "flock": {
      const r = skipOptions(words, 1, { flags: "sxunoFe", withValue: "wEc", long: ["shared", "exclusive", "unlock", "nonblock", "close", "no-fork"], longWithValue: ["timeout", "conflict-exit-code", "command"] });
      const c = words.findIndex((w, k) => k > 0 && k < r.at && (w.text === "-c" || w.text === "--command"));
      if (c > 0 && words[c + 1]) return { line: [words[c + 1]!] };
      return { next: words.slice(r.at + 1) };
    }
    case "xargs": {
      const r = skipOptions(words, 1, { flags: "0oprtx", withValue: "adEeIiLlnPs", long: ["null", "open-tty", "interactive", "no-run-if-empty", "verbose", "exit", "show-limits"], longWithValue: ["arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"] });
      const next = words.slice(r.at);
      // With no command, xargs runs echo. Its input becomes more arguments: anything at all.
      return { next: next.length > 0 ? next : [{ text: "echo", exact: true, glob: false }], ...(r.unknown ? { unsure: `xargs has an option lethe does not know (${r.unknown})` } : {}) };
    }
    case "eval":
      return { line: words.slice(1) };
    case "watch": {
      const r = skipOptions(words, 1, { flags: "bcdeghprtwx", withValue: "nq", long: ["beep", "color", "no-color", "differences", "errexit", "chgexit", "no-title", "precise", "no-wrap", "exec", "no-linewrap"], longWithValue: ["interval", "equexit"] });
      return { line: words.slice(r.at) };
    }
    case "su":
    case "runuser":
    case "script": {
      const c = words.findIndex((w, k) => k > 0 && (w.text === "-c" || w.text === "--command"));
      const inline = words.find((w) => w.text.startsWith("--command="));
      if (inline) return { line: [{ ...inline, text: inline.text.slice("--command=".length) }] };
      return c > 0 && words[c + 1] ? { line: [words[c + 1]!] } : undefined;
    }
    case "find":
      return findCommands(words);
    default:
      if (SHELLS.has(name)) return shellCommand(words, name);
      return undefined;
  }
}

/** `bash -c "line"`, `sh -lc …`, `busybox rm …`: what such a shell runs. */
function shellCommand(words: Word[], name: string): ReturnType<typeof unwrap> {
  if (name === "busybox") return words.length > 1 && !words[1]!.text.startsWith("-") ? { next: words.slice(1) } : undefined;
  for (let i = 1; i < words.length; i++) {
    const t = words[i]!.text;
    if (/^[-+][a-zA-Z]*[oO]$/.test(t)) {
      i++;
      continue;
    }
    if (/^[-+][a-zA-Z]+$/.test(t) && t.includes("c")) return words[i + 1] ? { line: [words[i + 1]!] } : { unsure: `${name} -c has no command` };
    if (/^-[a-zA-Z]*s/.test(t) || t === "-") break;
    if (!t.startsWith("-") && !t.startsWith("+")) return undefined; // a script file: its commands are its own
  }
  // No -c and no script: the shell runs whatever comes in on its input.
  return { unsure: `${name} runs commands read from its input` };
}

/** `find … -exec cmd {} ;` (and -execdir, -ok, -okdir); `-delete` is an rm of what it finds. */
function findCommands(words: Word[]): ReturnType<typeof unwrap> {
  const also: Word[][] = [];
  for (let i = 1; i < words.length; i++) {
    const t = words[i]!.text;
    if (t === "-exec" || t === "-execdir" || t === "-ok" || t === "-okdir") {
      let j = i + 1;
      while (j < words.length && words[j]!.text !== ";" && words[j]!.text !== "+") j++;
      also.push(words.slice(i + 1, j));
      i = j;
    } else if (t === "-delete") {
      const firstTest = words.findIndex((w, k) => k > 0 && /^[-(!]/.test(w.text) && !/^-[HLP]$/.test(w.text));
      const roots = words.slice(1, firstTest < 0 ? words.length : firstTest).filter((w) => !/^-[HLP]$/.test(w.text));
      also.push([{ text: "rm", exact: true, glob: false }, { text: "-r", exact: true, glob: false }, ...roots]);
    }
  }
  return also.length > 0 ? { also } : undefined;
}

/** Every command `line` runs, wrappers unwrapped, substitutions and nested shells read. */
export function analyzeShell(line: string, depth = 0): Analysis {
  const parsed = parseShell(line);
  const out: Analysis = { commands: [], redirects: [], hidden: parsed.hidden.length > 0 };
  const note = (why: string | undefined) => {
    if (why !== undefined) out.unsure ??= why;
  };
  note(parsed.unsure);
  if (depth > MAX_DEPTH) {
    note("commands are nested too deeply to read");
    return out;
  }
  const nested = (text: string, via: string[]) => {
    const inner = analyzeShell(text, depth + 1);
    note(inner.unsure);
    out.hidden ||= inner.hidden;
    out.redirects.push(...inner.redirects);
    for (const c of inner.commands) out.commands.push({ words: c.words, via: [...via, ...c.via] });
  };
  for (const h of parsed.hidden) nested(h, ["$(…)"]);
  for (const cmd of parsed.commands) {
    out.redirects.push(...cmd.redirects);
    // Each command, then what it runs: a queue, since find may start several.
    const queue: Command[] = [{ words: cmd.words, via: [] }];
    for (let hops = 0; queue.length > 0; hops++) {
      const { words, via } = queue.shift()!;
      if (words.length === 0) continue;
      out.commands.push({ words, via });
      if (!words[0]!.exact) {
        note(`the command name ${words[0]!.text} is only known when it runs`);
        continue;
      }
      if (hops > 4 * MAX_DEPTH) {
        note("commands are wrapped too deeply to read");
        break;
      }
      const u = unwrap(words);
      if (!u) continue;
      note(u.unsure);
      const chain = [...via, commandName(words[0]!)];
      for (const a of u.also ?? []) queue.push({ words: a, via: chain });
      if (u.line) {
        // The words are joined and read by a shell again (eval, bash -c): they must be known.
        if (u.line.some((w) => !w.exact)) note(`${chain.at(-1)} runs a command that is only known when it runs`);
        nested(u.line.map((w) => w.text).join(" "), chain);
      } else if (u.next) queue.push({ words: u.next, via: chain });
    }
  }
  return out;
}
