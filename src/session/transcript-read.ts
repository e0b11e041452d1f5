// Reading a transcript back: parse (never throws; a torn last line is a warning, a damaged line
// in the middle an error naming its number), load, and the context a resume starts from.
import { readFileSync } from "node:fs";
import type { Message } from "../messages/types.ts";
import { type HeadDiffItem, type HeadRef, applyHeadDiff, headDiffProblem } from "./transcript-heads.ts";
import { type MessageIndex, fullRemoved } from "./transcript-removed.ts";
import { type BoundaryEntry, type LoadedTranscript, type MessageEntry, RETRACTED_EVENT, type SessionHeader, TORN_TAIL_EVENT, TRANSCRIPT_VERSION, type TranscriptEntry } from "./transcript-format.ts";

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

const isBlock = (b: unknown) => isObject(b) && typeof (b as { type?: unknown }).type === "string";

/** Removes a message's non-object content blocks, in place; returns how many. */
function fixBlocks(m: Message): number {
  if (!Array.isArray(m.content) || (m.content as unknown[]).every(isBlock)) return 0;
  const kept = (m.content as unknown[]).filter(isBlock);
  const n = m.content.length - kept.length;
  (m as { content: unknown }).content = kept;
  return n;
}

/** Removes non-object content blocks from an entry's message(s), in place; returns how many. */
function dropBadBlocks(entry: Record<string, unknown>): number {
  let n = 0;
  if (isMessage(entry.message)) n += fixBlocks(entry.message);
  if (Array.isArray(entry.history)) for (const m of entry.history) if (isMessage(m)) n += fixBlocks(m);
  if (Array.isArray(entry.head)) for (const m of entry.head) if (isMessage(m)) n += fixBlocks(m);
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
      if (v.head !== undefined && !(Array.isArray(v.head) && v.head.every(isMessage) && typeof v.tail_from === "string")) {
        return "boundary whose head is not a list of messages with a tail_from uuid";
      }
      if (v.head_diff !== undefined || v.head_from !== undefined) return v.head === undefined ? headDiffProblem(v) : "boundary with both a head and a head_diff";
      return null;
    default:
      return null;
  }
}

function preview(line: string): string {
  const s = line.length > 60 ? `${line.slice(0, 60)}…` : line;
  return JSON.stringify(s);
}

export interface ParseOptions {
  /**
   * Full snip heads by head_id: read to rebuild a later boundary's head from its diff, added to as
   * full heads are parsed. Pass the same map to parse a file in pieces, in order.
   */
  heads?: Map<string, Message[]>;
  /** Reads a head the text does not hold (a diff's base before the part parsed), or undefined. */
  readHead?: (ref: HeadRef) => Message[] | undefined;
  /**
   * The file's text at bytes [at, end), or undefined: a snip boundary's removed lines that were
   * not parsed before it (./transcript-removed.ts). Without it they are looked for among the
   * lines parsed so far only.
   */
  readBytes?: (at: number, end: number) => string | undefined;
  /**
   * Given each entry and its line's index (0-based) instead of collecting them in `entries`: a
   * reader that keeps a little of each lets the rest be collected young.
   */
  each?: (entry: TranscriptEntry, line: number) => void;
}

/**
 * A snip boundary as the writer was given it: a head written as a diff gets its full `head` back
 * (from `heads` or `readHead`). Returns the base's id when it cannot be found (else null).
 */
function fullHead(b: Record<string, unknown>, opts: ParseOptions, heads: Map<string, Message[]>): string | null {
  if (Array.isArray(b.head) && typeof b.head_id === "string") heads.set(b.head_id, b.head as Message[]);
  if (b.head_diff === undefined) return null;
  const from = b.head_from as HeadRef;
  let base = heads.get(from.id);
  if (!base && (base = opts.readHead?.(from))) heads.set(from.id, base);
  const head = base && applyHeadDiff(b.head_diff as HeadDiffItem[], base);
  delete b.head_diff;
  delete b.head_from;
  if (!head) return from.id;
  b.head = head;
  return null;
}

/** Parses transcript text (the whole file). Never throws. */
export function parseTranscript(text: string, source = "transcript", opts: ParseOptions = {}): LoadedTranscript {
  const lines = text.split("\n");
  // The text after the last newline is "" for a well-terminated file, else an unterminated tail.
  if (lines[lines.length - 1] === "") lines.pop();
  return parseLines(lines, source, opts);
}

/**
 * Parses a transcript's lines (without their newlines; the last may be unterminated), given as a
 * list or as their count and a function that reads line i (a reader can then decode each line only
 * when it is parsed). Never throws.
 */
export function parseLines(lines: readonly string[] | { length: number; at(i: number): string }, source = "transcript", opts: ParseOptions = {}): LoadedTranscript {
  const heads = opts.heads ?? new Map<string, Message[]>();
  const out: LoadedTranscript = { header: null, entries: [], warnings: [], errors: [] };
  const keep = opts.each ?? ((e: TranscriptEntry) => out.entries.push(e));
  // The message lines so far, for snip boundaries that name the lines they removed (not kept by a
  // reader that keeps a little of each entry: it gives their whole form up).
  const known: MessageIndex | undefined = opts.each ? undefined : { list: [], at: new Map() };
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

  const lineAt = Array.isArray(lines) ? (i: number) => (lines as readonly string[])[i]! : (i: number) => lines.at(i)!;
  for (let i = 0; i < lines.length; i++) {
    const line = lineAt(i);
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
        const missing = value.type === "boundary" ? fullHead(value, opts, heads) : null;
        if (missing !== null) out.warnings.push(`${source}:${lineNo}: this snip boundary's head is a diff against head ${JSON.stringify(missing)}, not found; kept as a record only`);
        const lost = value.type === "boundary" ? fullRemoved(value, known, opts.readBytes) : null;
        if (lost !== null) out.warnings.push(`${source}:${lineNo}: ${lost}`);
        if (known && value.type === "message") {
          known.at.set(value.uuid as string, known.list.length);
          known.list.push({ uuid: value.uuid as string, message: value.message as Message });
        }
        keep(value as TranscriptEntry, i);
        break;
      }
      case "event":
        keep(value as TranscriptEntry, i);
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
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw unreadable(path, err);
  }
  // A snip boundary's removed lines are found among the lines before it, or (a file damaged there) at the bytes it names.
  return parseTranscript(bytes.toString("utf8"), path, { readBytes: (at, end) => (end <= bytes.length ? bytes.toString("utf8", at, end) : undefined) });
}

/** The one-line error for a transcript that cannot be opened or read. */
export function unreadable(path: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  return new Error(code === "ENOENT" ? `lethe: no transcript at ${path}` : `lethe: cannot read transcript ${path}: ${(err as Error).message}`);
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
 * The live context to resume with, from the last resume point: a boundary's rebuilt history
 * plus every message appended after it, or a snip's head plus every message from its tail's
 * first one on. Without a resume point, every message since the start. Boundaries without one
 * are records only (the engine re-applies those layers on the next prepare).
 */
export function resumeContext(entries: readonly TranscriptEntry[]): Message[] {
  // Messages a later event retracted (a refused turn) are not part of the context.
  const retracted = new Set<string>();
  for (const e of entries) if (e.type === "event" && e.name === RETRACTED_EVENT && Array.isArray(e.uuids)) for (const u of e.uuids) if (typeof u === "string") retracted.add(u);
  const messagesFrom = (start: number, out: Message[]): Message[] => {
    for (let i = start; i < entries.length; i++) {
      const e = entries[i] as TranscriptEntry;
      if (e.type === "message" && !retracted.has((e as MessageEntry).uuid)) out.push((e as MessageEntry).message);
    }
    return out;
  };
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i] as TranscriptEntry;
    if (e.type !== "boundary") continue;
    const b = e as BoundaryEntry;
    if (Array.isArray(b.history)) return messagesFrom(i + 1, [...b.history]);
    if (Array.isArray(b.head) && typeof b.tail_from === "string") {
      // The tail's first message was written before the boundary; if it is not in what was
      // read, an earlier resume point (or the start) stands.
      for (let j = i - 1; j >= 0; j--) {
        const m = entries[j] as TranscriptEntry;
        if (m.type === "message" && (m as MessageEntry).uuid === b.tail_from) return messagesFrom(j, [...b.head]);
      }
    }
  }
  return messagesFrom(0, []);
}

/** The message entries of a transcript, in order. */
export function messageEntries(entries: readonly TranscriptEntry[]): MessageEntry[] {
  return entries.filter((e): e is MessageEntry => e.type === "message");
}
