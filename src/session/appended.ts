// Reading a transcript as it grows: what a reader has covered of the file (its first `offset`
// bytes, whole lines), and whether the file on disk still starts with those bytes, so that only
// what was appended since needs reading. Used by recall's index and the viewer.
import { createHash } from "node:crypto";
import { type Stats, closeSync, openSync, readSync } from "node:fs";

/** What a reader covered of a file. */
export interface Covered {
  /** The file's size and mtime when last looked at. */
  size: number;
  mtimeMs: number;
  /** End of the last whole line read, and a hash of the bytes before it. */
  offset: number;
  tail: string;
}

/** Bytes before the covered end that must be unchanged for a reader to go on from there. */
const TAIL = 4096;

/** Bytes [from, to) of an open file (fewer at its end). */
export function readRange(fd: number, from: number, to: number): Buffer {
  const buf = Buffer.allocUnsafe(Math.max(0, to - from));
  let off = 0;
  while (off < buf.length) {
    const n = readSync(fd, buf, off, buf.length - off, from + off);
    if (n === 0) break;
    off += n;
  }
  return buf.subarray(0, off);
}

/** Bytes [from, to) of the file at `path`. */
export function readFileRange(path: string, from: number, to: number): Buffer {
  const fd = openSync(path, "r");
  try {
    return readRange(fd, from, to);
  } finally {
    closeSync(fd);
  }
}

/** The hash of the bytes before `offset` that `stillCovers` compares. */
export function tailHash(path: string, offset: number): string {
  return createHash("sha1").update(readFileRange(path, Math.max(0, offset - TAIL), offset)).digest("hex");
}

/**
 * Whether the file still starts with what `c` covered: the same size and mtime, or grown (or only
 * touched) with the bytes before the covered end unchanged. A shorter file, or one rewritten
 * before that end, is not.
 */
export function stillCovers(c: Covered, st: Stats, path: string): boolean {
  if (st.size === c.size && st.mtimeMs === c.mtimeMs) return true;
  return st.size >= c.size && (c.offset === 0 || tailHash(path, c.offset) === c.tail);
}

/** The whole lines of `bytes` (the text before its last newline) and how many bytes they take. */
export function wholeLines(bytes: Buffer): { text: string; end: number } {
  const end = bytes.lastIndexOf(0x0a) + 1;
  return { text: bytes.toString("utf8", 0, end), end };
}

/**
 * The whole lines of `bytes`: line k is bytes [starts[k], starts[k + 1] - 1), the last entry of
 * `starts` is where the whole lines end, and `at(k)` decodes line k alone. (Decoded one at a time as
 * they are parsed, lines are collected young; most are ASCII and become compact strings, where one
 * string for the whole text would be two bytes a character as soon as one is not.)
 */
export function splitLines(bytes: Buffer): { length: number; at(k: number): string; starts: number[]; end: number } {
  const starts: number[] = [0];
  for (let nl = bytes.indexOf(0x0a); nl >= 0; nl = bytes.indexOf(0x0a, nl + 1)) starts.push(nl + 1);
  const end = starts[starts.length - 1]!;
  return { length: starts.length - 1, at: (k) => bytes.toString("utf8", starts[k], starts[k + 1]! - 1), starts, end };
}
