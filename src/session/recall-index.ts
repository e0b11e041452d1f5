// recall's index of a session, kept beside its transcript (<session>/recall-index.dat), so that a
// new process (a CLI run, the viewer) does not parse and render a long transcript again before its
// first query: on a 50,000-message session that was seconds, against a tenth of that for a query.
//
//   line 1   {"format":"lethe-recall-index","version":1,"meta":<bytes of the meta JSON>}
//   then     the meta JSON: which transcript bytes it covers (size, mtime, the end of the last
//            whole line indexed, a hash of the bytes before that end), damaged lines skipped
//   then     the archive's columns (./recall-archive.ts), each as ./recall-columns.ts encodes it:
//            the messages' uuid, ts, text, role, segments; the results' msg, id, text,
//            placeholder, original, file, tool
//
// The transcript only grows: an index whose covered bytes are still the file's first bytes (same
// hash) is extended with the lines appended since; anything else (another file, a shorter one, an
// index of another version) is rebuilt from the transcript. Written atomically (temp + rename),
// and not after every line: a new process indexes what the file on disk does not cover.
import { type Stats, closeSync, existsSync, fstatSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Covered, readFileRange, readRange, stillCovers, tailHash, wholeLines } from "./appended.ts";
import { type Archive, emptyArchive, fail, indexEntries } from "./recall-archive.ts";
import { type ByteSource, IndexDamaged, IntColumn, StringColumn } from "./recall-columns.ts";
import type { RecallError } from "./recall-types.ts";
import { writeFileAtomic } from "./tool-results.ts";
import { parseTranscript } from "./transcript-read.ts";

export const RECALL_INDEX_FILE = "recall-index.dat";
const FORMAT = "lethe-recall-index";
/** Bump when the index's layout or what it holds changes: an index of another version is rebuilt. */
const VERSION = 2;
/** The file on disk is rewritten once what it misses is this large, or an eighth of what it covers. */
const SAVE_AFTER = 4 << 20;
const MAX_CACHED = 4;

interface Cached {
  archive: Archive;
  /** What the archive covers of the transcript. */
  key: Covered;
  /** How far the file on disk covers (-1: not at all, or not ours to trust). */
  saved: number;
  /** Writing failed (a read-only folder): not tried again in this process. */
  unwritable?: boolean;
}

/** Archives already indexed in this process, by transcript path. */
const cached = new Map<string, Cached>();
const stats = { loads: 0, parsedBytes: 0, saves: 0 };

/** What this process did: indexes loaded from disk, transcript bytes parsed, indexes written (for tests and benchmarks). */
export function recallIndexStats(): { loads: number; parsedBytes: number; saves: number } {
  return { ...stats };
}

/** Indexes the whole lines appended since `c.key.offset` (a line still being written waits). */
function extend(c: Cached, path: string, size: number): void {
  const { text, end } = wholeLines(readFileRange(path, c.key.offset, size));
  if (end === 0) return;
  const part = parseTranscript(text, c.key.offset === 0 ? path : `${path} (from byte ${c.key.offset})`);
  c.archive.damaged += part.errors.length;
  indexEntries(c.archive, part.entries);
  stats.parsedBytes += end;
  c.key.offset += end;
  c.key.tail = tailHash(path, c.key.offset);
}

const MESSAGE_COLUMNS = ["uuid", "ts", "text", "role", "segments"] as const;
const RESULT_COLUMNS = ["msg", "id", "text", "placeholder", "original", "file", "tool"] as const;

function serialize(c: Cached): Buffer {
  const { messages, results } = c.archive;
  const meta = JSON.stringify({ key: c.key, damaged: c.archive.damaged });
  const head = Buffer.from(`${JSON.stringify({ format: FORMAT, version: VERSION, meta: Buffer.byteLength(meta) })}\n${meta}`);
  return Buffer.concat([head, ...MESSAGE_COLUMNS.flatMap((k) => messages[k].encode()), ...RESULT_COLUMNS.flatMap((k) => results[k].encode())]);
}

/** The bytes of an open file from `pos` on, in order (./recall-columns.ts reads its columns from it). */
function fileSource(fd: number, pos: number, size: number): ByteSource & { readonly pos: number } {
  let scratch = Buffer.alloc(0);
  const fill = (buf: Buffer, n: number) => {
    if (!Number.isInteger(n) || n < 0 || pos + n > size) throw new IndexDamaged();
    for (let off = 0; off < n; ) {
      const got = readSync(fd, buf, off, n - off, pos + off);
      if (got === 0) throw new IndexDamaged();
      off += got;
    }
    pos += n;
  };
  return {
    get pos() {
      return pos;
    },
    take(n) {
      const buf = Buffer.allocUnsafe(n);
      fill(buf, n);
      return buf;
    },
    // One buffer for every page: fresh memory for each would cost more than the read itself.
    text(bytes, encoding) {
      if (scratch.length < bytes) scratch = Buffer.allocUnsafe(bytes);
      fill(scratch, bytes);
      return scratch.toString(encoding, 0, bytes);
    },
  };
}

/** The index on disk, if it is this version's and still describes the transcript; else null. */
function load(dir: string, path: string, st: Stats): Cached | null {
  let fd: number;
  try {
    fd = openSync(join(dir, RECALL_INDEX_FILE), "r");
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    const first = readRange(fd, 0, Math.min(size, 4096));
    const nl = first.indexOf(0x0a);
    const head = JSON.parse(first.toString("utf8", 0, nl)) as { format?: unknown; version?: unknown; meta?: unknown };
    if (head.format !== FORMAT || head.version !== VERSION || typeof head.meta !== "number") return null;
    const src = fileSource(fd, nl + 1, size);
    const meta = JSON.parse(src.take(head.meta).toString("utf8")) as { key: Covered; damaged: number };
    if (!stillCovers(meta.key, st, path)) return null;
    const messages = { uuid: StringColumn.decode(src), ts: StringColumn.decode(src), text: StringColumn.decode(src), role: IntColumn.decode(src), segments: StringColumn.decode(src) };
    const results = { msg: IntColumn.decode(src), id: StringColumn.decode(src), text: StringColumn.decode(src), placeholder: IntColumn.decode(src), original: IntColumn.decode(src), file: StringColumn.decode(src), tool: StringColumn.decode(src) };
    const n = messages.uuid.length, k = results.id.length;
    if (src.pos !== size || MESSAGE_COLUMNS.some((c) => messages[c].length !== n) || RESULT_COLUMNS.some((c) => results[c].length !== k)) return null;
    const a = emptyArchive(dir, { messages, results });
    a.damaged = meta.damaged;
    stats.loads++;
    return { archive: a, key: meta.key, saved: meta.key.offset };
  } catch {
    return null; // damaged or cut short: rebuilt
  } finally {
    closeSync(fd);
  }
}

function save(c: Cached, dir: string): void {
  const behind = c.key.offset - Math.max(0, c.saved);
  if (c.unwritable || c.key.offset === 0 || behind === 0 || (c.saved >= 0 && behind < Math.max(SAVE_AFTER, c.saved / 8))) return;
  try {
    writeFileAtomic(join(dir, RECALL_INDEX_FILE), serialize(c));
    c.saved = c.key.offset;
    stats.saves++;
  } catch {
    c.unwritable = true; // a read-only or full disk: recall still works from memory
  }
}

/**
 * Runs `use` on the session's archive; an index found damaged while in use (a value that does not
 * fit its column) is dropped, from memory and disk, and the archive built again from the transcript.
 */
export function withArchive<T>(dir: string, use: (a: Archive) => T): T | RecallError {
  for (let attempt = 0; ; attempt++) {
    const a = openArchive(dir);
    if ("kind" in a) return a;
    try {
      return use(a);
    } catch (e) {
      if (!(e instanceof IndexDamaged) || attempt > 0) throw e;
      cached.delete(a.transcriptPath);
      rmSync(join(dir, RECALL_INDEX_FILE), { force: true });
    }
  }
}

/** The session's archive: from memory, else from its index on disk, else from the transcript; extended with what was appended since. */
export function openArchive(dir: string): Archive | RecallError {
  if (!existsSync(dir)) return fail(`no session folder at ${dir}`);
  const path = emptyArchive(dir).transcriptPath;
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    cached.delete(path);
    return emptyArchive(dir);
  }
  let c = cached.get(path);
  if (!c || !stillCovers(c.key, st, path)) c = load(dir, path, st) ?? { archive: emptyArchive(dir), key: { size: 0, mtimeMs: 0, offset: 0, tail: "" }, saved: -1 };
  if (st.size > c.key.offset) extend(c, path, st.size);
  c.key.size = st.size;
  c.key.mtimeMs = st.mtimeMs;
  save(c, dir);
  cached.delete(path);
  cached.set(path, c);
  if (cached.size > MAX_CACHED) cached.delete(cached.keys().next().value!);
  return c.archive;
}
