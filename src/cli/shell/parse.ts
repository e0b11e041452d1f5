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
  return new Reader(line).read();
}

interface Heredoc {
  delim: string;
  strip: boolean;
  expand: boolean;
}

/** One pass over a line: each construct of the shell has a method that consumes it. */
class Reader {
  private i = 0;
  private readonly commands: SimpleCommand[] = [];
  private readonly hidden: string[] = [];
  private unsure: string | undefined;
  private cur: SimpleCommand = { words: [], redirects: [] };
  /** The word being read, or undefined between words. */
  private word: Word | undefined;
  private pendingRedirect: string | undefined;
  private readonly heredocs: Heredoc[] = [];
  private forClause = false;
  /** Set when reading must stop (an unclosed construct). */
  private stopped = false;

  constructor(private readonly line: string) {}

  read(): ParsedLine {
    const { line } = this;
    while (this.i < line.length && !this.stopped) this.step(line[this.i]!);
    this.endCommand();
    if (this.heredocs.length > 0) this.flag("a here-document has no body");
    const { commands, hidden, unsure } = this;
    return unsure === undefined ? { commands, hidden } : { commands, hidden, unsure };
  }

  private flag(why: string): void {
    this.unsure ??= why;
  }

  private stop(why: string): void {
    this.flag(why);
    this.stopped = true;
  }

  private ensureWord(): Word {
    return (this.word ??= { text: "", exact: true, glob: false });
  }

  private step(c: string): void {
    const { line } = this;
    const next = line[this.i + 1];
    if (c === "\n") {
      this.endWord();
      if (this.heredocs.length > 0) return this.heredocBodies();
    }
    if (c === "\\") return this.backslash();
    if (c === "'") return this.singleQuoted();
    if (c === "$" && next === "'") return this.ansiQuoted();
    if (c === '"' || (c === "$" && next === '"')) return this.doubleQuoted();
    if (c === "$" && next === "(") return this.commandSubstitution();
    if (c === "`") return this.backticks();
    if ((c === "<" || c === ">") && next === "(" && !this.word) return this.processSubstitution(c);
    if (c === "$" && /[A-Za-z0-9_{@*#?$!-]/.test(next ?? "")) return this.parameter();
    if (c === "#" && !this.word) {
      const nl = line.indexOf("\n", this.i);
      this.i = nl < 0 ? line.length : nl;
      return;
    }
    if (c === " " || c === "\t" || c === "\r") {
      this.endWord();
      this.i++;
      return;
    }
    const redirect = REDIRECTS.find((op) => line.startsWith(op, this.i));
    if (redirect) return this.redirection(redirect);
    const operator = OPERATORS.find((op) => line.startsWith(op, this.i));
    if (operator) {
      this.endCommand();
      if (operator.startsWith(";;") || operator === ";&") this.flag("it uses case … esac");
      this.i += operator.length;
      return;
    }
    const w = this.ensureWord();
    if (c === "*" || c === "?" || c === "[") w.glob = true;
    // Tilde and brace expansion make the word something else than its text.
    if ((c === "~" && w.text === "") || (c === "{" && /^[^}]*(,|\.\.)[^}]*\}/.test(line.slice(this.i + 1)))) w.exact = false;
    w.text += c;
    this.i++;
  }

  private endWord(): void {
    const w = this.word;
    if (!w) return;
    this.word = undefined;
    if (this.pendingRedirect) {
      const op = this.pendingRedirect;
      this.cur.redirects.push({ op, target: w });
      if (op === "<<" || op === "<<-") this.heredocs.push({ delim: w.text, strip: op === "<<-", expand: !w.quoted });
      this.pendingRedirect = undefined;
      return;
    }
    if (this.cur.words.length === 0 && w.exact) {
      if (ASSIGNMENT.test(w.text) || KEYWORDS.has(w.text)) return;
      if (w.text === "for" || w.text === "select") {
        this.forClause = true;
        return;
      }
      if (w.text === "case" || w.text === "esac") this.flag("it uses case … esac");
    }
    if (this.forClause) return; // `for x in a b c` names no command
    this.cur.words.push(w);
  }

  private endCommand(): void {
    this.endWord();
    if (this.pendingRedirect) this.flag(`a ${this.pendingRedirect} redirection has no target`);
    this.pendingRedirect = undefined;
    this.forClause = false;
    if (this.cur.words.length > 0 || this.cur.redirects.length > 0) this.commands.push(this.cur);
    this.cur = { words: [], redirects: [] };
  }

  /** Here-document bodies start after the newline that ends their command. */
  private heredocBodies(): void {
    const { line } = this;
    this.endCommand();
    this.i++;
    for (const h of this.heredocs.splice(0)) {
      let closed = false;
      while (this.i < line.length) {
        const nl = line.indexOf("\n", this.i);
        const end = nl < 0 ? line.length : nl;
        const text = line.slice(this.i, end);
        this.i = end + 1;
        if ((h.strip ? text.replace(/^\t+/, "") : text) === h.delim) {
          closed = true;
          break;
        }
        // An unquoted delimiter means the body is expanded: substitutions in it run.
        if (h.expand && /\$\(|`/.test(text)) this.hidden.push(...substitutionsIn(text));
      }
      if (!closed) this.flag("a here-document is not closed");
    }
  }

  private backslash(): void {
    const { line } = this;
    if (line[this.i + 1] === "\n") {
      this.i += 2;
      return;
    }
    const w = this.ensureWord();
    w.quoted = true;
    w.text += this.i + 1 < line.length ? line[this.i + 1] : "\\";
    this.i += 2;
  }

  private singleQuoted(): void {
    const j = this.line.indexOf("'", this.i + 1);
    const w = this.ensureWord();
    w.quoted = true;
    if (j < 0) {
      w.text += this.line.slice(this.i + 1);
      return this.stop("a quote is not closed");
    }
    w.text += this.line.slice(this.i + 1, j);
    this.i = j + 1;
  }

  private ansiQuoted(): void {
    const { line } = this;
    let j = this.i + 2;
    for (; j < line.length && line[j] !== "'"; j++) if (line[j] === "\\") j++;
    if (j >= line.length) return this.stop("a quote is not closed");
    const w = this.ensureWord();
    w.quoted = true;
    w.text += ansiC(line.slice(this.i + 2, j));
    this.i = j + 1;
  }

  private doubleQuoted(): void {
    const { line } = this;
    const w = this.ensureWord();
    w.quoted = true;
    let j = line[this.i] === "$" ? this.i + 2 : this.i + 1;
    for (; j < line.length && line[j] !== '"'; j++) {
      const d = line[j]!;
      if (d === "\\" && j + 1 < line.length && '"\\$`\n'.includes(line[j + 1]!)) {
        if (line[j + 1] !== "\n") w.text += line[j + 1];
        j++;
      } else if ((d === "$" && line[j + 1] === "(") || d === "`") {
        const k = d === "`" ? closeBacktick(line, j + 1) : closeParen(line, j + 2);
        if (k < 0) return this.stop(d === "`" ? "a backtick is not closed" : "a $( is not closed");
        if (d === "`") this.hidden.push(line.slice(j + 1, k - 1));
        else if (line[j + 2] !== "(") this.hidden.push(line.slice(j + 2, k - 1));
        else this.hidden.push(...substitutionsIn(line.slice(j + 3, k - 1)));
        w.exact = false;
        j = k - 1;
      } else {
        if (d === "$" && /[A-Za-z0-9_{@*#?$!-]/.test(line[j + 1] ?? "")) w.exact = false;
        w.text += d;
      }
    }
    if (j >= line.length) return this.stop("a quote is not closed");
    this.i = j + 1;
  }

  private commandSubstitution(): void {
    const { line } = this;
    const k = closeParen(line, this.i + 2);
    if (k < 0) return this.stop("a $( is not closed");
    // $(( … )): arithmetic, but a substitution inside it still runs.
    if (line[this.i + 2] === "(") this.hidden.push(...substitutionsIn(line.slice(this.i + 3, k - 1)));
    else this.hidden.push(line.slice(this.i + 2, k - 1));
    const w = this.ensureWord();
    w.exact = false;
    w.text += "$(…)";
    this.i = k;
  }

  private backticks(): void {
    const k = closeBacktick(this.line, this.i + 1);
    if (k < 0) return this.stop("a backtick is not closed");
    this.hidden.push(this.line.slice(this.i + 1, k - 1));
    const w = this.ensureWord();
    w.exact = false;
    w.text += "`…`";
    this.i = k;
  }

  private processSubstitution(c: string): void {
    const k = closeParen(this.line, this.i + 2);
    if (k < 0) return this.stop("a process substitution is not closed");
    this.hidden.push(this.line.slice(this.i + 2, k - 1));
    this.cur.words.push({ text: `${c}(…)`, exact: false, glob: false });
    this.i = k;
  }

  private parameter(): void {
    const { line } = this;
    const w = this.ensureWord();
    w.exact = false;
    if (line[this.i + 1] === "{") {
      const k = line.indexOf("}", this.i + 2);
      const body = k < 0 ? line.slice(this.i) : line.slice(this.i, k + 1);
      if (/\$\(|`/.test(body)) this.hidden.push(...substitutionsIn(body));
      w.text += body;
      this.i = k < 0 ? line.length : k + 1;
      return;
    }
    const m = /^\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(line.slice(this.i))!;
    w.text += m[0];
    this.i += m[0].length;
  }

  private redirection(redirect: string): void {
    const { line } = this;
    // A word of digits (or {name}) right before the operator is its descriptor, not a word.
    const w = this.word;
    if (w && w.exact && !w.quoted && /^(\d+|\{[A-Za-z_]\w*\})$/.test(w.text)) this.word = undefined;
    else this.endWord();
    if (this.pendingRedirect) this.flag("two redirection operators in a row");
    let op = redirect;
    this.i += op.length;
    // ">&2", "<&0", ">&-": a copy of a descriptor, no file.
    const dup = /^(\d+|-)(?=[\s;&|)<>]|$)/.exec(line.slice(this.i));
    if ((op === ">&" || op === "<&") && dup) {
      this.i += dup[0].length;
      return;
    }
    if (op === ">&") op = "&>";
    while (line[this.i] === " " || line[this.i] === "\t") this.i++;
    this.pendingRedirect = op;
  }
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
