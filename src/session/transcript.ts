// The session transcript: append-only JSONL, one JSON object per line, each with a `type`.
//
//   {"type":"session", id, created, cwd, model?, version}            first line (header)
//   {"type":"message", uuid, ts, message}                             every message that enters the context
//   {"type":"boundary", ts, kind, tokens_before, tokens_after, ...}   a compaction (a snip's head is
//                                                                     written once: ./transcript-heads.ts)
//   {"type":"event", ts, name?, ...}                                  anything else (free-form)
//
// Write-ahead: `append` writes the whole line with one synchronous write() on a file opened
// with O_APPEND and returns only once the kernel has it, so the agent appends a message and
// only then sends it. A SIGKILL can therefore leave at most one torn line, the last one, and
// that line was never acknowledged. Loading skips such a torn last line with a warning; an
// unparseable line anywhere else is reported as an error (with its line number) and the rest
// still loads. Reopening a transcript whose last line is torn terminates the fragment and
// appends a `torn-tail` event right after it, so the fragment stays on disk (nothing is
// deleted) and later loads know it was a crash, not corruption.
import { LetheError } from "../errors.ts";
import { closeSync, fstatSync, fsyncSync, mkdirSync, openSync, readSync, writeSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { dirname } from "node:path";
import type { Message } from "../messages/types.ts";
import { LetheInputError, checkMessage } from "../messages/input.ts";
import { thrownText } from "../messages/input-values.ts";
import type { MessageLine } from "../compaction/state/boundary.ts";
import { headSharer } from "./transcript-heads.ts";
import { type BoundaryEntry, type EventEntry, type MessageEntry, type SessionHeader, TORN_TAIL_EVENT, TRANSCRIPT_VERSION, type TranscriptEntry, type TranscriptLine } from "./transcript-format.ts";

export * from "./transcript-format.ts";
export { lastRebuildIndex, loadTranscript, messageEntries, parseTranscript, resumeContext } from "./transcript-read.ts";

export interface TranscriptHeaderInit {
  id: string;
  cwd: string;
  model?: string;
  /** ISO time; defaults to now. */
  created?: string;
  [extra: string]: unknown;
}

export interface OpenTranscriptOptions {
  /** Written as the first line when the file is new or empty. */
  header?: TranscriptHeaderInit;
  /**
   * fsync after every append. Not needed to survive a killed process (the kernel already has
   * the bytes when write() returns); needed to survive a power loss. Default false.
   */
  fsync?: boolean;
  /** Clock for timestamps (ms since the epoch); injectable for tests. */
  now?: () => number;
}

/** An open transcript: append messages, boundaries and events. */
export interface TranscriptWriter {
  readonly path: string;
  /** Writes one entry as one line. Returns once the line is written; throws if it could not be. */
  append(entry: TranscriptEntry): void;
  /** Appends a message entry (uuid and ts filled in unless given) and returns it. */
  appendMessage(message: Message, opts?: { uuid?: string; ts?: string }): MessageEntry;
  /** The uuid a message was appended under (this writer, this process), so a boundary can name what it removed. */
  uuidOf?(message: Message): string | undefined;
  /**
   * The line a message was appended as by this writer (uuid, its place among the message lines
   * it wrote, its bytes in the file): a snip's boundary then names the lines it removed as runs
   * (RemovedLines), which readers expand. A writer without it gets every uuid and result listed.
   */
  lineOf?(message: Message): MessageLine | undefined;
  /**
   * Entries read back from this transcript (a resumed session's, loadTranscript's): uuidOf knows
   * their message objects from now on, so a boundary that later removes one of them names its line.
   */
  adoptLines?(entries: readonly TranscriptEntry[]): void;
  /** Appends a compaction boundary (ts filled in unless given) and returns it. */
  appendBoundary(boundary: Omit<BoundaryEntry, "type" | "ts"> & { ts?: string }): BoundaryEntry;
  /**
   * Runs `write` (which appends lines through this writer) later: before the next line anything
   * else appends, at close, or when the event loop next turns (while the request it follows is on
   * its way), whichever comes first, so lines stay in order. A cheap layer's boundary line is a
   * record, not context: the engine hands it here so that writing it does not delay the request.
   * An error it throws is thrown by the next append or close. A writer without it is called now.
   */
  defer?(write: () => void): void;
  /** Appends a free-form event and returns it. */
  appendEvent(name: string, data?: Record<string, unknown>): EventEntry;
  close(): void;
}

/** Message entries' objects → their lines' uuids (TranscriptWriter.adoptLines). */
export function adoptLines(uuids: WeakMap<object, string>, entries: readonly TranscriptEntry[]): void {
  if (!Array.isArray(entries)) throw new LetheInputError("transcript.adoptLines", "takes the list of entries read back (loadTranscript(path).entries)");
  for (const e of entries) {
    if (e?.type !== "message") continue;
    const m = (e as MessageEntry).message as unknown;
    if (typeof m === "object" && m !== null && typeof (e as MessageEntry).uuid === "string") uuids.set(m, (e as MessageEntry).uuid);
  }
}

/** The one-line serialisation of an entry (JSON escapes every newline inside strings). */
export function serializeEntry(entry: TranscriptLine): string {
  return serializeWith(entry, () => `${JSON.stringify(entry)}\n`);
}

/** `write()`'s text, or a LetheInputError naming the entry's type (nothing half written). */
function serializeWith<T extends string | undefined>(entry: { type: string }, write: () => T): T {
  try {
    return write();
  } catch (e) {
    // A caller's message holding a BigInt, a cycle or a throwing toJSON: nothing half written.
    throw new LetheInputError("transcript", `cannot write this ${entry.type} as JSON: ${thrownText(e)}`);
  }
}

/**
 * serializeEntry of `{...entry, ...tail}` where `tail`'s values are already JSON (`tail` lists
 * [key, JSON] pairs, none of them a key of `entry`): a snip head's JSON comes from what the diff
 * wrote already, and is not written again.
 */
function serializeEntryWith(entry: TranscriptLine, tail: readonly [string, string][]): string {
  return serializeWith(entry, () => {
    const json = JSON.stringify(entry);
    return `${json.slice(0, -1)}${tail.map(([k, v]) => `,${JSON.stringify(k)}:${v}`).join("")}}\n`;
  });
}

/** A writer's first message lines whose JSON it keeps for snip heads (a head is snip.keepHead messages, 3 by default). */
const HEAD_MESSAGES = 8;

/** Does the file at `fd` (of `size` bytes) end in the middle of a line? */
function endsTorn(fd: number, size: number): boolean {
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

/** Writes all of `text`; returns its bytes. */
function writeAll(fd: number, text: string): number {
  // One write() for the whole line, straight from the string (no Buffer copy of a boundary's tens
  // of kB); loop only if the kernel took less (it does not for regular files short of a full
  // disk or a fatal signal).
  const bytes = Buffer.byteLength(text, "utf8");
  const n = writeSync(fd, text);
  if (n >= bytes) return bytes;
  const buf = Buffer.from(text, "utf8");
  let off = n;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  return bytes;
}

/**
 * Lines a writer was asked to write later (TranscriptWriter.defer), in order: `settle` writes them
 * (the writer calls it before each line and at close) and then throws the first error one threw,
 * here or on a turn of the event loop that wrote them with nobody to throw to.
 */
function deferredLines(): { defer(write: () => void): void; settle(): void } {
  let deferred: (() => void)[] = [];
  let failed: { error: unknown } | undefined;
  let settling = false;
  const run = (): void => {
    // A deferred write appends through the writer, which settles first: not again from inside.
    if (settling || deferred.length === 0) return;
    settling = true;
    try {
      while (deferred.length > 0) {
        const todo = deferred;
        deferred = [];
        for (const write of todo) {
          try {
            write();
          } catch (error) {
            failed ??= { error };
          }
        }
      }
    } finally {
      settling = false;
    }
  };
  return {
    defer(write) {
      if (deferred.length === 0) setImmediate(run);
      deferred.push(write);
    },
    settle() {
      if (settling) return;
      run();
      const f = failed;
      failed = undefined;
      if (f) throw f.error;
    },
  };
}

/**
 * Opens (creating it and its folder if needed) a transcript for appending.
 * A new or empty file gets `opts.header` as its first line.
 */
export class TranscriptVersionError extends LetheError {
  constructor(readonly path: string, readonly found: number) {
    super("transcript_version", `lethe: ${path} was written by a newer lethe (transcript format ${found}; this one writes ${TRANSCRIPT_VERSION}); not appending to it — update lethe, or start a new session`);
  }
}

/** The format version in the header line of an open transcript (undefined if it has none). */
function headerVersion(fd: number): number | undefined {
  const buf = Buffer.alloc(64 * 1024);
  const n = readSync(fd, buf, 0, buf.length, 0);
  const first = buf.subarray(0, n).toString("utf8").split("\n")[0] ?? "";
  try {
    const v = JSON.parse(first) as { type?: unknown; version?: unknown };
    return v.type === "session" && typeof v.version === "number" ? v.version : undefined;
  } catch {
    return undefined;
  }
}

/** A new transcript's first line. */
function sessionHeader(init: TranscriptHeaderInit, iso: () => string): SessionHeader {
  const { id, cwd, model, created, ...extra } = init;
  return { type: "session", id, created: created ?? iso(), cwd, ...(model !== undefined ? { model } : {}), version: TRANSCRIPT_VERSION, ...extra };
}

/** Opens (or creates) a transcript for appending; refuses a file written by a newer format (TranscriptVersionError). */
export function openTranscript(path: string, opts: OpenTranscriptOptions = {}): TranscriptWriter {
  const now = opts.now ?? Date.now;
  const iso = () => new Date(now()).toISOString();
  mkdirSync(dirname(path), { recursive: true });
  let fd: number | null = openSync(path, "a+");
  const size = fstatSync(fd).size;
  // A newer lethe's transcript: appending this version's lines could make it unreadable to that one.
  const newer = size > 0 ? headerVersion(fd) : undefined;
  if (newer !== undefined && newer > TRANSCRIPT_VERSION) {
    closeSync(fd);
    fd = null;
    throw new TranscriptVersionError(path, newer);
  }
  // A crash may have left a torn last line; terminate it before writing anything new so the
  // new line is not glued onto the fragment.
  let torn = endsTorn(fd, size);
  // Where the file ends: O_APPEND and one writer (the session lock), so what was there plus what
  // this writer wrote; unknown (-1) after a failed write, then asked of the file.
  let end = size;

  /** Writes one line; returns the byte offset it starts at when `where` (else -1). */
  const write = (entry: TranscriptLine, where = false): number => writeLine(serializeEntry(entry), where);
  /** Writes one serialised line (serializeEntry's); returns the byte offset it starts at when `where` (else -1). */
  const writeLine = (line: string, where = false): number => {
    if (fd === null) throw new Error(`lethe: transcript ${path} is closed`);
    let text = line;
    let prefix = "";
    if (torn) {
      const note: EventEntry = {
        type: "event",
        ts: iso(),
        name: TORN_TAIL_EVENT,
        note: "the line above was cut short by a crash before it was acknowledged",
      };
      prefix = `\n${serializeEntry(note)}`;
      text = `${prefix}${text}`;
    }
    // O_APPEND and one writer (the session lock): the line lands at the current end of the file.
    if (where && end < 0) end = fstatSync(fd).size;
    const at = where ? end + Buffer.byteLength(prefix) : -1;
    try {
      const bytes = writeAll(fd, text);
      if (end >= 0) end += bytes;
    } catch (err) {
      // A partial write may have left a fragment: terminate it on the next append.
      torn = true;
      end = -1;
      throw err;
    }
    torn = false;
    if (opts.fsync) fsyncSync(fd);
    return at;
  };

  if (size === 0 && opts.header) write(sessionHeader(opts.header, iso));

  // Message object → its line's uuid (weakly: a message nobody holds any more is forgotten), and
  // for the lines this writer wrote, where they are (lineOf).
  const uuids = new WeakMap<object, string>();
  const lines = new WeakMap<object, MessageLine>();
  // Snip heads: each written once, later ones as a diff against it (./transcript-heads.ts).
  const heads = headSharer();
  // Message lines this writer has written (the first HEAD_MESSAGES keep their JSON, above).
  let written = 0;
  const later = deferredLines();
  const settle = later.settle;
  return {
    path,
    defer(write) {
      if (typeof write !== "function") throw new LetheInputError("transcript.defer", "takes a function that writes lines");
      if (fd === null) throw new Error(`lethe: transcript ${path} is closed`);
      later.defer(write);
    },
    append(entry) {
      settle();
      if (!entry || typeof entry !== "object" || typeof (entry as { type?: unknown }).type !== "string") {
        throw new Error("lethe: a transcript entry needs a string `type`");
      }
      write(entry);
    },
    appendMessage(message, o = {}) {
      // What the engine would refuse is refused here too (a system role mid-history, a block
      // without a type): a line a resume would have to drop is never written.
      checkMessage(message, "transcript: message");
      settle();
      const entry: MessageEntry = { type: "message", uuid: o.uuid ?? randomUUID(), ts: o.ts ?? iso(), message };
      // The first messages are the context's head until a summary: their JSON is kept for the
      // snip boundaries that write that head (the first in full), and written here from it.
      const json = written < HEAD_MESSAGES ? serializeWith(entry, () => heads.messageJson(message)) : undefined;
      const { message: _m, ...line } = entry;
      const at = writeLine(json === undefined ? serializeEntry(entry) : serializeEntryWith(line as TranscriptLine, [["message", json]]), true);
      if (typeof message === "object" && message !== null) {
        uuids.set(message, entry.uuid);
        if (end >= 0) lines.set(message, { uuid: entry.uuid, ord: written, at, end });
      }
      written++;
      return entry;
    },
    uuidOf: (message) => uuids.get(message),
    lineOf: (message) => lines.get(message),
    adoptLines(entries) {
      adoptLines(uuids, entries);
    },
    appendBoundary(b) {
      settle();
      const { ts, ...rest } = b;
      const entry = { type: "boundary", ts: ts ?? iso(), ...rest } as BoundaryEntry;
      const head = entry.head;
      if (!Array.isArray(head) || typeof entry.tail_from !== "string") {
        write(entry);
        return entry;
      }
      const diff = heads.diff(head);
      if (diff) {
        const { head: _full, tail_from, ...record } = entry;
        // The line is {...record, head_from, head_diff, tail_from}; head_diff's JSON is the diff's.
        if ("head_from" in record || "head_diff" in record) write({ ...record, head_from: diff.head_from, head_diff: diff.head_diff, tail_from });
        else writeLine(serializeEntryWith({ ...record, head_from: diff.head_from } as BoundaryEntry, [["head_diff", diff.text], ["tail_from", JSON.stringify(tail_from)]]));
        return entry;
      }
      const based = { ...entry, head_id: heads.newId() };
      // The line is {...others, head, tail_from, head_id} (in this order when `b` ends with head
      // and tail_from, as a snip's boundary does); the head's JSON is joined from the JSON the
      // sharer keeps per message and block (the diff above wrote most of it).
      const keys = Object.keys(based);
      const { head: _head, tail_from, head_id, ...others } = based;
      const last = keys.slice(-3).join();
      const line = last === "head,tail_from,head_id" ? serializeEntryWith(others as BoundaryEntry, [["head", heads.text(head)], ["tail_from", JSON.stringify(tail_from)], ["head_id", JSON.stringify(head_id)]]) : serializeEntry(based);
      heads.rebase({ id: based.head_id, at: writeLine(line, true) }, head);
      return based;
    },
    appendEvent(name, data = {}) {
      settle();
      const entry: EventEntry = { type: "event", ts: iso(), name, ...data };
      write(entry);
      return entry;
    },
    close() {
      try {
        if (fd !== null) settle();
      } finally {
        if (fd !== null) {
          closeSync(fd);
          fd = null;
        }
      }
    },
  };
}
