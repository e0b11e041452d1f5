// The door of every public entry point that takes a history: input that is not shaped like one
// gets one typed error naming the message index and the field, instead of a TypeError from deep
// inside a layer (or, worse, text dropped in silence). What can be repaired without losing text
// is left to repair(); this only refuses what cannot be read at all.
//
// Hostile input (a caller's getter or Proxy that throws, cycles, BigInts, 10k-deep or 1 MB values)
// is refused here too, in one short line: see ./input-values.ts.
import { LetheError } from "../errors.ts";
import { MAX_NESTING, jsonProblem, show, thrownText } from "./input-values.ts";

export { MAX_NESTING, show };

/** Input lethe cannot read as a history, message or option: one line naming where (`lethe: history[3].content[0].text: …`). */
export class LetheInputError extends LetheError {
  constructor(readonly where: string, detail: string, message?: string) {
    super("bad_input", message ?? `lethe: ${where}: ${detail}`);
  }
}

const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "an array" : typeof v);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

type Problem = [string, string] | null;

/** Whether `e` is lethe's own (asking may throw too: a revoked Proxy has no prototype to check). */
function isOurs(e: unknown): boolean {
  try {
    return e instanceof LetheError;
  } catch {
    return false;
  }
}

const unreadable = (e: unknown): [string, string] => ["", `cannot be read: ${thrownText(e)}`];

/** Runs `problem` on `v`; what the caller's getters or Proxy traps throw is the problem then. */
function guarded(problem: (v: unknown) => Problem, v: unknown): Problem {
  try {
    return problem(v);
  } catch (e) {
    return unreadable(e);
  }
}

/** `read()`, where a throw from the caller's own code (a getter, a Proxy trap) is a LetheInputError at `where`. */
export function readSafely<T>(where: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (isOurs(e)) throw e;
    throw new LetheInputError(where, unreadable(e)[1]);
  }
}

/** Throws LetheInputError naming `at` (and the field inside) when `b` is not a readable content block. */
export function checkBlock(b: unknown, at: string): void {
  const p = guarded(blockProblem, b);
  if (p) throw new LetheInputError(`${at}${p[0]}`, p[1]);
}

/**
 * What is wrong with a block, as [path inside it, detail], or null. Paths are spelled only when
 * something is wrong: building `history[i].content[k]` for every block of a 100k-message history
 * was most of what checking it cost.
 */
function blockProblem(b: unknown, nested = false): Problem {
  if (!isObj(b)) return ["", `a content block must be an object, got ${kind(b)}`];
  if (typeof b.type !== "string") return [".type", `must be a string, got ${kind(b.type)}`];
  // Inside a tool_result, what is not text or an image is counted and sent as JSON: checked as
  // JSON (bounded), never by recursing here (a tool_result in a tool_result 10k deep).
  if (nested && b.type !== "text" && b.type !== "image") return jsonAt("", b);
  switch (b.type) {
    case "text":
      if (typeof b.text !== "string") return [".text", `must be a string, got ${kind(b.text)}`];
      break;
    case "thinking":
      if (typeof b.thinking !== "string") return [".thinking", `must be a string, got ${kind(b.thinking)}`];
      break;
    case "redacted_thinking":
      if (typeof b.data !== "string") return [".data", `must be a string, got ${kind(b.data)}`];
      break;
    case "image":
      if (!isObj(b.source)) return [".source", `must be an object, got ${kind(b.source)}`];
      break;
    case "tool_use":
      if (typeof b.id !== "string") return [".id", `must be a string, got ${kind(b.id)}`];
      if (typeof b.name !== "string") return [".name", `must be a string, got ${kind(b.name)}`];
      return jsonAt(".input", b.input);
    case "tool_result": {
      if (typeof b.tool_use_id !== "string") return [".tool_use_id", `must be a string, got ${kind(b.tool_use_id)}`];
      const c = b.content;
      if (c === undefined || typeof c === "string") break;
      if (!Array.isArray(c)) return [".content", `must be a string or a list of blocks, got ${kind(c)}`];
      for (let i = 0; i < c.length; i++) {
        const p = blockProblem(c[i], true);
        if (p) return [`.content[${i}]${p[0]}`, p[1]];
      }
      break;
    }
    default:
      // Blocks of kinds this version does not know (future API additions) pass through as they
      // are, and are counted as JSON.
      return jsonAt("", b);
  }
  return null;
}

function jsonAt(path: string, v: unknown): Problem {
  const p = jsonProblem(v);
  return p ? [path, p] : null;
}

/** What is wrong with a message, as [path inside it, detail], or null. */
function messageProblem(m: unknown): Problem {
  if (!isObj(m)) return ["", `a message must be an object, got ${kind(m)}`];
  if (m.role !== "user" && m.role !== "assistant") {
    const hint = m.role === "system" ? " (pass the system prompt as `system`, not as a message)" : "";
    return [".role", `must be "user" or "assistant", got ${show(m.role)}${hint}`];
  }
  const c = m.content;
  if (typeof c === "string") return null;
  if (!Array.isArray(c)) return [".content", `must be a string or a list of blocks, got ${kind(c)}`];
  for (let i = 0; i < c.length; i++) {
    const p = blockProblem(c[i]);
    if (p) return [`.content[${i}]${p[0]}`, p[1]];
  }
  return null;
}

/** One message: an object with role user|assistant and string or block-list content. */
export function checkMessage(m: unknown, at: string): void {
  const p = guarded(messageProblem, m);
  if (p) throw new LetheInputError(`${at}${p[0]}`, p[1]);
}

/** Throws LetheInputError when `history` cannot be read as a list of messages. */
export function checkHistory(history: unknown, where = "history"): void {
  const n = readSafely(where, () => {
    if (!Array.isArray(history)) throw new LetheInputError(where, `must be an array of messages, got ${kind(history)}`);
    return history.length;
  });
  for (let i = 0; i < n; i++) {
    // One try per message (free in V8 until something throws), not per field.
    let p: Problem;
    try {
      p = messageProblem((history as unknown[])[i]);
    } catch (e) {
      p = unreadable(e);
    }
    if (p) throw new LetheInputError(`${where}[${i}]${p[0]}`, p[1]);
  }
}
