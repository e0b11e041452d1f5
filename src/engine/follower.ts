// Following a host that keeps its own full history. Most hosts append to their own list and pass
// all of it before every request, never the history lethe returned. Preparing that from scratch
// costs O(session) per call (quadratic per session): repair and every layer walk it all, budget
// writes the same huge results to disk again, snip rebuilds the same carried note.
//
// The follower remembers the last input (its message objects, extended as the host appends) and
// what lethe made of it. When the next input is the last one plus new messages (same objects, in
// order), the engine prepares the last result plus the new messages instead: exactly what a host
// that passes back lethe's history would send, so both ways of driving give the same requests.
// Any other input (a rewind, an edited or replaced message) is prepared as given.
//
// Messages are recognised by identity first, then by content: a host that deserialises its
// history before every call (a route handler given JSON, a checkpointer, a store) passes new
// objects with the same content, and pays for what is new just the same.
import { createHash } from "node:crypto";
import type { Message } from "../messages/types.ts";

export interface Follower {
  /** The history to prepare for `input`: the last result plus what was appended since, or `input` itself. */
  resolve(input: readonly Message[]): readonly Message[];
  /** Records what the last resolved input became (call after every prepare or compaction of it). */
  remember(input: readonly Message[], output: readonly Message[]): void;
  /** Whether `history` is the last result handed out (then a recovery of it replaces that result). */
  isLastOutput(history: readonly Message[]): boolean;
  /** Replaces the last result (after a recovery of it), keeping what it stands for. */
  replaceOutput(output: readonly Message[]): void;
}

/** Leading messages always compared (snip and summaries keep the session's first request). */
const HEAD_CHECK = 8;

// A message's content key, computed once per object: its role and a hash of its content as JSON
// (what a deserialised copy keeps). Content JSON cannot encode (a BigInt, a cycle) matches nothing.
const keys = new WeakMap<Message, string>();

/** The content key of a message (role and a hash of its content), or undefined when it has none. */
export function messageKey(m: Message): string | undefined {
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

/** The same message: the same object, or one with the same role and content. */
function same(a: Message | undefined, b: Message): boolean {
  if (a === b) return true;
  if (a === null || typeof a !== "object") return false;
  const ka = messageKey(a);
  return ka !== undefined && ka === messageKey(b);
}

export function createFollower(): Follower {
  // The host's messages seen so far, in order (our own copy: the host's array may change).
  let seen: Message[] = [];
  // What `seen` became; null when nothing was changed (then `seen` itself is the history).
  let out: Message[] | null = null;
  // Set by resolve: how much of the input is already in `seen` (-1: not an extension).
  let matched = -1;

  // Whether input is seen + appended messages. Compared by identity or content (same), and only where it matters:
  // the messages still in the last result (at most its length, from the end) and the first few.
  // A message already compacted out of the context is not compared: an edit there would not
  // reach the model either when the host passes back lethe's history. This keeps a call
  // O(context), not O(session).
  const extendsSeen = (input: readonly Message[]): boolean => {
    const n = seen.length;
    if (n === 0 || input.length < n) return false;
    const tail = out === null ? n : Math.min(n, out.length + 1);
    for (let i = n - 1; i >= n - tail; i--) if (!same(input[i], seen[i]!)) return false;
    for (let i = Math.min(HEAD_CHECK, n - tail) - 1; i >= 0; i--) if (!same(input[i], seen[i]!)) return false;
    return true;
  };

  return {
    resolve(input) {
      // Not a list, or one whose reading throws (a caller's Proxy): prepared as given, and
      // repair's input check says what is wrong with it.
      try {
        matched = Array.isArray(input) && extendsSeen(input) ? seen.length : -1;
      } catch {
        matched = -1;
      }
      if (matched < 0 || out === null) return input;
      return matched === input.length ? out.slice() : out.concat(input.slice(matched));
    },
    remember(input, output) {
      if (matched >= 0 && input.length >= matched) {
        for (let i = matched; i < input.length; i++) seen.push(input[i]!);
      } else {
        seen = input.slice();
      }
      matched = -1;
      // The output goes back to the host, which may push onto it: keep a copy.
      out = output === input ? null : output.slice();
    },
    isLastOutput(history) {
      const last = out ?? seen;
      try {
        if (history.length !== last.length) return false;
        for (let i = 0; i < last.length; i++) if (!same(history[i], last[i]!)) return false;
        return true;
      } catch {
        return false; // not a readable list: repair's input check says so
      }
    },
    replaceOutput(output) {
      out = output.slice();
    },
  };
}
