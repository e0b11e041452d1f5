// Where sessions live on disk:
//
//   <workspace>/.lethe/.gitignore                        "*" (the whole folder stays out of git)
//   <workspace>/.lethe/sessions/<session-id>/transcript.jsonl
//   <workspace>/.lethe/sessions/<session-id>/tool-results/<tool_use_id>.txt
//   <workspace>/.lethe/sessions/<session-id>/recall-index.dat             (./recall-index.ts)
//
// Session ids sort by creation time (UTC, fixed width) and end in a random part, using only
// filename-safe characters: 20250314-101502-123-9f86d081e2.
import { LetheError } from "../errors.ts";
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { join, resolve } from "node:path";
import type { Message } from "../messages/types.ts";
import { clippedLine } from "../messages/one-line.ts";
import { loadTranscript, parseTranscript } from "./transcript.ts";
import { SessionStorageError, storageError } from "./storage-error.ts";

export { SessionStorageError };

/** lethe's folder in a workspace. */
export const LETHE_DIR = ".lethe";
export const SESSIONS_DIR = "sessions";
export const TRANSCRIPT_FILE = "transcript.jsonl";
/** A session's folder of saved tool results. */
export const TOOL_RESULTS_DIR = "tool-results";

export interface SessionPaths {
  id: string;
  /** <workspace>/.lethe/sessions/<id> */
  dir: string;
  /** <dir>/transcript.jsonl */
  transcript: string;
  /** <dir>/tool-results */
  toolResults: string;
}

/** One session of a workspace, as listed for --resume. */
export interface SessionSummary extends SessionPaths {
  /** The first thing the user typed, on one line, shortened (empty when none yet). */
  preview: string;
  /** Message lines in the transcript (latestSession reads only the first lines: a lower bound there). */
  messageCount: number;
  /** Last modification of the transcript (of the folder when there is no transcript yet). */
  lastModified: Date;
  /** From the header, when there is one. */
  created?: string;
  model?: string;
}

/** Thrown for an id that names no session (or an unsafe id). The message is one line. */
export class SessionNotFoundError extends LetheError {
  constructor(message: string, readonly id: string) {
    super("session_not_found", message);
  }
}

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** True for ids that are safe as one path segment (no separators, no leading dot). */
export function isValidSessionId(id: string): boolean {
  return ID_RE.test(id);
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** A new session id: UTC time to the millisecond, then 10 random hex digits. */
export function newSessionId(now: number = Date.now()): string {
  const d = new Date(now);
  const date = `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
  return `${date}-${time}-${pad(d.getUTCMilliseconds(), 3)}-${randomBytes(5).toString("hex")}`;
}

/** A workspace's .lethe folder. */
export function letheDir(workspace: string): string {
  return join(resolve(workspace), LETHE_DIR);
}

/** A workspace's sessions folder. */
export function sessionsRoot(workspace: string): string {
  return join(letheDir(workspace), SESSIONS_DIR);
}

/** The paths of session `id` (nothing is created or checked on disk). Throws on an unsafe id. */
export function sessionPaths(workspace: string, id: string): SessionPaths {
  if (!isValidSessionId(id)) {
    throw new SessionNotFoundError(`lethe: ${JSON.stringify(id)} is not a valid session id`, id);
  }
  const dir = join(sessionsRoot(workspace), id);
  return { id, dir, transcript: join(dir, TRANSCRIPT_FILE), toolResults: join(dir, TOOL_RESULTS_DIR) };
}

/** Creates <workspace>/.lethe/ and its .gitignore ("*") when missing; returns the folder. */
export function ensureLetheDir(workspace: string): string {
  const dir = letheDir(workspace);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw storageError(dir, err, workspace);
  }
  try {
    // "wx": never overwrite a .gitignore someone already has (or is writing right now).
    writeFileSync(join(dir, ".gitignore"), "*\n", { flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw storageError(dir, err, workspace);
  }
  return dir;
}

/** Creates a session folder (and tool-results/ in it); the transcript is created by openTranscript. */
export function createSessionDir(workspace: string, id: string = newSessionId()): SessionPaths {
  ensureLetheDir(workspace);
  const paths = sessionPaths(workspace, id);
  try {
    mkdirSync(paths.toolResults, { recursive: true });
  } catch (err) {
    throw storageError(paths.dir, err, workspace);
  }
  return paths;
}

function sessionIds(workspace: string): string[] {
  let names: string[];
  try {
    names = readdirSync(sessionsRoot(workspace));
  } catch {
    return [];
  }
  return names.filter((n) => {
    if (!isValidSessionId(n)) return false;
    try {
      return statSync(join(sessionsRoot(workspace), n)).isDirectory();
    } catch {
      return false;
    }
  });
}

function firstUserText(message: Message): string | null {
  if (message.role !== "user") return null;
  if (typeof message.content === "string") return message.content;
  const texts = message.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text);
  return texts.length > 0 ? texts.join(" ") : null;
}

const PREVIEW_CHARS = 80;

const oneLine = (text: string): string => clippedLine(text, PREVIEW_CHARS, "…");

function summarize(paths: SessionPaths): SessionSummary {
  let lastModified: Date;
  try {
    lastModified = statSync(paths.transcript).mtime;
  } catch {
    return { ...paths, preview: "", messageCount: 0, lastModified: statSync(paths.dir).mtime };
  }
  let preview = "";
  let messageCount = 0;
  let created: string | undefined;
  let model: string | undefined;
  try {
    const t = loadTranscript(paths.transcript);
    created = t.header?.created;
    model = t.header?.model;
    for (const e of t.entries) {
      if (e.type !== "message") continue;
      messageCount++;
      if (preview === "") {
        const text = firstUserText(e.message);
        if (text !== null && text.trim() !== "") preview = oneLine(text);
      }
    }
  } catch {
    // Unreadable transcript: still listed, with what the file system knows.
  }
  return {
    ...paths,
    preview,
    messageCount,
    lastModified,
    ...(created !== undefined ? { created } : {}),
    ...(model !== undefined ? { model } : {}),
  };
}

/** Every session of the workspace, most recently modified first. */
export function listSessions(workspace: string): SessionSummary[] {
  const out: SessionSummary[] = [];
  for (const id of sessionIds(workspace)) {
    try {
      out.push(summarize(sessionPaths(workspace, id)));
    } catch {
      // Vanished while listing.
    }
  }
  return out.sort((a, b) => b.lastModified.getTime() - a.lastModified.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/**
 * The most recently modified session that holds at least one message (for --continue). Picks by
 * the transcripts' modification times and reads each candidate only up to its first message: a
 * workspace of long sessions is not parsed whole to find the newest.
 */
export function latestSession(workspace: string): SessionSummary | undefined {
  const candidates = sessionIds(workspace)
    .map((id) => sessionPaths(workspace, id))
    .flatMap((p) => {
      try {
        return [{ p, mtime: statSync(p.transcript).mtime }];
      } catch {
        return [];
      }
    })
    .sort((a, b) => b.mtime.getTime() - a.mtime.getTime() || (a.p.id < b.p.id ? 1 : a.p.id > b.p.id ? -1 : 0));
  for (const { p, mtime } of candidates) {
    const head = firstMessages(p.transcript);
    if (head && head.messageCount > 0) return { ...p, ...head, lastModified: mtime };
  }
  return undefined;
}

/** How far latestSession reads a transcript for its preview (the first user text). */
const PREVIEW_LOOK_MESSAGES = 50;
const PREVIEW_LOOK_BYTES = 4 << 20;

/** Header fields and the first user text of a transcript, reading only its first lines (messageCount: those seen). */
function firstMessages(path: string): { preview: string; messageCount: number; created?: string; model?: string } | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    let created: string | undefined, model: string | undefined;
    let pending = "";
    let pos = 0;
    let count = 0;
    const done = (preview: string) => ({ preview, messageCount: count, ...(created !== undefined ? { created } : {}), ...(model !== undefined ? { model } : {}) });
    const buf = Buffer.alloc(256 * 1024);
    const decoder = new StringDecoder("utf8");
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      const eof = n === 0;
      pos += n;
      const lines = (pending + (eof ? decoder.end() : decoder.write(buf.subarray(0, n)))).split("\n");
      pending = eof ? "" : lines.pop()!;
      for (const line of lines) {
        if (line.trim() === "") continue;
        const t = parseTranscript(line, path);
        if (t.header) (created = t.header.created), (model = t.header.model);
        const m = t.entries[0];
        if (m?.type !== "message") continue;
        count++;
        const first = firstUserText(m.message);
        if ((first !== null && first.trim() !== "") || count >= PREVIEW_LOOK_MESSAGES) return done(first && first.trim() ? oneLine(first) : "");
      }
      if (eof || pos >= PREVIEW_LOOK_BYTES) return done("");
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The session named by `id`, or by a prefix of exactly one session's id (for --resume).
 * Throws SessionNotFoundError with a one-line message otherwise.
 */
export function resolveSession(workspace: string, id: string): SessionPaths {
  const root = sessionsRoot(workspace);
  const trimmed = id.trim();
  if (!isValidSessionId(trimmed)) {
    throw new SessionNotFoundError(`lethe: ${JSON.stringify(id)} is not a valid session id`, id);
  }
  const ids = sessionIds(workspace);
  if (ids.includes(trimmed)) return sessionPaths(workspace, trimmed);
  const matches = ids.filter((n) => n.startsWith(trimmed));
  if (matches.length === 1) return sessionPaths(workspace, matches[0] as string);
  if (matches.length > 1) {
    throw new SessionNotFoundError(
      `lethe: session id ${JSON.stringify(trimmed)} is ambiguous (${matches.length} sessions start with it); give more of it`,
      id,
    );
  }
  const newest = [...ids].sort().pop();
  const hint = ids.length === 0 ? "there are no sessions yet" : `${ids.length} session(s) exist, the newest is ${newest}`;
  throw new SessionNotFoundError(`lethe: no session ${JSON.stringify(trimmed)} in ${root} (${hint})`, id);
}
