// Snip heads written once. A snip boundary carries the context's head (its first messages, the last
// one holding the boundary note) so a resume can start there; consecutive heads are mostly the same
// messages and blocks (the note's blocks reappear, reordered), and writing each in full made them a
// quarter of a long transcript. So a boundary whose head mostly repeats the last head written in full
// (the base: a boundary line with `head` and a `head_id`) writes only a diff against it:
//
//   head_from: { id, at }   the base's head_id and the byte offset of its line (one read to follow)
//   head_diff: [item, …]    one item per message of the head: a number j is the base's message j
//                           unchanged; otherwise the message, whose content blocks may each be a
//                           pair [j, k]: block k of the base's message j
//
// A head that shares too little with the base is written in full and becomes the next base. Readers
// rebuild the full `head` when they parse (./transcript-read.ts), so everything above them sees the
// boundaries as before; a transcript written before this has full heads only and reads as it did.
import { randomBytes } from "node:crypto";
import type { ContentBlock, Message } from "../messages/types.ts";

export interface HeadRef {
  /** The base boundary's `head_id`. */
  id: string;
  /** Byte offset of the base boundary's line in the transcript. */
  at: number;
}

export type HeadDiffItem = number | (Omit<Message, "content"> & { content: string | (ContentBlock | [number, number])[] });

/**
 * A diff is written only when it is at most this share of the full head's bytes (else a new base).
 * A snip's head changes its last message every time, so a diff is often half the head: writing a
 * new base then (at 0.4) cost more bytes in all than the diff (bench:replay's sessions, snip
 * boundaries at 32k: shared 1.61 against 1.46 MB, unseen 0.84/0.78, fresh 2.07/1.98; at 64k 1.29
 * against 1.13), and a base is the costliest line a snip writes.
 */
const DIFF_SHARE = 0.75;
/** What a reference costs in the line, in bytes (for the choice above). */
const REF_BYTES = 8;

interface Base {
  ref: HeadRef;
  messages: ByText<number>;
  blocks: ByText<[number, number]>;
}

/**
 * A map from JSON texts, each kept with the first value given for it, found by length first: a
 * new text of a length no key has (the head's new message, its new blocks) is not hashed, and
 * the others are compared with the few keys of their length (memoised texts are the same string).
 */
class ByText<V> {
  private readonly byLength = new Map<number, [string, V][]>();
  get(text: string): V | undefined {
    const found = this.byLength.get(text.length);
    if (found) for (const [t, v] of found) if (t === text) return v;
    return undefined;
  }
  /** Adds `text` unless it is there already (the first value stays). */
  add(text: string, v: V): void {
    const found = this.byLength.get(text.length);
    if (!found) this.byLength.set(text.length, [[text, v]]);
    else if (!found.some(([t]) => t === text)) found.push([text, v]);
  }
}

/**
 * JSON of messages and blocks, memoised per object. Neither is ever mutated (a changed one is a
 * new object), and a snip's head is mostly the same objects as the last one's: its first
 * messages, and the blocks its last message keeps. A message {role, content: […]} is joined from
 * its blocks' JSON, so the head's new message (the boundary note's) costs one pass over its new
 * blocks, not one per use (diff, rebase).
 */
function jsonMemo() {
  const memo = new WeakMap<object, string>();
  const of = (v: object): string => {
    let text = memo.get(v);
    if (text === undefined) {
      text = JSON.stringify(v);
      memo.set(v, text);
    }
    return text;
  };
  const plain = (v: unknown) => typeof v !== "object" || v === null || typeof (v as { toJSON?: unknown }).toJSON !== "function";
  /**
   * Whether JSON.stringify writes `m` as {"role":…,"content":[its blocks' own JSON]}: those two
   * keys in this order, and no toJSON (which is told the key it is written under).
   */
  const joinable = (m: Message): m is Message & { content: unknown[] } => {
    const keys = Object.keys(m);
    return keys.length === 2 && keys[0] === "role" && keys[1] === "content" && Array.isArray(m.content) && plain(m) && m.content.every(plain);
  };
  const join = (role: string, parts: readonly string[]) => `{"role":${JSON.stringify(role)},"content":[${parts.join(",")}]}`;
  const message = (m: Message): string => {
    let text = memo.get(m);
    if (text === undefined) {
      text = joinable(m) ? join(m.role, m.content.map((b) => (b !== null && typeof b === "object" ? of(b) : (JSON.stringify(b) ?? "null")))) : JSON.stringify(m);
      memo.set(m, text);
    }
    return text;
  };
  return { message, block: (b: ContentBlock) => of(b), joinable, join, plain };
}

/**
 * The writer's side: remembers the last base it wrote and diffs each new head against it, and
 * names each new base (`newId`: 12 hex characters, unique within the transcript).
 */
export function headSharer() {
  let base: Base | null = null;
  const json = jsonMemo();
  // A random prefix per writer and a counter: ids from writers that appended to the same file one
  // after the other (a resumed session) differ, and a base costs no call for randomness.
  const prefix = randomBytes(4).toString("hex");
  let next = 0;
  return {
    newId(): string {
      return `${prefix}${(next++).toString(16).padStart(4, "0")}`;
    },
    /**
     * The diff of `head` against the base, with its JSON (`text`, as JSON.stringify writes
     * `head_diff`), or null when it should be written in full (a new base).
     */
    diff(head: readonly Message[]): { head_from: HeadRef; head_diff: HeadDiffItem[]; text: string } | null {
      if (!base) return null;
      const b = base;
      // First what the diff would write, by lookups alone: a head that shares too little is
      // written in full, and its diff is never built (each snip of a long removed part is one).
      let full = 0, written = 0;
      for (const m of head) {
        const whole = json.message(m);
        full += whole.length;
        if (b.messages.get(whole) !== undefined) written += REF_BYTES;
        else if (!Array.isArray(m.content)) written += whole.length;
        else {
          let blockBytes = 0;
          for (const block of m.content) {
            const text = json.block(block);
            blockBytes += text.length;
            written += b.blocks.get(text) ? REF_BYTES : text.length;
          }
          written += whole.length - blockBytes; // the message's own keys
        }
      }
      if (written > DIFF_SHARE * full) return null;
      const texts: string[] = [];
      const diff = head.map((m): HeadDiffItem => {
        const whole = json.message(m);
        const j = b.messages.get(whole);
        if (j !== undefined) return texts.push(`${j}`), j;
        if (!Array.isArray(m.content)) return texts.push(whole), m;
        const parts: string[] = [];
        const content = m.content.map((block) => {
          const text = json.block(block);
          const at = b.blocks.get(text);
          parts.push(at ? `[${at[0]},${at[1]}]` : text);
          return at ?? block;
        });
        const item = { ...m, content };
        texts.push(json.joinable(m) ? json.join(m.role, parts) : JSON.stringify(item));
        return item;
      });
      // Joined from each message's own JSON, unless a message has a toJSON (told its index in the array).
      return { head_from: { ...b.ref }, head_diff: diff, text: head.every(json.plain) ? `[${texts.join(",")}]` : JSON.stringify(diff) };
    },
    /**
     * A message's JSON as a line holding it writes it, or undefined when JSON.stringify would
     * write it otherwise there (a toJSON, told its key): kept, so a head that holds the message
     * (a session's first messages are its head until a summary) does not write it out again.
     */
    messageJson(m: Message): string | undefined {
      return json.plain(m) && (!Array.isArray(m.content) || m.content.every(json.plain)) ? json.message(m) : undefined;
    },
    /** `head`'s JSON, as JSON.stringify writes it. */
    text(head: readonly Message[]): string {
      return head.every(json.plain) ? `[${head.map(json.message).join(",")}]` : JSON.stringify(head);
    },
    /** `head` was written in full, as base `ref`. */
    rebase(ref: HeadRef, head: readonly Message[]): void {
      const messages = new ByText<number>();
      const blocks = new ByText<[number, number]>();
      head.forEach((m, j) => {
        const whole = json.message(m);
        messages.add(whole, j);
        if (!Array.isArray(m.content)) return;
        m.content.forEach((block, k) => {
          const text = json.block(block);
          blocks.add(text, [j, k]);
        });
      });
      base = { ref, messages, blocks };
    },
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isIndex = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;

/** Why a boundary's head_from / head_diff are not well formed, or null when they are. */
export function headDiffProblem(v: Record<string, unknown>): string | null {
  const from = v.head_from;
  const okFrom = isObject(from) && typeof from.id === "string" && isIndex(from.at);
  const okItem = (x: unknown) =>
    isIndex(x) ||
    (isObject(x) && (x.role === "user" || x.role === "assistant") && (typeof x.content === "string" || (Array.isArray(x.content) && x.content.every((b) => (isObject(b) && typeof b.type === "string") || (Array.isArray(b) && b.length === 2 && b.every(isIndex))))));
  if (okFrom && Array.isArray(v.head_diff) && v.head_diff.every(okItem) && typeof v.tail_from === "string") return null;
  return "boundary whose head_diff is not a list of messages and references with a head_from and a tail_from uuid";
}

/** The full head a diff stands for, or null when it names a message or block the base does not have. */
export function applyHeadDiff(diff: readonly HeadDiffItem[], base: readonly Message[]): Message[] | null {
  const out: Message[] = [];
  for (const item of diff) {
    if (typeof item === "number") {
      const m = base[item];
      if (!m) return null;
      out.push(m);
      continue;
    }
    if (typeof item.content === "string") {
      out.push(item as Message);
      continue;
    }
    const content: ContentBlock[] = [];
    for (const b of item.content) {
      if (!Array.isArray(b)) {
        content.push(b);
        continue;
      }
      const from = base[b[0]]?.content;
      const block = Array.isArray(from) ? from[b[1]] : undefined;
      if (!block) return null;
      content.push(block);
    }
    out.push({ ...item, content } as Message);
  }
  return out;
}
