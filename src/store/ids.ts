// Conversation ids come from the host (a chat id, a thread id, a user's input): any characters,
// but bounded, so a database key stays indexable and a folder name stays short (files.ts hashes
// what is not a plain name).
import { LetheInputError, show } from "../messages/input.ts";
import { MAX_CONVERSATION_ID, type MeterState } from "./types.ts";

/** Refuses an id that is not a string of 1–1,000 characters without NUL, in one line. */
export function checkConversationId(id: unknown): asserts id is string {
  if (typeof id !== "string") throw new LetheInputError("conversationId", `must be a string, got ${show(id)}`);
  if (id.length === 0) throw new LetheInputError("conversationId", "must not be empty");
  if (id.length > MAX_CONVERSATION_ID) throw new LetheInputError("conversationId", `is ${id.length} characters; at most ${MAX_CONVERSATION_ID}`);
  if (id.includes("\0")) throw new LetheInputError("conversationId", "must not contain a NUL character");
  // A lone surrogate has no UTF-8 form: two such ids would become one folder or one database key.
  if (/\p{Cs}/u.test(id)) throw new LetheInputError("conversationId", "holds a lone surrogate (not well-formed Unicode)");
}

/** appendMessages' `opts.uuids`: one short printable string per message, or nothing. */
export function checkUuids(opts: unknown, count: number): readonly string[] | undefined {
  if (opts === undefined) return undefined;
  if (typeof opts !== "object" || opts === null) throw new LetheInputError("appendMessages(opts)", `must be an object, got ${show(opts)}`);
  const uuids = (opts as { uuids?: unknown }).uuids;
  if (uuids === undefined) return undefined;
  if (!Array.isArray(uuids) || uuids.length !== count) throw new LetheInputError("appendMessages(opts.uuids)", `must be a list of ${count} uuid(s), one per message, got ${show(uuids)}`);
  for (const u of uuids) {
    if (typeof u !== "string" || !/^[\w.:-]{1,100}$/.test(u)) throw new LetheInputError("appendMessages(opts.uuids)", `holds ${show(u)}: a uuid is 1–100 letters, digits, '-', '_', '.' or ':'`);
  }
  return uuids as string[];
}

/**
 * A MeterState as a plain object of checked values. With `what`, a bad one is refused (a caller's
 * argument); without, it is read as null (what a store held: a damaged measure is no measure).
 */
export function checkMeter(v: unknown, what?: string): MeterState | null {
  const m = (typeof v === "object" && v !== null ? v : {}) as Record<string, unknown>;
  const ok =
    typeof m.model === "string" && m.model.length <= 1_000 &&
    typeof m.factor === "number" && Number.isFinite(m.factor) && m.factor > 0 &&
    typeof m.lastResponseAt === "number" && Number.isFinite(m.lastResponseAt) && m.lastResponseAt >= 0;
  if (ok) return { model: m.model as string, factor: m.factor as number, lastResponseAt: m.lastResponseAt as number };
  if (what === undefined) return null;
  throw new LetheInputError(what, `must be { model: string, factor: a number > 0, lastResponseAt: ms since the epoch }, got ${show(v)}`);
}
