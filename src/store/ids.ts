// Conversation ids come from the host (a chat id, a thread id, a user's input): any characters,
// but bounded, so a database key stays indexable and a folder name stays short (files.ts hashes
// what is not a plain name).
import { LetheInputError, show } from "../messages/input.ts";
import { MAX_CONVERSATION_ID } from "./types.ts";

/** Refuses an id that is not a string of 1–1,000 characters without NUL, in one line. */
export function checkConversationId(id: unknown): asserts id is string {
  if (typeof id !== "string") throw new LetheInputError("conversationId", `must be a string, got ${show(id)}`);
  if (id.length === 0) throw new LetheInputError("conversationId", "must not be empty");
  if (id.length > MAX_CONVERSATION_ID) throw new LetheInputError("conversationId", `is ${id.length} characters; at most ${MAX_CONVERSATION_ID}`);
  if (id.includes("\0")) throw new LetheInputError("conversationId", "must not contain a NUL character");
  // A lone surrogate has no UTF-8 form: two such ids would become one folder or one database key.
  if (/\p{Cs}/u.test(id)) throw new LetheInputError("conversationId", "holds a lone surrogate (not well-formed Unicode)");
}
