// Reading only the end of a transcript, for resume. A long session's file is hundreds of MB, and
// the live context is the last rebuilt history (or a snip's head and the messages from its tail
// on) plus what came after: read backwards until that point and parse only from there.
//
// Message lines are recognised by their prefix without being parsed (the writer puts `type`
// first), so the backward scan costs a byte search per line; only boundary lines are parsed.
// A file without a resumable boundary is read whole, as loadTranscript does.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { Message } from "../messages/types.ts";
import type { BoundaryEntry, LoadedTranscript } from "./transcript-format.ts";
import type { HeadRef } from "./transcript-heads.ts";
import { readAt } from "./transcript-scan.ts";
import { parseTranscript, unreadable } from "./transcript-read.ts";

const CHUNK = 1 << 20;
/** How far before a rebuild boundary a snip's tail message is looked for. */
const FALLBACK_LOOK = 16 << 20;
const MESSAGE_PREFIX = '{"type":"message"';
const EVENT_PREFIX = '{"type":"event"';
const MESSAGE_BYTES = Buffer.from(MESSAGE_PREFIX);

/** Where a resume can start: a boundary with a rebuilt history, or a snip's head whose tail starts at a message uuid. */
function resumePoint(line: string): { complete: true } | { tailFrom: string } | null {
  if (line.startsWith(MESSAGE_PREFIX) || line.startsWith(EVENT_PREFIX) || !line.includes('"boundary"')) return null;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  const b = v as { type?: unknown; history?: unknown; head?: unknown; head_diff?: unknown; tail_from?: unknown };
  if (b.type !== "boundary") return null;
  if (Array.isArray(b.history)) return { complete: true };
  // A head written as a diff is rebuilt when the tail is parsed (its base read by offset).
  if ((Array.isArray(b.head) || Array.isArray(b.head_diff)) && typeof b.tail_from === "string") return { tailFrom: b.tail_from };
  return null;
}

/**
 * Loads the part of a transcript a resume needs: the header, and every entry from the last
 * resumable boundary (or the message its tail starts at) on. `from` is the byte offset the
 * entries start at (0: the whole file was read). Errors and warnings name lines relative to it.
 */
export function loadTranscriptTail(path: string): LoadedTranscript & { from: number } {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw unreadable(path, err);
  }
  try {
    const size = fstatSync(fd).size;
    const start = scanBack(fd, size);
    if (start <= 0) {
      const whole = Buffer.alloc(size);
      readAll(fd, whole, 0);
      return { ...parseTranscript(whole.toString("utf8"), path), from: 0 };
    }
    const tail = Buffer.alloc(size - start);
    readAll(fd, tail, start);
    const headerLine = lineAt(fd, 0);
    const head = parseTranscript(headerLine, path);
    // A snip head written as a diff against one before `start`: its base is one line, read where
    // the boundary says it is. Not there (a file edited by hand): the whole file, in order, finds it.
    let lost = false;
    const readHead = (ref: HeadRef) => {
      const base = headAt(fd, ref);
      lost ||= !base;
      return base;
    };
    // A snip boundary's removed lines (before `start`) are not read: a resume needs its head only,
    // and they can be megabytes. Its `removed` stays as the runs it was written as.
    const rest = parseTranscript(tail.toString("utf8"), `${path} (from byte ${start})`, { readHead });
    if (lost) {
      const whole = Buffer.alloc(size);
      readAll(fd, whole, 0);
      return { ...parseTranscript(whole.toString("utf8"), path), from: 0 };
    }
    return { header: head.header, entries: rest.entries, warnings: rest.warnings, errors: rest.errors, from: start };
  } finally {
    closeSync(fd);
  }
}

function readAll(fd: number, buf: Buffer, position: number): void {
  readAt(fd, buf, position);
}

/** The full snip head of the boundary line at `ref.at`, if that line is the base `ref` names. */
function headAt(fd: number, ref: HeadRef): Message[] | undefined {
  const line = lineAt(fd, ref.at);
  if (!line.startsWith('{"type":"boundary"')) return undefined;
  const b = parseTranscript(line).entries[0] as BoundaryEntry | undefined;
  return b?.type === "boundary" && b.head_id === ref.id && Array.isArray(b.head) ? b.head : undefined;
}

/** The line that starts at byte `pos` (with its newline). */
function lineAt(fd: number, pos: number): string {
  const chunks: Buffer[] = [];
  for (;;) {
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buf, 0, buf.length, pos);
    if (n === 0) break;
    const nl = buf.subarray(0, n).indexOf(0x0a);
    if (nl >= 0) {
      chunks.push(buf.subarray(0, nl + 1));
      break;
    }
    chunks.push(buf.subarray(0, n));
    pos += n;
  }
  return Buffer.concat(chunks).toString("utf8");
}

function uuidOfLine(line: Buffer): unknown {
  try {
    return (JSON.parse(line.toString("utf8")) as { uuid?: unknown }).uuid;
  } catch {
    return undefined;
  }
}

/** Byte offset of the line a resume starts from, or 0 when the whole file is needed. */
function scanBack(fd: number, size: number): number {
  let end = size; // bytes [end, size) are already scanned
  const carryParts: Buffer[] = []; // the rest of a line whose beginning is in an earlier chunk
  let wanted = ""; // the uuid of the snip tail's first message
  let wantedNeedle: Buffer | null = null; // `"uuid":"…"`: a cheap test before parsing the line
  let fallback = -1; // a rebuild boundary passed while looking for that message
  while (end > 0) {
    const from = Math.max(0, end - CHUNK);
    const chunk = Buffer.alloc(end - from);
    readAll(fd, chunk, from);
    // A chunk inside one long line (a large boundary) waits with the rest of that line: joining
    // it on every chunk would copy the line once per megabyte.
    if (from > 0 && chunk.indexOf(0x0a) < 0) {
      carryParts.unshift(chunk);
      end = from;
      continue;
    }
    const buf = carryParts.length ? Buffer.concat([chunk, ...carryParts]) : chunk;
    carryParts.length = 0;
    // Lines wholly inside buf: each ends at a newline (or at the end of the file).
    let lineEnd = buf.length;
    let nl = buf.lastIndexOf(0x0a, lineEnd - 1);
    while (nl >= 0 || from === 0) {
      const lineStart = nl + 1;
      if (lineEnd > lineStart) {
        const isMessage = buf.compare(MESSAGE_BYTES, 0, MESSAGE_BYTES.length, lineStart, Math.min(lineEnd, lineStart + MESSAGE_BYTES.length)) === 0;
        if (wantedNeedle && isMessage) {
          // The needle may also sit inside the message (a tool input with a "uuid" key): only
          // the line whose own uuid it is counts.
          if (buf.subarray(lineStart, lineEnd).includes(wantedNeedle) && uuidOfLine(buf.subarray(lineStart, lineEnd)) === wanted) return from + lineStart;
        } else if (!isMessage && fallback < 0) {
          const point = resumePoint(buf.subarray(lineStart, lineEnd).toString("utf8"));
          if (point && "complete" in point) {
            if (!wantedNeedle) return from + lineStart;
            // A snip's tail may start among the rounds this rebuild kept (written before it):
            // look a little further, then settle for the rebuild.
            fallback = from + lineStart;
          } else if (point && !wantedNeedle) {
            wanted = point.tailFrom;
            wantedNeedle = Buffer.from(`"uuid":${JSON.stringify(wanted)}`);
          }
        }
      }
      if (nl < 0) break;
      lineEnd = nl;
      nl = nl > 0 ? buf.lastIndexOf(0x0a, nl - 1) : -1;
    }
    // What precedes the first newline of buf continues into the previous chunk.
    const firstNl = buf.indexOf(0x0a);
    carryParts.push(firstNl >= 0 ? buf.subarray(0, firstNl) : buf);
    if (from === 0 || (fallback >= 0 && fallback - from > FALLBACK_LOOK)) break;
    end = from;
  }
  return Math.max(0, fallback);
}
