// Reading a few lines of a long transcript without parsing all of it: a resume wants the last
// request line (its model and window) and the sum of the request lines' costs, and a 50k-message
// transcript is tens of MB. Lines are found by a byte marker (Buffer.indexOf), and only the lines
// holding it are turned into strings and parsed.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

const NL = 0x0a;
/** Bytes read at a time. */
export const SCAN_CHUNK = 1 << 20;

/** Fills `buf` from `position` (fewer bytes at the end of the file); returns how many were read. */
export function readAt(fd: number, buf: Buffer, position: number): number {
  let off = 0;
  while (off < buf.length) {
    const n = readSync(fd, buf, off, buf.length - off, position + off);
    if (n === 0) break;
    off += n;
  }
  return off;
}

/** What a scan read: bytes read from the file. */
export interface ScanStats {
  bytesRead: number;
}

/**
 * Calls `onLine` with every line of the file at `path` that holds `marker`, first to last (a torn
 * last line included, as it is). A file that cannot be read has no lines.
 */
export function linesWith(path: string, marker: string, onLine: (line: string) => void, chunk = SCAN_CHUNK): ScanStats {
  const needle = Buffer.from(marker, "utf8");
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return { bytesRead: 0 };
  }
  let bytesRead = 0;
  try {
    const size = fstatSync(fd).size;
    // The start of a line whose end is not read yet, in parts: a line longer than a chunk is
    // joined once, when it ends, not once per chunk.
    let pending: Buffer[] = [];
    for (let pos = 0; pos < size; ) {
      const read = Buffer.alloc(Math.min(chunk, size - pos));
      const n = readAt(fd, read, pos);
      if (n === 0) break;
      pos += n;
      bytesRead += n;
      const part = read.subarray(0, n);
      if (pos < size && part.indexOf(NL) < 0) {
        pending.push(part);
        continue;
      }
      const buf = pending.length ? Buffer.concat([...pending, part]) : part;
      // Whole lines end at the last newline; the rest waits for the next chunk (or is the last line).
      const end = pos >= size ? buf.length : buf.lastIndexOf(NL) + 1;
      emit(buf, end, needle, onLine);
      pending = end < buf.length ? [Buffer.from(buf.subarray(end))] : [];
    }
    const rest = pending.length ? Buffer.concat(pending) : null;
    if (rest) emit(rest, rest.length, needle, onLine);
  } finally {
    closeSync(fd);
  }
  return { bytesRead };
}

/** The lines holding `needle` in buf[0, end). */
function emit(buf: Buffer, end: number, needle: Buffer, onLine: (line: string) => void): void {
  for (let at = buf.indexOf(needle, 0); at >= 0 && at < end; ) {
    const start = buf.lastIndexOf(NL, at) + 1;
    let stop = buf.indexOf(NL, at);
    if (stop < 0 || stop > end) stop = end;
    onLine(buf.toString("utf8", start, stop));
    at = stop + 1 < end ? buf.indexOf(needle, stop + 1) : -1;
  }
}

/**
 * The last line of the file at `path` that holds `marker` and that `accept` takes, reading from
 * the end (undefined: none, or the file cannot be read).
 */
export function lastLineWith(path: string, marker: string, accept: (line: string) => boolean, chunk = SCAN_CHUNK): { line: string | undefined } & ScanStats {
  const needle = Buffer.from(marker, "utf8");
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return { line: undefined, bytesRead: 0 };
  }
  let bytesRead = 0;
  try {
    let end = fstatSync(fd).size;
    // The end of a line whose start is in an earlier chunk, in parts: a line longer than a chunk
    // is joined once, when its start is read, not once per chunk.
    let carry: Buffer[] = [];
    while (end > 0) {
      const from = Math.max(0, end - chunk);
      const part = Buffer.alloc(end - from);
      bytesRead += readAt(fd, part, from);
      if (from > 0 && part.indexOf(NL) < 0) {
        carry.unshift(part);
        end = from;
        continue;
      }
      const buf = carry.length ? Buffer.concat([part, ...carry]) : part;
      // Lines wholly in buf start after its first newline (or at the file's start).
      const first = from === 0 ? 0 : buf.indexOf(NL) + 1;
      for (let at = buf.lastIndexOf(needle); at >= first; ) {
        const start = Math.max(first, buf.lastIndexOf(NL, at) + 1);
        let stop = buf.indexOf(NL, at);
        if (stop < 0) stop = buf.length;
        const line = buf.toString("utf8", start, stop);
        if (accept(line)) return { line, bytesRead };
        at = start - 1 >= first ? buf.lastIndexOf(needle, start - 1) : -1;
      }
      carry = first > 0 ? [Buffer.from(buf.subarray(0, first))] : [];
      end = from;
    }
  } finally {
    closeSync(fd);
  }
  return { line: undefined, bytesRead };
}
