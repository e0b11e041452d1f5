// The door of every public entry point that takes a history: input that is not shaped like one
// gets one typed error naming the message index and the field, instead of a TypeError from deep
// inside a layer (or, worse, text dropped in silence). What can be repaired without losing text
// is left to repair(); this only refuses what cannot be read at all.
import { LetheError } from "../errors.ts";
import { depthExceeds } from "../model/tool-input.ts";

/** Input lethe cannot read as a history, message or option: one line naming where (`lethe: history[3].content[0].text: …`). */
export class LetheInputError extends LetheError {
  constructor(readonly where: string, detail: string, message?: string) {
    super("bad_input", message ?? `lethe: ${where}: ${detail}`);
  }
}

const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "an array" : typeof v);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Tool inputs nested deeper than this cannot be walked safely (the transcript's JSON, token counts). */
export const MAX_NESTING = 100;

/** Throws LetheInputError naming `at` (and the field inside) when `b` is not a readable content block. */
export function checkBlock(b: unknown, at: string): void {
  const p = blockProblem(b);
  if (p) throw new LetheInputError(`${at}${p[0]}`, p[1]);
}

/**
 * What is wrong with a block, as [path inside it, detail], or null. Paths are spelled only when
 * something is wrong: building `history[i].content[k]` for every block of a 100k-message history
 * was most of what checking it cost.
 */
function blockProblem(b: unknown): [string, string] | null {
  if (!isObj(b)) return ["", `a content block must be an object, got ${kind(b)}`];
  if (typeof b.type !== "string") return [".type", `must be a string, got ${kind(b.type)}`];
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
      if (depthExceeds(b.input, MAX_NESTING)) return [".input", `is nested more than ${MAX_NESTING} levels deep`];
      break;
    case "tool_result": {
      if (typeof b.tool_use_id !== "string") return [".tool_use_id", `must be a string, got ${kind(b.tool_use_id)}`];
      const c = b.content;
      if (c === undefined || typeof c === "string") break;
      if (!Array.isArray(c)) return [".content", `must be a string or a list of blocks, got ${kind(c)}`];
      for (let i = 0; i < c.length; i++) {
        const p = blockProblem(c[i]);
        if (p) return [`.content[${i}]${p[0]}`, p[1]];
      }
      break;
    }
    default:
      // Blocks of kinds this version does not know (future API additions) pass through as they are.
      if (depthExceeds(b, MAX_NESTING)) return ["", `is nested more than ${MAX_NESTING} levels deep`];
  }
  return null;
}

/** What is wrong with a message, as [path inside it, detail], or null. */
function messageProblem(m: unknown): [string, string] | null {
  if (!isObj(m)) return ["", `a message must be an object, got ${kind(m)}`];
  if (m.role !== "user" && m.role !== "assistant") {
    const hint = m.role === "system" ? " (pass the system prompt as `system`, not as a message)" : "";
    return [".role", `must be "user" or "assistant", got ${JSON.stringify(m.role) ?? kind(m.role)}${hint}`];
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
  const p = messageProblem(m);
  if (p) throw new LetheInputError(`${at}${p[0]}`, p[1]);
}

/** Throws LetheInputError when `history` cannot be read as a list of messages. */
export function checkHistory(history: unknown, where = "history"): void {
  if (!Array.isArray(history)) throw new LetheInputError(where, `must be an array of messages, got ${kind(history)}`);
  for (let i = 0; i < history.length; i++) {
    const p = messageProblem(history[i]);
    if (p) throw new LetheInputError(`${where}[${i}]${p[0]}`, p[1]);
  }
}
