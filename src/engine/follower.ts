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
import { contentKey } from "../messages/key.ts";
import type { Message } from "../messages/types.ts";

/** A host's whole history, read in slices (it may be the follower's record plus the input's new part). */
export interface HostView {
  readonly length: number;
  slice(from?: number, to?: number): Message[];
}

export interface Follower {
  /** The history to prepare for `input`: the last result plus what was appended since, or `input` itself. */
  resolve(input: readonly Message[]): readonly Message[];
  /** Records what the last resolved input became (call after every prepare or compaction of it). */
  remember(input: readonly Message[], output: readonly Message[]): void;
  /** Whether `history` is the last result handed out (then a recovery of it replaces that result). */
  isLastOutput(history: readonly Message[]): boolean;
  /** Replaces the last result (after a recovery of it), keeping what it stands for. */
  replaceOutput(output: readonly Message[]): void;
  /**
   * The host's whole history `input` stands for: the input itself, or, when it is the last
   * result plus new messages (a host passing back lethe's history), what was seen plus those.
   */
  hostView(input: readonly Message[]): HostView;
  /** Starts from a state another engine left (a store): `input` stands as `output` from now on. */
  adopt(input: readonly Message[], output: readonly Message[]): void;
}

/** Leading messages always compared (snip and summaries keep the session's first request). */
const HEAD_CHECK = 8;

/** The same message: the same object, or one with the same role and content. */
function same(a: Message | undefined, b: Message): boolean {
  if (a === b) return true;
  if (a === null || typeof a !== "object") return false;
  const ka = contentKey(a);
  return ka !== undefined && ka === contentKey(b);
}

/**
 * `wholeHost`: keep the whole history of a host that passes back lethe's result plus what is
 * new (what a store records). Without it only the last input is kept, so such a host's session is
 * not held in memory twice.
 */
export function createFollower(opts: { wholeHost?: boolean } = {}): Follower {
  // The host's messages seen so far, in order (our own copy: the host's array may change).
  let seen: Message[] = [];
  // What `seen` became; null when nothing was changed (then `seen` itself is the history).
  let out: Message[] | null = null;
  // Set by resolve: how much of the input is already in `seen` (-1: not an extension).
  let matched = -1;
  // Set by resolve: the input is the last result plus new messages (a host passing back lethe's
  // history): their count is where the new ones start (-1: it is not).
  let own = -1;

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

  // Whether input begins with the last result (compared like extendsSeen, from the end).
  const extendsOut = (input: readonly Message[]): boolean => {
    if (out === null || out.length === 0 || input.length < out.length) return false;
    for (let i = out.length - 1; i >= 0; i--) if (!same(input[i], out[i]!)) return false;
    return true;
  };

  const classify = (input: readonly Message[]): void => {
    // Not a list, or one whose reading throws (a caller's Proxy): prepared as given, and
    // repair's input check says what is wrong with it.
    try {
      matched = Array.isArray(input) && extendsSeen(input) ? seen.length : -1;
      own = matched < 0 && Array.isArray(input) && extendsOut(input) ? out!.length : -1;
    } catch {
      matched = -1;
      own = -1;
    }
  };

  return {
    resolve(input) {
      classify(input);
      if (matched < 0 || out === null) return input;
      return matched === input.length ? out.slice() : out.concat(input.slice(matched));
    },
    remember(input, output) {
      if (matched >= 0 && input.length >= matched) {
        for (let i = matched; i < input.length; i++) seen.push(input[i]!);
      } else if (own >= 0 && opts.wholeHost) {
        // The host's whole history is what it had plus the messages new in this input.
        for (let i = own; i < input.length; i++) seen.push(input[i]!);
      } else {
        seen = input.slice();
      }
      // The output goes back to the host, which may push onto it: keep a copy. An unchanged
      // input is `seen` itself, unless it was lethe's own result (then seen is the longer history).
      out = output === input && !(own >= 0 && opts.wholeHost) ? null : output.slice();
      matched = -1;
      own = -1;
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
    adopt(input, output) {
      seen = input.slice();
      out = output.slice();
      matched = -1;
      own = -1;
    },
    hostView(input) {
      classify(input);
      const from = own;
      matched = -1;
      own = -1;
      if (from < 0 || !opts.wholeHost) return { length: input.length, slice: (a, b) => input.slice(a, b) };
      const n = seen.length;
      const length = n + input.length - from;
      return {
        length,
        slice: (a = 0, b = length) => seen.slice(a, Math.min(b, n)).concat(input.slice(from + Math.max(0, a - n), from + Math.max(0, b - n))),
      };
    },
  };
}
