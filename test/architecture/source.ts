// Reading src/ for the architecture tests: the import graph (type-only and dynamic imports
// included) and each function's length, from the text (the compiler in use, TypeScript 7, has no
// JavaScript API). Strings, template literals, comments and regular expressions are blanked first,
// so braces and quotes inside them do not count.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export interface SourceFile {
  /** Relative to the repository root, "/"-separated. */
  path: string;
  text: string;
  /** The text with strings, comments and regex bodies replaced by spaces (newlines kept). */
  code: string;
}

export function sourceFiles(root: string, dir = "src"): SourceFile[] {
  const out: SourceFile[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(join(root, d))) {
      const rel = `${d}/${name}`;
      if (statSync(join(root, rel)).isDirectory()) walk(rel);
      else if (rel.endsWith(".ts") && !rel.endsWith(".d.ts")) {
        const text = readFileSync(join(root, rel), "utf8");
        out.push({ path: rel, text, code: blank(text) });
      }
    }
  };
  walk(dir);
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** Where a `/` starts a regular expression rather than a division: after these (or at the start). */
const REGEX_AFTER = new Set(["(", ",", "=", ":", "[", "!", "&", "|", "?", "{", "}", ";", "+", "-", "*", "%", "<", ">", "~", "^", "\n"]);
const REGEX_AFTER_WORDS = /(?:^|[^\w$])(return|typeof|case|do|else|in|of|void|yield|await|throw|delete)$/;

/** Blanks strings, templates (keeping `${…}` code), comments and regex bodies. */
export function blank(src: string): string {
  const out = src.split("");
  const wipe = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n") out[k] = " ";
  };
  let i = 0;
  let last = "\n"; // the last significant character of code
  const templateDepth: number[] = []; // brace depth at each `${` we are inside
  let braces = 0;
  const scanString = (q: string) => {
    const start = i;
    for (i++; i < src.length && src[i] !== q; i++) if (src[i] === "\\") i++;
    wipe(start + 1, i);
    i++;
  };
  const scanTemplate = () => {
    // From just after ` or }, to the closing ` or the next ${.
    const start = i;
    for (; i < src.length; i++) {
      if (src[i] === "\\") {
        i++;
        continue;
      }
      if (src[i] === "`") {
        wipe(start, i);
        i++;
        last = "a";
        return;
      }
      if (src[i] === "$" && src[i + 1] === "{") {
        wipe(start, i);
        i += 2;
        templateDepth.push(braces);
        braces++;
        last = "{";
        return;
      }
    }
    wipe(start, i);
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === "/" && src[i + 1] === "/") {
      const end = src.indexOf("\n", i);
      wipe(i, end < 0 ? src.length : end);
      i = end < 0 ? src.length : end;
      continue;
    }
    if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      wipe(i, end < 0 ? src.length : end + 2);
      i = end < 0 ? src.length : end + 2;
      continue;
    }
    if (c === "'" || c === '"') {
      scanString(c);
      last = "a";
      continue;
    }
    if (c === "`") {
      i++;
      scanTemplate();
      continue;
    }
    if (c === "/" && (REGEX_AFTER.has(last) || REGEX_AFTER_WORDS.test(src.slice(Math.max(0, i - 12), i).trimEnd()))) {
      const start = i;
      let cls = false;
      for (i++; i < src.length && src[i] !== "\n"; i++) {
        if (src[i] === "\\") i++;
        else if (src[i] === "[") cls = true;
        else if (src[i] === "]") cls = false;
        else if (src[i] === "/" && !cls) break;
      }
      wipe(start + 1, i);
      i++;
      while (/[a-z]/.test(src[i] ?? "")) i++;
      last = "a";
      continue;
    }
    if (c === "{") braces++;
    if (c === "}") {
      braces--;
      if (templateDepth.length > 0 && templateDepth.at(-1) === braces) {
        templateDepth.pop();
        i++;
        scanTemplate();
        continue;
      }
    }
    if (!/\s/.test(c)) last = /[\w$]/.test(c) ? "a" : c;
    else if (c === "\n" && /[;{}]/.test(last)) last = "\n";
    i++;
  }
  return out.join("");
}

// ───────────────────────── imports ─────────────────────────

export interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** Every relative import of a file (static, `export … from`, dynamic), resolved to a repository path. */
export function importsOf(file: SourceFile, root: string): Import[] {
  const out: Import[] = [];
  // Statements are found in the blanked code (so examples in comments do not count); the
  // specifier is read from the original text at the same place.
  const re = /(?:^|[\s;])(import|export)(\s+type)?\b[^;]*?\bfrom\s*(["'])|import\s*\(\s*(["'])|(?:^|[\s;])import\s*(["'])/g;
  for (let m = re.exec(file.code); m; m = re.exec(file.code)) {
    const q = m.index + m[0].length - 1;
    const end = file.text.indexOf(file.text[q]!, q + 1);
    const spec = file.text.slice(q + 1, end);
    if (!spec.startsWith(".")) continue;
    const statement = file.text.slice(m.index, q);
    const typeOnly = !!m[2] || /^\s*(import|export)\s*\{[^}]*\}/.test(statement) && /\{([^}]*)\}/.exec(statement)![1]!.split(",").filter((s) => s.trim()).every((s) => /^\s*type\s/.test(s));
    const target = relative(root, resolve(root, dirname(file.path), spec)).split("\\").join("/");
    out.push({ from: file.path, to: target, typeOnly });
  }
  return out;
}

/** The strongly connected groups of more than one file (Tarjan). */
export function cycles(edges: readonly Import[]): string[][] {
  const graph = new Map<string, string[]>();
  for (const e of edges) {
    if (!graph.has(e.from)) graph.set(e.from, []);
    graph.get(e.from)!.push(e.to);
  }
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

// ───────────────────────── functions ─────────────────────────

export interface FunctionSpan {
  file: string;
  name: string;
  line: number;
  lines: number;
}

const KEYWORDS = new Set(["if", "for", "while", "switch", "catch", "return", "function", "with", "await", "typeof", "new", "super", "import"]);

function lineAt(code: string, i: number): number {
  let n = 1;
  for (let k = code.indexOf("\n"); k !== -1 && k < i; k = code.indexOf("\n", k + 1)) n++;
  return n;
}

/** Index of the bracket closing the one at `open`; -1 when unbalanced. */
function closing(code: string, open: number): number {
  const pairs: Record<string, string> = { "(": ")", "[": "]", "{": "}", "<": ">" };
  const want = [pairs[code[open]!]!];
  for (let i = open + 1; i < code.length; i++) {
    const c = code[i]!;
    if (c === "=" && code[i + 1] === ">") {
      i++;
      continue;
    }
    if (c in pairs && (c !== "<" || want.at(-1) === ">")) want.push(pairs[c]!);
    else if (c === want.at(-1)) {
      want.pop();
      if (want.length === 0) return i;
    } else if (want.at(-1) === ">" && /[;{}]/.test(c)) return -1; // a comparison, not a type argument
  }
  return -1;
}

/** From just after a parameter list: the body's `{`, past an optional return type; -1 if none. */
function bodyAfter(code: string, from: number): number {
  let i = from;
  const skip = () => {
    while (/\s/.test(code[i] ?? "")) i++;
  };
  skip();
  if (code[i] === ":") {
    i++;
    let expectType = true;
    for (;;) {
      skip();
      const c = code[i];
      if (c === undefined) return -1;
      if (c === "{" && !expectType) return i;
      if (c === "{" || c === "(" || c === "[" || c === "<") {
        const end = closing(code, i);
        if (end < 0) return -1;
        i = end + 1;
        expectType = false;
        continue;
      }
      if (c === "=" && code[i + 1] === ">") {
        i += 2;
        expectType = true;
        continue;
      }
      if (c === "|" || c === "&" || c === "," || c === "?") {
        i++;
        expectType = true;
        continue;
      }
      if (/[\w$."'`]/.test(c)) {
        while (/[\w$."'`]/.test(code[i] ?? "")) i++;
        expectType = /^(keyof|typeof|readonly|infer|is|asserts|extends|unique)$/.test(code.slice(0, i).match(/[\w$]+$/)?.[0] ?? "");
        continue;
      }
      return -1;
    }
  }
  if (code[i] === "=" && code[i + 1] === ">") {
    i += 2;
    skip();
  }
  return code[i] === "{" ? i : -1;
}

/** Every function, method and block-bodied arrow function, with its length in lines (head to closing brace). */
export function functionsOf(file: SourceFile): FunctionSpan[] {
  const { code } = file;
  const out: FunctionSpan[] = [];
  const seen = new Set<number>();
  const add = (name: string, head: number, body: number) => {
    if (body < 0 || seen.has(body)) return;
    const end = closing(code, body);
    if (end < 0) return;
    seen.add(body);
    const line = lineAt(code, head);
    out.push({ file: file.path, name, line, lines: lineAt(code, end) - line + 1 });
  };
  // function name(…) / name(…) { (methods) / (…) => { and x => {
  const re = /\bfunction\s*\*?\s*([\w$]*)\s*(?:<[^(]*?>)?\s*\(|(?:^|\n)[ \t]*(?:(?:public|private|protected|static|async|get|set|readonly|override)\s+)*\*?([\w$]+)\s*(?:<[^(]*?>)?\s*\(|\(|\b([\w$]+)\s*=>/g;
  for (let m = re.exec(code); m; m = re.exec(code)) {
    if (m[3] !== undefined) {
      // x => { … }
      add(m[3], m.index, bodyAfter(code, m.index + m[0].length - 2));
      continue;
    }
    const open = m.index + m[0].length - 1;
    if (code[open] !== "(") continue;
    const close = closing(code, open);
    if (close < 0) continue;
    if (m[1] !== undefined) {
      add(m[1] || "(anonymous)", m.index, bodyAfter(code, close + 1));
      continue;
    }
    if (m[2] !== undefined) {
      if (KEYWORDS.has(m[2])) continue;
      add(m[2], m.index + m[0].indexOf(m[2]), bodyAfter(code, close + 1));
      continue;
    }
    // A parenthesis: an arrow function's parameters when `=>` follows.
    let k = close + 1;
    while (/\s/.test(code[k] ?? "")) k++;
    if (code[k] === ":" || (code[k] === "=" && code[k + 1] === ">")) {
      const body = bodyAfter(code, close + 1);
      if (body >= 0 && /=>\s*$/.test(code.slice(close + 1, body))) {
        const before = code.slice(Math.max(0, m.index - 80), m.index);
        const name = /([\w$]+)\s*[:=]\s*(?:async\s*)?$/.exec(before)?.[1] ?? /([\w$]+)\s*\(\s*$/.exec(before)?.[1] ?? "(arrow)";
        add(name, m.index, body);
      }
    }
    re.lastIndex = open + 1;
  }
  return out;
}
