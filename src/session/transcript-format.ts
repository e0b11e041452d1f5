// The transcript format: its line types, version and event names (written by transcript.ts,
// read by transcript-read.ts).
import type { CompactionKind } from "../compaction/types.ts";
import type { Message } from "../messages/types.ts";
import type { HeadDiffItem, HeadRef } from "./transcript-heads.ts";

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
  /**
   * A snip's resume point, instead of a whole history: the context's messages before the kept
   * tail (`head`, its last one carrying the boundary note), and the uuid of the transcript
   * message the kept tail starts at (`tail_from`). Resume = head + every message from it on.
   */
  head?: Message[];
  tail_from?: string;
  /** On a boundary whose `head` later boundaries refer to (./transcript-heads.ts). */
  head_id?: string;
  /**
   * On disk only: a head written as a diff against an earlier full one (`head_from` names it by
   * head_id and byte offset). Reading rebuilds `head` and drops these two.
   */
  head_from?: HeadRef;
  head_diff?: HeadDiffItem[];
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


/** An event listing message uuids taken out of the context (kept in the file, skipped on resume). */
export const RETRACTED_EVENT = "retracted";
/** The event line written after every model call (model, tokens reported and estimated, cache, output, cost, latency, stop reason). */
export const REQUEST_EVENT = "request";
