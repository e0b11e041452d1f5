// A shell line as bash will run it, for the permission rules: the simple commands (their words
// after quote removal), their redirections, and the commands hidden in substitutions. Not a full
// shell: what it cannot read with confidence (an unclosed quote, `case`, a word whose value is
// only known at run time) is flagged, and the policy asks rather than allows.

/** A word after quote and backslash removal. `exact` is false when bash would still expand it. */
export interface Word {
  text: string;
  exact: boolean;
  /** Holds an unquoted glob character (* ? [): bash may replace it with file names. */
  glob: boolean;
  /** Some of it was quoted or escaped (a here-document delimiter so written is not expanded). */
  quoted?: boolean;
}

export interface Redirect {
  /** ">", ">>", ">|", "<", "<>", "&>", "&>>", ">&", "<&", "<<", "<<<". */
  op: string;
  target: Word;
}

export interface SimpleCommand {
  /** Assignments (`A=1`) before the command word are left out. */
  words: Word[];
  redirects: Redirect[];
}

export interface ParsedLine {
  commands: SimpleCommand[];
  /** The text of every `$(…)`, backtick and `<(…)` / `>(…)`: commands bash runs too. */
  hidden: string[];
  /** Why the line cannot be read with confidence; undefined when it can. */
  unsure?: string;
}

const KEYWORDS = new Set(["if", "then", "elif", "else", "fi", "do", "done", "while", "until", "!", "{", "}", "time", "coproc", "function", "[[", "]]"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

const ANSI: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?" };

/** Decodes the inside of $'…' (ANSI-C quoting). */
function ansiC(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\" || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const n = body[++i]!;
    let m: RegExpExecArray | null;
    if (n in ANSI) out += ANSI[n];
    else if ((m = /^x([0-9a-fA-F]{1,2})/.exec(body.slice(i)))) {
      out += String.fromCharCode(parseInt(m[1]!, 16));
      i += m[0].length - 1;
    } else if ((m = /^[uU]([0-9a-fA-F]{1,8})/.exec(body.slice(i)))) {
      const cp = parseInt(m[1]!, 16);
      out += cp <= 0x10ffff ? String.fromCodePoint(cp) : "";
      i += m[0].length - 1;
    } else if ((m = /^[0-7]{1,3}/.exec(body.slice(i)))) {
      out += String.fromCharCode(parseInt(m[0], 8) & 0xff);
      i += m[0].length - 1;
    } else if (n === "c" && i + 1 < body.length) {
      out += String.fromCharCode(body.charCodeAt(++i) & 0x1f);
    } else out += `\\${n}`;
  }
  return out;
}

/** Index just past the `)` that closes a `(` opened before `from`, quotes and nesting respected; -1 if none. */
function closeParen(s: string, from: number): number {
  let depth = 1;
  for (let i = from; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\\") i++;
    else if (c === "'") {
      const j = s.indexOf("'", i + 1);
      if (j < 0) return -1;
      i = j;
    } else if (c === '"') {
      for (i++; i < s.length && s[i] !== '"'; i++) if (s[i] === "\\") i++;
      if (i >= s.length) return -1;
    } else if (c === "`") {
      for (i++; i < s.length && s[i] !== "`"; i++) if (s[i] === "\\") i++;
      if (i >= s.length) return -1;
    } else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
  }
  return -1;
}

/** Index just past the closing backtick of a backtick substitution starting at `from`; -1 if none. */
function closeBacktick(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === "`") return i + 1;
  }
  return -1;
}

const OPERATORS = [";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|", "\n", "(", ")"];
const REDIRECTS = ["&>>", "<<<", "<<-", "&>", ">>", ">|", "<>", "<<", ">&", "<&", ">", "<"];

export function parseShell(line: string): ParsedLine {
  const commands: SimpleCommand[] = [];
  const hidden: string[] = [];
  let unsure: string | undefined;
  const flag = (why: string) => {
    unsure ??= why;
  };
  let cur: SimpleCommand = { words: [], redirects: [] };
  /** The word being read, or undefined between words. */
  let word: Word | undefined;
  let pendingRedirect: string | undefined;
  const heredocs: { delim: string; strip: boolean; expand: boolean }[] = [];
  let forClause = false;

  const endWord = () => {
    if (!word) return;
    const w = word;
    word = undefined;
    if (pendingRedirect) {
      cur.redirects.push({ op: pendingRedirect, target: w });
      if (pendingRedirect === "<<" || pendingRedirect === "<<-") heredocs.push({ delim: w.text, strip: pendingRedirect === "<<-", expand: !w.quoted });
      pendingRedirect = undefined;
      return;
    }
    if (cur.words.length === 0) {
      if (w.exact && ASSIGNMENT.test(w.text)) return;
      if (w.exact && KEYWORDS.has(w.text)) return;
      if (w.exact && (w.text === "for" || w.text === "select")) {
        forClause = true;
        return;
      }
      if (w.exact && (w.text === "case" || w.text === "esac")) flag("it uses case … esac");
    }
    if (forClause) return; // `for x in a b c` names no command
    cur.words.push(w);
  };
  const endCommand = () => {
    endWord();
    if (pendingRedirect) flag(`a ${pendingRedirect} redirection has no target`);
    pendingRedirect = undefined;
    forClause = false;
    if (cur.words.length > 0 || cur.redirects.length > 0) commands.push(cur);
    cur = { words: [], redirects: [] };
  };
  const ensureWord = (): Word => (word ??= { text: "", exact: true, glob: false });

  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line[i]!;
    // Here-document bodies start after the newline that ends their command.
    if (c === "\n") endWord();
    if (c === "\n" && heredocs.length > 0) {
      endCommand();
      i++;
      for (const h of heredocs.splice(0)) {
        let closed = false;
        while (i < n) {
          const nl = line.indexOf("\n", i);
          const end = nl < 0 ? n : nl;
          const text = line.slice(i, end);
          i = end + 1;
          if ((h.strip ? text.replace(/^\t+/, "") : text) === h.delim) {
            closed = true;
            break;
          }
          // An unquoted delimiter means the body is expanded: substitutions in it run.
          if (h.expand && /\$\(|`/.test(text)) hidden.push(...substitutionsIn(text));
        }
        if (!closed) flag("a here-document is not closed");
      }
      continue;
    }
    if (c === "\\") {
      if (line[i + 1] === "\n") {
        i += 2;
        continue;
      }
      const w = ensureWord();
      w.quoted = true;
      w.text += i + 1 < n ? line[i + 1] : "\\";
      i += 2;
      continue;
    }
    if (c === "'") {
      const j = line.indexOf("'", i + 1);
      if (j < 0) {
        flag("a quote is not closed");
        ensureWord().text += line.slice(i + 1);
        break;
      }
      const w = ensureWord();
      w.quoted = true;
      w.text += line.slice(i + 1, j);
      i = j + 1;
      continue;
    }
    if (c === "$" && line[i + 1] === "'") {
      let j = i + 2;
      for (; j < n && line[j] !== "'"; j++) if (line[j] === "\\") j++;
      if (j >= n) {
        flag("a quote is not closed");
        break;
      }
      const w = ensureWord();
      w.quoted = true;
      w.text += ansiC(line.slice(i + 2, j));
      i = j + 1;
      continue;
    }
    if (c === '"' || (c === "$" && line[i + 1] === '"')) {
      const w = ensureWord();
      w.quoted = true;
      let j = c === "$" ? i + 2 : i + 1;
      for (; j < n && line[j] !== '"'; j++) {
        const d = line[j]!;
        if (d === "\\" && j + 1 < n && '"\\$`\n'.includes(line[j + 1]!)) {
          if (line[j + 1] !== "\n") w.text += line[j + 1];
          j++;
        } else if (d === "$" && line[j + 1] === "(") {
          const k = closeParen(line, j + 2);
          if (k < 0) {
            flag("a $( is not closed");
            return { commands, hidden, unsure };
          }
          if (line[j + 2] !== "(") hidden.push(line.slice(j + 2, k - 1));
          w.exact = false;
          j = k - 1;
        } else if (d === "`") {
          const k = closeBacktick(line, j + 1);
          if (k < 0) {
            flag("a backtick is not closed");
            return { commands, hidden, unsure };
          }
          hidden.push(line.slice(j + 1, k - 1));
          w.exact = false;
          j = k - 1;
        } else if (d === "$" && /[A-Za-z0-9_{@*#?$!-]/.test(line[j + 1] ?? "")) {
          w.exact = false;
          w.text += d;
        } else w.text += d;
      }
      if (j >= n) {
        flag("a quote is not closed");
        break;
      }
      i = j + 1;
      continue;
    }
    if (c === "$" && line[i + 1] === "(") {
      const k = closeParen(line, i + 2);
      if (k < 0) {
        flag("a $( is not closed");
        break;
      }
      if (line[i + 2] === "(") {
        // $(( … )): arithmetic, but a substitution inside it still runs.
        hidden.push(...substitutionsIn(line.slice(i + 3, k - 1)));
      } else hidden.push(line.slice(i + 2, k - 1));
      const w = ensureWord();
      w.exact = false;
      w.text += "$(…)";
      i = k;
      continue;
    }
    if (c === "`") {
      const k = closeBacktick(line, i + 1);
      if (k < 0) {
        flag("a backtick is not closed");
        break;
      }
      hidden.push(line.slice(i + 1, k - 1));
      const w = ensureWord();
      w.exact = false;
      w.text += "`…`";
      i = k;
      continue;
    }
    if ((c === "<" || c === ">") && line[i + 1] === "(" && !word) {
      const k = closeParen(line, i + 2);
      if (k < 0) {
        flag("a process substitution is not closed");
        break;
      }
      hidden.push(line.slice(i + 2, k - 1));
      cur.words.push({ text: `${c}(…)`, exact: false, glob: false });
      i = k;
      continue;
    }
    if (c === "$" && /[A-Za-z0-9_{@*#?$!-]/.test(line[i + 1] ?? "")) {
      const w = ensureWord();
      w.exact = false;
      if (line[i + 1] === "{") {
        const k = line.indexOf("}", i + 2);
        const body = k < 0 ? line.slice(i) : line.slice(i, k + 1);
        if (/\$\(|`/.test(body)) hidden.push(...substitutionsIn(body));
        w.text += body;
        i = k < 0 ? n : k + 1;
      } else {
        const m = /^\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(line.slice(i))!;
        w.text += m[0];
        i += m[0].length;
      }
      continue;
    }
    if (c === "#" && !word) {
      const nl = line.indexOf("\n", i);
      i = nl < 0 ? n : nl;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r") {
      endWord();
      i++;
      continue;
    }
    // A redirection: an optional fd number (a word of digits so far) then the operator.
    const redirect = REDIRECTS.find((op) => line.startsWith(op, i));
    if (redirect) {
      // A word of digits (or {name}) right before the operator is its descriptor, not a word.
      if (word && word.exact && !word.quoted && /^(\d+|\{[A-Za-z_]\w*\})$/.test(word.text)) word = undefined;
      else endWord();
      if (pendingRedirect) flag("two redirection operators in a row");
      let op = redirect;
      i += op.length;
      // ">&2", "<&0", ">&-": a copy of a descriptor, no file.
      if ((op === ">&" || op === "<&") && /^(\d+|-)(?=[\s;&|)<>]|$)/.test(line.slice(i))) {
        i += /^(\d+|-)/.exec(line.slice(i))![0].length;
        continue;
      }
      if (op === ">&") op = "&>";
      while (line[i] === " " || line[i] === "\t") i++;
      pendingRedirect = op;
      continue;
    }
    const operator = OPERATORS.find((op) => line.startsWith(op, i));
    if (operator) {
      endCommand();
      if (operator.startsWith(";;") || operator === ";&") flag("it uses case … esac");
      i += operator.length;
      continue;
    }
    const w = ensureWord();
    if (c === "*" || c === "?" || c === "[") w.glob = true;
    if ((c === "~" && w.text === "") || (c === "{" && /^[^}]*,[^}]*\}/.test(line.slice(i + 1))) || (c === "{" && /^[^}]*\.\.[^}]*\}/.test(line.slice(i + 1)))) w.exact = false;
    w.text += c;
    i++;
  }
  endCommand();
  if (heredocs.length > 0) flag("a here-document has no body");
  return unsure === undefined ? { commands, hidden } : { commands, hidden, unsure };
}

/** The substitutions inside a text bash will expand (a here-document body, an arithmetic). */
function substitutionsIn(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === "$" && text[i + 1] === "(") {
      const k = closeParen(text, i + 2);
      if (k < 0) return [...out, text.slice(i + 2)];
      out.push(text.slice(i + 2, k - 1));
      i = k - 1;
    } else if (text[i] === "`") {
      const k = closeBacktick(text, i + 1);
      if (k < 0) return [...out, text.slice(i + 1)];
      out.push(text.slice(i + 1, k - 1));
      i = k - 1;
    }
  }
  return out;
}
