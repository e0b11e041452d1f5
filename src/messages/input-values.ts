// Hostile values at the door: how an error quotes one (short, whatever it is), and a bounded walk
// saying whether a value can be written as JSON (the token counter and the converters do). Nothing
// here recurses without bound, serialises what it describes, or lets a caller's throw escape.

/** The most of a string an error message quotes. */
const QUOTE_CHARS = 40;

/**
 * `v` as an error message may quote it: at most ~60 chars, never a walk (a 10k-deep array, a
 * cycle, a BigInt or a 1 MB string are described, not printed).
 */
export function show(v: unknown): string {
  switch (typeof v) {
    case "string": {
      if (v.length <= QUOTE_CHARS) return clip(JSON.stringify(v));
      return `a ${v.length.toLocaleString("en-US")}-char string ${clip(JSON.stringify(v.slice(0, QUOTE_CHARS))).slice(0, -1)}…"`;
    }
    case "number":
    case "boolean":
    case "undefined":
      return String(v);
    case "bigint":
      return "a BigInt";
    case "symbol":
      return "a symbol";
    case "function":
      return "a function";
    default:
      if (v === null) return "null";
      try {
        return Array.isArray(v) ? "an array" : "an object";
      } catch {
        return "a revoked Proxy"; // Array.isArray throws on one
      }
  }
}

/** Escapes can make a short string's JSON long (\u0000 is six chars). */
function clip(json: string): string {
  return json.length <= 60 ? json : `${json.slice(0, 58)}…"`;
}

/** What a caller's getter or Proxy threw, in a few words (reading the error may throw too). */
export function thrownText(e: unknown): string {
  try {
    const text = e instanceof Error ? `${e.name}: ${e.message}` : show(e);
    const line = text.replace(/\s+/g, " ");
    return line.length > 80 ? `${line.slice(0, 79)}…` : line;
  } catch {
    return "an unreadable error";
  }
}

/** Tool inputs nested deeper than this cannot be walked safely (the transcript's JSON, token counts). */
export const MAX_NESTING = 100;
/**
 * Values one value may hold, counted once per path: far more than a model writes into one tool
 * call, and a bound on an object shared down 40 levels ({a: x, b: x} inside each other: 2^40
 * paths to walk and to serialise) or a Proxy claiming a length of 10^12.
 */
export const MAX_VALUES = 1_000_000;

const BIGINT = "holds a BigInt, which JSON cannot carry";
const TOO_MANY = `holds more than ${MAX_VALUES.toLocaleString("en-US")} values (a shared object counts once per path)`;
let left = 0;

/** Why `v` cannot be written as JSON, or null when it can. Reads through getters: call inside a try. */
export function jsonProblem(v: unknown): string | null {
  if (typeof v !== "object" || v === null) return typeof v === "bigint" ? BIGINT : null;
  left = MAX_VALUES;
  return walk(v, 0);
}

// Recursive, but never deeper than MAX_NESTING frames and never past MAX_VALUES values, with no
// allocation and no call per leaf: this runs on every tool input of every history a public entry
// point is given.
function walk(v: object, d: number): string | null {
  if (d >= MAX_NESTING) return `is nested more than ${MAX_NESTING} levels deep (or refers to itself)`;
  const array = Array.isArray(v);
  // Charged per object and per array item, the length read once (a Proxy may claim 10^12, or grow).
  const n = array ? v.length : 0;
  if ((left -= n + 1) < 0) return TOO_MANY;
  // A toJSON (a Date's, or the caller's own) decides what is written: let JSON say whether it can be.
  if (typeof (v as { toJSON?: unknown }).toJSON === "function") {
    try {
      JSON.stringify(v);
      return null;
    } catch (e) {
      return `cannot be written as JSON (${thrownText(e)})`;
    }
  }
  if (array) {
    for (let i = 0; i < n; i++) {
      const x: unknown = v[i];
      const p = typeof x === "object" && x !== null ? walk(x, d + 1) : typeof x === "bigint" ? BIGINT : null;
      if (p) return p;
    }
    return null;
  }
  for (const k in v) {
    if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
    const x = (v as Record<string, unknown>)[k];
    const p = typeof x === "object" && x !== null ? walk(x, d + 1) : typeof x === "bigint" ? BIGINT : null;
    if (p) return p;
  }
  return null;
}
