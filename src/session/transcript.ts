// The session transcript: append-only JSONL, one JSON object per line, each with a `type`.
//
//   {"type":"session", id, created, cwd, model?, version}            first line (header)
//   {"type":"message", uuid, ts, message}                             every message that enters the context
//   {"type":"boundary", ts, kind, tokens_before, tokens_after, ...}   a compaction
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
import type { CompactionKind } from "../compaction/types.ts";
import { closeSync, fstatSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { dirname } from "node:path";
import type { Message } from "../messages/types.ts";

/** Format version written in the header. Readers accept this version and older. */
export const TRANSCRIPT_VERSION = 1;

/** The event name the writer uses to mark a torn line it found when reopening. */
export const TORN_TAIL_EVENT = "torn-tail";

export interface SessionHeader {
  type: "session";
  id: string;
  /** ISO 8601 time the session was created. */
  created: string;
  cwd: string;
  model?: string;
  /** Transcript format version (TRANSCRIPT_VERSION). */
  version: number;
  [extra: string]: unknown;
}

export interface MessageEntry {
  type: "message";
  uuid: string;
  /** ISO 8601 time of the append. */
  ts: string;
  message: Message;
  [extra: string]: unknown;
}

/** A compaction's kind; older or newer files may hold others, kept as they are. */
export type BoundaryKind = CompactionKind | (string & {});

export interface BoundaryEntry {
  type: "boundary";
  ts: string;
  kind: BoundaryKind;
  tokens_before: number;
  tokens_after: number;
  /**
   * The rebuilt history: the messages that replaced the whole context at this point.
   * When present, resume starts from it; when absent the boundary is a record only.
   */
  history?: Message[];
  /** The summary text (human-readable; the messages themselves are in `history`). */
  summary?: string;
  details?: unknown;
  [extra: string]: unknown;
}

export interface EventEntry {
  type: "event";
  ts?: string;
  name?: string;
  [extra: string]: unknown;
}

/** One line of a transcript. */
export type TranscriptEntry = MessageEntry | BoundaryEntry | EventEntry;
export type TranscriptLine = SessionHeader | TranscriptEntry;

export interface LoadedTranscript {
  /** The first `session` line, or null when the file has none. */
  header: SessionHeader | null;
  /** Every other well-formed line, in file order. */
  entries: TranscriptEntry[];
  /** One-line notes that lose nothing acknowledged (a torn last line, an unknown type, …). */
  warnings: string[];
  /** One-line reports of damaged lines in the middle of the file (each names its line number). */
  errors: string[];
}

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
  /** Appends a compaction boundary (ts filled in unless given) and returns it. */
  appendBoundary(boundary: Omit<BoundaryEntry, "type" | "ts"> & { ts?: string }): BoundaryEntry;
  /** Appends a free-form event and returns it. */
  appendEvent(name: string, data?: Record<string, unknown>): EventEntry;
  close(): void;
}

/** The one-line serialisation of an entry (JSON escapes every newline inside strings). */
export function serializeEntry(entry: TranscriptLine): string {
  return `${JSON.stringify(entry)}\n`;
}

/** Does the file at `fd` (of `size` bytes) end in the middle of a line? */
function endsTorn(fd: number, size: number): boolean {
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

function writeAll(fd: number, buf: Buffer): void {
  // One write() for the whole line; loop only if the kernel took less (it does not for
  // regular files short of a full disk or a fatal signal).
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
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

  const write = (entry: TranscriptLine): void => {
    if (fd === null) throw new Error(`lethe: transcript ${path} is closed`);
    let text = serializeEntry(entry);
    if (torn) {
      const note: EventEntry = {
        type: "event",
        ts: iso(),
        name: TORN_TAIL_EVENT,
        note: "the line above was cut short by a crash before it was acknowledged",
      };
      text = `\n${serializeEntry(note)}${text}`;
    }
    const buf = Buffer.from(text, "utf8");
    try {
      writeAll(fd, buf);
    } catch (err) {
      // A partial write may have left a fragment: terminate it on the next append.
      torn = true;
      throw err;
    }
    torn = false;
    if (opts.fsync) fsyncSync(fd);
  };

  if (size === 0 && opts.header) {
    const { id, cwd, model, created, ...extra } = opts.header;
    const header: SessionHeader = {
      type: "session",
      id,
      created: created ?? iso(),
      cwd,
      ...(model !== undefined ? { model } : {}),
      version: TRANSCRIPT_VERSION,
      ...extra,
    };
    write(header);
  }

  // Message object → its line's uuid (weakly: a message nobody holds any more is forgotten).
  const uuids = new WeakMap<object, string>();
  return {
    path,
    append(entry) {
      if (!entry || typeof entry !== "object" || typeof (entry as { type?: unknown }).type !== "string") {
        throw new Error("lethe: a transcript entry needs a string `type`");
      }
      write(entry);
    },
    appendMessage(message, o = {}) {
      const entry: MessageEntry = { type: "message", uuid: o.uuid ?? randomUUID(), ts: o.ts ?? iso(), message };
      write(entry);
      if (typeof message === "object" && message !== null) uuids.set(message, entry.uuid);
      return entry;
    },
    uuidOf(message) {
      return uuids.get(message);
    },
    appendBoundary(b) {
      const { ts, ...rest } = b;
      const entry = { type: "boundary", ts: ts ?? iso(), ...rest } as BoundaryEntry;
      write(entry);
      return entry;
    },
    appendEvent(name, data = {}) {
      const entry: EventEntry = { type: "event", ts: iso(), name, ...data };
      write(entry);
      return entry;
    },
    close() {
      if (fd !== null) {
        closeSync(fd);
        fd = null;
      }
    },
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isMessage(v: unknown): v is Message {
  return (
    isObject(v) &&
    (v.role === "user" || v.role === "assistant") &&
    (typeof v.content === "string" || Array.isArray(v.content))
  );
}

/** Removes non-object content blocks from an entry's message(s), in place; returns how many. */
function dropBadBlocks(entry: Record<string, unknown>): number {
  let n = 0;
  const fix = (m: Message) => {
    if (!Array.isArray(m.content)) return;
    const kept = (m.content as unknown[]).filter((b) => isObject(b) && typeof (b as { type?: unknown }).type === "string");
    n += m.content.length - kept.length;
    if (kept.length !== m.content.length) (m as { content: unknown }).content = kept;
  };
  if (isMessage(entry.message)) fix(entry.message);
  if (Array.isArray(entry.history)) for (const m of entry.history) if (isMessage(m)) fix(m);
  return n;
}

/** Why a parsed line is not a usable entry, or null when it is. */
function shapeProblem(v: Record<string, unknown>): string | null {
  switch (v.type) {
    case "session":
      return typeof v.id === "string" ? null : "session header without an id";
    case "message":
      if (typeof v.uuid !== "string") return "message without a uuid";
      return isMessage(v.message) ? null : "message entry without a valid message";
    case "boundary":
      if (typeof v.kind !== "string") return "boundary without a kind";
      if (v.history !== undefined && !(Array.isArray(v.history) && v.history.every(isMessage))) {
        return "boundary whose history is not a list of messages";
      }
      return null;
    default:
      return null;
  }
}

function preview(line: string): string {
  const s = line.length > 60 ? `${line.slice(0, 60)}…` : line;
  return JSON.stringify(s);
}

/** Parses transcript text (the whole file). Never throws. */
export function parseTranscript(text: string, source = "transcript"): LoadedTranscript {
  const out: LoadedTranscript = { header: null, entries: [], warnings: [], errors: [] };
  const lines = text.split("\n");
  // The text after the last newline is "" for a well-terminated file, else an unterminated tail.
  if (lines[lines.length - 1] === "") lines.pop();
  let pendingBad: { lineNo: number; line: string } | null = null;
  const flushBad = (asTorn: boolean) => {
    if (!pendingBad) return;
    const { lineNo, line } = pendingBad;
    if (asTorn) {
      out.warnings.push(`${source}:${lineNo}: skipped a torn line left by a crash (${line.length} chars, never acknowledged)`);
    } else {
      out.errors.push(`${source}:${lineNo}: unparseable line skipped: ${preview(line)}`);
    }
    pendingBad = null;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const lineNo = i + 1;
    if (line.trim() === "") {
      flushBad(false);
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      flushBad(false);
      pendingBad = { lineNo, line };
      continue;
    }
    if (!isObject(value) || typeof value.type !== "string") {
      flushBad(false);
      out.errors.push(`${source}:${lineNo}: line is not an object with a string "type"; skipped`);
      continue;
    }
    // A bad line right before the writer's torn-tail marker was a crash, not corruption.
    flushBad(value.type === "event" && value.name === TORN_TAIL_EVENT);
    const problem = shapeProblem(value);
    if (problem) {
      out.errors.push(`${source}:${lineNo}: ${problem}; skipped`);
      continue;
    }
    switch (value.type) {
      case "session":
        if (out.header === null && out.entries.length === 0) {
          out.header = value as SessionHeader;
          if (typeof value.version === "number" && value.version > TRANSCRIPT_VERSION) {
            out.warnings.push(`${source}:${lineNo}: transcript format version ${value.version} is newer than this reader (${TRANSCRIPT_VERSION})`);
          }
        } else {
          out.warnings.push(`${source}:${lineNo}: extra session header ignored`);
        }
        break;
      case "message":
      case "boundary": {
        // A block that is not an object (null, a number) would make the session impossible to
        // resume: every later step reads `block.type`. Leave it out, and say so.
        const dropped = dropBadBlocks(value);
        if (dropped > 0) out.warnings.push(`${source}:${lineNo}: ${dropped} content block(s) that were not objects left out`);
        out.entries.push(value as TranscriptEntry);
        break;
      }
      case "event":
        out.entries.push(value as TranscriptEntry);
        break;
      default:
        out.warnings.push(`${source}:${lineNo}: unknown entry type ${JSON.stringify(value.type)} skipped`);
    }
  }
  // An unparseable last line is the torn write of a killed process.
  flushBad(true);
  return out;
}

/**
 * Loads a transcript. A torn last line becomes a warning; damaged lines elsewhere become
 * errors with their line numbers; neither throws. Throws (one line) only when the file
 * cannot be read at all.
 */
export function loadTranscript(path: string): LoadedTranscript {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code === "ENOENT" ? `lethe: no transcript at ${path}` : `lethe: cannot read transcript ${path}: ${(err as Error).message}`);
  }
  return parseTranscript(text, path);
}

/** Index of the last boundary that carries a rebuilt history, or -1. */
export function lastRebuildIndex(entries: readonly TranscriptEntry[]): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i] as TranscriptEntry;
    if (e.type === "boundary" && Array.isArray((e as BoundaryEntry).history)) return i;
  }
  return -1;
}

/**
 * The live context to resume with: the history of the last boundary that carries one, plus
 * every message appended after it; without such a boundary, every message since the start.
 * Boundaries without a history are records only (the engine re-applies those layers on the
 * next prepare).
 */
export function resumeContext(entries: readonly TranscriptEntry[]): Message[] {
  const from = lastRebuildIndex(entries);
  const out: Message[] = from >= 0 ? [...((entries[from] as BoundaryEntry).history as Message[])] : [];
  // Messages a later event retracted (a refused turn) are not part of the context.
  const retracted = new Set<string>();
  for (const e of entries) if (e.type === "event" && e.name === RETRACTED_EVENT && Array.isArray(e.uuids)) for (const u of e.uuids) if (typeof u === "string") retracted.add(u);
  for (let i = from + 1; i < entries.length; i++) {
    const e = entries[i] as TranscriptEntry;
    if (e.type === "message" && !retracted.has((e as MessageEntry).uuid)) out.push((e as MessageEntry).message);
  }
  return out;
}

/** An event listing message uuids taken out of the context (kept in the file, skipped on resume). */
export const RETRACTED_EVENT = "retracted";
/** The event line written after every model call (model, tokens reported and estimated, cache, output, cost, latency, stop reason). */
export const REQUEST_EVENT = "request";

/** The message entries of a transcript, in order. */
export function messageEntries(entries: readonly TranscriptEntry[]): MessageEntry[] {
  return entries.filter((e): e is MessageEntry => e.type === "message");
}
