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

/** A diff is written only when it is at most this share of the full head's bytes (else a new base). */
const DIFF_SHARE = 0.4;
/** What a reference costs in the line, in bytes (for the choice above). */
const REF_BYTES = 8;

interface Base {
  ref: HeadRef;
  messages: Map<string, number>;
  blocks: Map<string, [number, number]>;
}

/** A new base's id: unique within one transcript is enough. */
export function newHeadId(): string {
  return randomBytes(6).toString("hex");
}

/** The writer's side: remembers the last base it wrote and diffs each new head against it. */
export function headSharer() {
  let base: Base | null = null;
  return {
    /** The diff of `head` against the base, or null when it should be written in full (a new base). */
    diff(head: readonly Message[]): { head_from: HeadRef; head_diff: HeadDiffItem[] } | null {
      if (!base) return null;
      const b = base;
      let full = 0, written = 0;
      const diff = head.map((m): HeadDiffItem => {
        const whole = JSON.stringify(m);
        full += whole.length;
        const j = b.messages.get(whole);
        if (j !== undefined) return (written += REF_BYTES), j;
        if (!Array.isArray(m.content)) return (written += whole.length), m;
        let blockBytes = 0;
        const content = m.content.map((block) => {
          const text = JSON.stringify(block);
          blockBytes += text.length;
          const at = b.blocks.get(text);
          written += at ? REF_BYTES : text.length;
          return at ?? block;
        });
        written += whole.length - blockBytes; // the message's own keys
        return { ...m, content };
      });
      return written <= DIFF_SHARE * full ? { head_from: { ...b.ref }, head_diff: diff } : null;
    },
    /** `head` was written in full, as base `ref`. */
    rebase(ref: HeadRef, head: readonly Message[]): void {
      const messages = new Map<string, number>();
      const blocks = new Map<string, [number, number]>();
      head.forEach((m, j) => {
        const whole = JSON.stringify(m);
        if (!messages.has(whole)) messages.set(whole, j);
        if (!Array.isArray(m.content)) return;
        m.content.forEach((block, k) => {
          const text = JSON.stringify(block);
          if (!blocks.has(text)) blocks.set(text, [j, k]);
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
