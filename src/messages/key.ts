// A message's content key: its role and a hash of its content as JSON, what a deserialised copy
// of the message keeps. The engine recognises a history it saw before by these (a host that
// passes new objects each call), and a store records each message once by them.
import { createHash } from "node:crypto";
import type { Message } from "./types.ts";

// Computed once per object: messages are never mutated (a changed one is a new object).
const keys = new WeakMap<object, string>();

/** The content key of a message, or undefined when its content cannot be written as JSON (a BigInt, a cycle). */
export function contentKey(m: Message): string | undefined {
  let k = keys.get(m);
  if (k === undefined) {
    try {
      k = `${m.role}:${createHash("sha1").update(JSON.stringify(m.content) ?? "").digest("base64")}`;
    } catch {
      return undefined;
    }
    keys.set(m, k);
  }
  return k;
}
