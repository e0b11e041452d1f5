// What the two halves of recall (./recall-id.ts, ./recall-search.ts) share: the session's
// archive (transcript messages, tool calls and their original results, saved result files),
// messages rendered as text, and small text helpers.
import { type Stats, closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { resultText } from "../messages/blocks.ts";
import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from "../messages/types.ts";
import { isClearedPlaceholder, isPersistedMarker } from "../compaction/layers/markers.ts";
import { TOOL_RESULTS_DIR, TRANSCRIPT_FILE } from "./paths.ts";
import { resultFileName } from "./tool-results.ts";
import { type LoadedTranscript, type MessageEntry, type TranscriptEntry, parseTranscript } from "./transcript.ts";
import type { RecallError } from "./recall-types.ts";

// ───────────────────────── text helpers ─────────────────────────

export const fmt = (n: number) => n.toLocaleString("en-US");
export const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();
export const fail = (msg: string): RecallError => ({ kind: "error", text: `recall: ${oneLine(msg)}` });

/** Moves an index off the low half of a surrogate pair, so a slice never splits a character. */
export function charBoundary(text: string, i: number): number {
  if (i > 0 && i < text.length) {
    const c = text.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) {
      const p = text.charCodeAt(i - 1);
      if (p >= 0xd800 && p <= 0xdbff) return i - 1;
    }
  }
  return i;
}

// ───────────────────────── the archive ─────────────────────────

export interface Archive {
  dir: string;
  transcriptPath: string;
  toolResultsDir: string;
  transcript: LoadedTranscript;
  messages: MessageEntry[];
  /** tool_use id → the tool_use block. */
  uses: Map<string, ToolUseBlock>;
  /** tool_use id → the message entry and block holding its original result. */
  results: Map<string, { entry: MessageEntry; block: ToolResultBlock }>;
}

export function isPlaceholder(block: ToolResultBlock): boolean {
  const c = block.content;
  const text = typeof c === "string" ? c : Array.isArray(c) && c[0]?.type === "text" ? c[0].text : "";
  return isPersistedMarker(text) || isClearedPlaceholder(text);
}

export function blocks(m: Message): ContentBlock[] {
  return typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
}

/** Adds message entries to an archive's index (in file order). */
function indexMessages(a: Archive, entries: readonly TranscriptEntry[]): void {
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    a.messages.push(entry);
    for (const b of blocks(entry.message)) {
      if (b.type === "tool_use") {
        if (!a.uses.has(b.id)) a.uses.set(b.id, b as ToolUseBlock);
      } else if (b.type === "tool_result") {
        const block = b as ToolResultBlock;
        const seen = a.results.get(block.tool_use_id);
        // The original is the first occurrence that is not a marker left by a layer.
        if (!seen || (isPlaceholder(seen.block) && !isPlaceholder(block))) a.results.set(block.tool_use_id, { entry, block });
      }
    }
  }
}

/**
 * Archives already indexed, by transcript path: the transcript only grows, so a later recall
 * parses only the lines appended since (a 150 MB transcript is not re-read per query). A file
 * that shrank, was replaced or changed without growing is indexed again from the start.
 */
const indexed = new Map<string, { archive: Archive; offset: number; dev: number; ino: number; size: number; mtimeMs: number }>();
const MAX_INDEXED = 4;

function readRange(path: string, from: number, to: number): Buffer {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(to - from);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, from + off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off);
  } finally {
    closeSync(fd);
  }
}

/** Loads the session's transcript and indexes its tool calls and their original results. */
export function openArchive(dir: string): Archive | RecallError {
  if (!existsSync(dir)) return fail(`no session folder at ${dir}`);
  const transcriptPath = join(dir, TRANSCRIPT_FILE);
  const toolResultsDir = join(dir, TOOL_RESULTS_DIR);
  let st: Stats;
  try {
    st = statSync(transcriptPath);
  } catch {
    indexed.delete(transcriptPath);
    return { dir, transcriptPath, toolResultsDir, transcript: { header: null, entries: [], warnings: [], errors: [] }, messages: [], uses: new Map(), results: new Map() };
  }
  let c = indexed.get(transcriptPath);
  const same = c && c.dev === st.dev && c.ino === st.ino && (st.size > c.size || (st.size === c.size && st.mtimeMs === c.mtimeMs));
  if (!c || !same) {
    c = { archive: { dir, transcriptPath, toolResultsDir, transcript: { header: null, entries: [], warnings: [], errors: [] }, messages: [], uses: new Map(), results: new Map() }, offset: 0, dev: st.dev, ino: st.ino, size: 0, mtimeMs: 0 };
  }
  if (st.size > c.offset) {
    // Whole lines only: a line being written (or torn) is read once it is complete.
    const bytes = readRange(transcriptPath, c.offset, st.size);
    const end = bytes.lastIndexOf(0x0a) + 1;
    if (end > 0) {
      const part = parseTranscript(bytes.subarray(0, end).toString("utf8"), c.offset === 0 ? transcriptPath : `${transcriptPath} (from byte ${c.offset})`);
      const t = c.archive.transcript;
      t.header ??= part.header;
      for (const e of part.entries) t.entries.push(e);
      t.warnings.push(...part.warnings);
      t.errors.push(...part.errors);
      indexMessages(c.archive, part.entries);
      c.offset += end;
    }
  }
  c.size = st.size;
  c.mtimeMs = st.mtimeMs;
  indexed.delete(transcriptPath);
  indexed.set(transcriptPath, c);
  if (indexed.size > MAX_INDEXED) indexed.delete(indexed.keys().next().value!);
  return c.archive;
}

/** The saved full result of a tool call (tool-results/<id>.txt), or null. */
export function savedFile(a: Archive, toolUseId: string): string | null {
  const path = join(a.toolResultsDir, resultFileName(toolUseId));
  return existsSync(path) ? path : null;
}

// ───────────────────────── rendering ─────────────────────────

export interface Segment {
  start: number;
  end: number;
  use?: ToolUseBlock;
}

/** A message as readable text (tool results become one-line pointers to their own ids). */
export function renderMessage(m: Message): { text: string; segments: Segment[] } {
  const parts: { text: string; use?: ToolUseBlock }[] = [];
  for (const b of blocks(m)) {
    switch (b.type) {
      case "text":
        parts.push({ text: b.text });
        break;
      case "thinking":
        parts.push({ text: `[thinking]\n${b.thinking}` });
        break;
      case "redacted_thinking":
        parts.push({ text: "[redacted thinking]" });
        break;
      case "image":
        parts.push({ text: "[image]" });
        break;
      case "tool_use": {
        const u = b as ToolUseBlock;
        parts.push({ text: `[tool_use ${u.name} ${u.id}] ${JSON.stringify(u.input ?? null)}`, use: u });
        break;
      }
      case "tool_result": {
        const r = b as ToolResultBlock;
        const n = resultText(r.content).length;
        parts.push({ text: `[tool_result ${r.tool_use_id}${r.is_error ? " (error)" : ""}: ${fmt(n)} chars; recall id "${r.tool_use_id}"]` });
        break;
      }
      default:
        parts.push({ text: `[${(b as { type: string }).type}]` });
    }
  }
  let text = "";
  const segments: Segment[] = [];
  for (const [i, p] of parts.entries()) {
    if (i > 0) text += "\n\n";
    segments.push({ start: text.length, end: text.length + p.text.length, ...(p.use ? { use: p.use } : {}) });
    text += p.text;
  }
  return { text, segments };
}
