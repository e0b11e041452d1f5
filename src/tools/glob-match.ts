// Glob patterns as regular expressions, without dependencies (Node 20 has no path.matchesGlob).
//
//   *  any run of characters except "/"      ?  one character except "/"
//   ** a whole segment: zero or more folders  [abc] [a-z] [!a-z] [^a-z]  one character of a class
//   {a,b,c}  alternatives (expanded first, may hold "/" and nest)      \x  x literally
//
// Matching is against "/"-separated relative paths; "*" matches names starting with a dot too.
import { ToolError } from "./util.ts";

const MAX_EXPANSIONS = 1_000;
const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/g;

/** Expands {a,b} alternatives (nested allowed); a brace without a top-level comma is literal. */
export function expandBraces(pattern: string): string[] {
  const out = expand(pattern);
  return [...new Set(out)];
}

function expand(p: string): string[] {
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (c !== "{") continue;
    let depth = 0;
    let j = i;
    const commas: number[] = [];
    for (; j < p.length; j++) {
      const d = p[j];
      if (d === "\\") {
        j++;
        continue;
      }
      if (d === "{") depth++;
      else if (d === "}") {
        depth--;
        if (depth === 0) break;
      } else if (d === "," && depth === 1) commas.push(j);
    }
    if (j >= p.length) return [p]; // unbalanced: everything literal
    if (commas.length === 0) continue; // "{a}" is literal; look further
    const pre = p.slice(0, i);
    const post = p.slice(j + 1);
    const bounds = [i, ...commas, j];
    const out: string[] = [];
    for (let k = 0; k < bounds.length - 1; k++) {
      const alt = p.slice((bounds[k] as number) + 1, bounds[k + 1]);
      for (const e of expand(pre + alt + post)) {
        out.push(e);
        if (out.length > MAX_EXPANSIONS) throw new ToolError(`pattern ${p} expands to more than ${MAX_EXPANSIONS} alternatives`);
      }
    }
    return out;
  }
  return [p];
}

/** True when a segment holds glob syntax (so it is not a literal name). */
export function hasMagic(segment: string): boolean {
  return /[*?[]/.test(segment);
}

/** A segment (no "/") as a regex source. */
function segmentSource(s: string): string {
  let re = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === "\\") {
      const next = s[i + 1];
      if (next !== undefined) {
        re += next.replace(REGEX_SPECIAL, "\\$&");
        i++;
      } else re += "\\\\";
    } else if (c === "*") {
      while (s[i + 1] === "*") i++;
      re += "[^/]*";
    } else if (c === "?") {
      re += "[^/]";
    } else if (c === "[") {
      // Find the closing bracket; a "]" right after "[" or "[!" is part of the class.
      let j = i + 1;
      if (s[j] === "!" || s[j] === "^") j++;
      if (s[j] === "]") j++;
      while (j < s.length && s[j] !== "]") j++;
      if (j >= s.length) {
        re += "\\[";
        continue;
      }
      let body = s.slice(i + 1, j);
      let negate = false;
      if (body.startsWith("!") || body.startsWith("^")) {
        negate = true;
        body = body.slice(1);
      }
      const cls = body.replace(/[\\\]^[]/g, (m, off: number) => (m === "^" && off > 0 ? "^" : `\\${m}`));
      re += negate ? `[^/${cls}]` : `(?!/)[${cls}]`;
      i = j;
    } else {
      re += c.replace(REGEX_SPECIAL, "\\$&");
    }
  }
  return re;
}

/** The segments of a pattern, empty ones dropped ("a//b/" → ["a", "b"]). */
export function segmentsOf(pattern: string): string[] {
  return pattern.split("/").filter((s) => s !== "" && s !== ".");
}

/** A brace-free glob as a RegExp matching whole "/"-separated relative paths. */
export function globToRegExp(pattern: string, flags = ""): RegExp {
  const segs = segmentsOf(pattern);
  let re = "^";
  segs.forEach((s, i) => {
    const last = i === segs.length - 1;
    if (s === "**") re += last ? ".*" : "(?:[^/]+/)*";
    else re += segmentSource(s) + (last ? "" : "/");
  });
  return new RegExp(`${re}$`, flags);
}

/**
 * Splits a brace-free pattern into its literal leading folders and the glob after them:
 * "src/lib/**\/*.ts" → { prefix: "src/lib", rest: "**\/*.ts" }. A pattern without any glob syntax
 * is all prefix (rest ""). An absolute pattern keeps its leading "/" in the prefix.
 */
export function splitStatic(pattern: string): { prefix: string; rest: string } {
  const absolute = pattern.startsWith("/");
  const segs = segmentsOf(pattern);
  let k = 0;
  while (k < segs.length && !hasMagic(segs[k] as string)) k++;
  const prefix = (absolute ? "/" : "") + segs.slice(0, k).join("/");
  return { prefix, rest: segs.slice(k).join("/") };
}

/** A compiled matcher for a (possibly brace-holding) glob used as a file filter. */
export function compileFilter(glob: string): (relPath: string, name: string) => boolean {
  const alts = expandBraces(glob).map((g) => ({ re: globToRegExp(g), nameOnly: !g.includes("/") }));
  return (relPath, name) => alts.some((a) => a.re.test(a.nameOnly ? name : relPath));
}
