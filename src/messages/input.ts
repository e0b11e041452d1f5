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

export function checkBlock(b: unknown, at: string): void {
  if (!isObj(b)) throw new LetheInputError(at, `a content block must be an object, got ${kind(b)}`);
  if (typeof b.type !== "string") throw new LetheInputError(`${at}.type`, `must be a string, got ${kind(b.type)}`);
  switch (b.type) {
    case "text":
      if (typeof b.text !== "string") throw new LetheInputError(`${at}.text`, `must be a string, got ${kind(b.text)}`);
      break;
    case "thinking":
      if (typeof b.thinking !== "string") throw new LetheInputError(`${at}.thinking`, `must be a string, got ${kind(b.thinking)}`);
      break;
    case "redacted_thinking":
      if (typeof b.data !== "string") throw new LetheInputError(`${at}.data`, `must be a string, got ${kind(b.data)}`);
      break;
    case "image":
      if (!isObj(b.source)) throw new LetheInputError(`${at}.source`, `must be an object, got ${kind(b.source)}`);
      break;
    case "tool_use":
      if (typeof b.id !== "string") throw new LetheInputError(`${at}.id`, `must be a string, got ${kind(b.id)}`);
      if (typeof b.name !== "string") throw new LetheInputError(`${at}.name`, `must be a string, got ${kind(b.name)}`);
      if (depthExceeds(b.input, MAX_NESTING)) throw new LetheInputError(`${at}.input`, `is nested more than ${MAX_NESTING} levels deep`);
      break;
    case "tool_result": {
      if (typeof b.tool_use_id !== "string") throw new LetheInputError(`${at}.tool_use_id`, `must be a string, got ${kind(b.tool_use_id)}`);
      const c = b.content;
      if (c === undefined || typeof c === "string") break;
      if (!Array.isArray(c)) throw new LetheInputError(`${at}.content`, `must be a string or a list of blocks, got ${kind(c)}`);
      c.forEach((x, i) => checkBlock(x, `${at}.content[${i}]`));
      break;
    }
    default:
      // Blocks of kinds this version does not know (future API additions) pass through as they are.
      if (depthExceeds(b, MAX_NESTING)) throw new LetheInputError(at, `is nested more than ${MAX_NESTING} levels deep`);
  }
}

/** One message: an object with role user|assistant and string or block-list content. */
export function checkMessage(m: unknown, at: string): void {
  if (!isObj(m)) throw new LetheInputError(at, `a message must be an object, got ${kind(m)}`);
  if (m.role !== "user" && m.role !== "assistant") {
    const hint = m.role === "system" ? ' (pass the system prompt as `system`, not as a message)' : "";
    throw new LetheInputError(`${at}.role`, `must be "user" or "assistant", got ${JSON.stringify(m.role) ?? kind(m.role)}${hint}`);
  }
  const c = m.content;
  if (typeof c === "string") return;
  if (!Array.isArray(c)) throw new LetheInputError(`${at}.content`, `must be a string or a list of blocks, got ${kind(c)}`);
  c.forEach((b, i) => checkBlock(b, `${at}.content[${i}]`));
}

/** Throws LetheInputError when `history` cannot be read as a list of messages. */
export function checkHistory(history: unknown, where = "history"): void {
  if (!Array.isArray(history)) throw new LetheInputError(where, `must be an array of messages, got ${kind(history)}`);
  for (let i = 0; i < history.length; i++) checkMessage(history[i], `${where}[${i}]`);
}
