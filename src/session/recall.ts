// recall: the model reads back what left its context, from the session's transcript and
// tool-results/ folder, always in bounded pieces.
//
//   recall(dir, { id })     a tool_use id → the full original result (tool-results/<id>.txt, else
//                           the transcript's tool_result); a message uuid → that message as text.
//                           One slice (≤ 8,000 chars by default) of it; offset/limit count chars,
//                           or lines with unit "lines"; offsets start at 0. The answer says the
//                           total size and the exact call that gets the next slice.
//   recall(dir, { query })  case-insensitive substring, or a regex written /like this/; over
//                           message text, tool inputs, tool results and saved files. At most 20
//                           hits and 8,000 chars, newest first, each naming the id (and the char
//                           offset) to fetch the whole with.
//
// Never throws: every failure is a one-line text starting with "recall:".
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { resultText } from "../messages/blocks.ts";
import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from "../messages/types.ts";
import { isClearedPlaceholder, isPersistedMarker } from "../compaction/markers.ts";
import { TOOL_RESULTS_DIR, TRANSCRIPT_FILE } from "./paths.ts";
import { resultFileName } from "./tool-results.ts";
import { type LoadedTranscript, type MessageEntry, loadTranscript } from "./transcript.ts";

export const RECALL_MAX_CHARS = 8_000;
export const RECALL_MAX_HITS = 20;
/** Characters of context shown on each side of a search match. */
export const RECALL_CONTEXT_CHARS = 80;
/** Hits shown per item before "N more in this item". */
const HITS_PER_ITEM = 3;
/** Room kept for a search answer's header line. */
const HEADER_ROOM = 400;

export type RecallUnit = "chars" | "lines";

export interface RecallOptions {
  /** A tool_use id (or its saved file name) or a message uuid. Takes precedence over query. */
  id?: string;
  /** Case-insensitive substring, or /regex/flags. */
  query?: string;
  /** Where the slice starts (0-based), in `unit`s. Default 0. */
  offset?: number;
  /** How many `unit`s to return. Chars: at most maxChars (the default). Lines: as many as fit in maxChars. */
  limit?: number;
  /** Default "chars". */
  unit?: RecallUnit;
  /** Bound on a slice's content and on a search answer's text. Default 8,000. */
  maxChars?: number;
  /** Bound on search hits. Default 20. */
  maxHits?: number;
}

export type RecallSource = "tool-result-file" | "tool_result" | "message" | "tool_use";

export interface RecallSlice {
  kind: "slice";
  id: string;
  source: RecallSource;
  /** The file the text came from (the saved result, or the transcript). */
  path: string;
  unit: RecallUnit;
  /** Slice bounds [offset, end) in `unit`s, and the item's total size in `unit`s. */
  offset: number;
  end: number;
  total: number;
  /** Offset of the next slice, or null at the end. */
  next: number | null;
  /** The sliced text itself (≤ maxChars). */
  content: string;
  /** The whole answer for the model: a header line, the content, a footer line. */
  text: string;
}

export interface RecallHit {
  /** What to pass as `id` to read the whole item. */
  id: string;
  source: RecallSource;
  role?: "user" | "assistant";
  /** The tool's name (tool results and tool inputs). */
  tool?: string;
  /** The tool_use id, when the match is inside a tool call's input. */
  toolUseId?: string;
  ts?: string;
  /** Char offset of the match in the item (usable as `offset` with the id). */
  at: number;
  /** Size of the item in chars. */
  total: number;
  snippet: string;
}

export interface RecallSearch {
  kind: "search";
  query: string;
  hits: RecallHit[];
  /** Every match found, shown or not. */
  totalMatches: number;
  /** True when matches were left out to stay within maxHits / maxChars. */
  truncated: boolean;
  text: string;
}

export interface RecallError {
  kind: "error";
  text: string;
}

export type RecallResult = RecallSlice | RecallSearch | RecallError;

const fmt = (n: number) => n.toLocaleString("en-US");
const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();
const fail = (msg: string): RecallError => ({ kind: "error", text: `recall: ${oneLine(msg)}` });

// ───────────────────────── the archive ─────────────────────────

interface Archive {
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

function isPlaceholder(block: ToolResultBlock): boolean {
  const c = block.content;
  const text = typeof c === "string" ? c : Array.isArray(c) && c[0]?.type === "text" ? c[0].text : "";
  return isPersistedMarker(text) || isClearedPlaceholder(text);
}

function blocks(m: Message): ContentBlock[] {
  return typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
}

function openArchive(dir: string): Archive | RecallError {
  if (!existsSync(dir)) return fail(`no session folder at ${dir}`);
  const transcriptPath = join(dir, TRANSCRIPT_FILE);
  const toolResultsDir = join(dir, TOOL_RESULTS_DIR);
  const transcript: LoadedTranscript = existsSync(transcriptPath)
    ? loadTranscript(transcriptPath)
    : { header: null, entries: [], warnings: [], errors: [] };
  const messages = transcript.entries.filter((e): e is MessageEntry => e.type === "message");
  const uses = new Map<string, ToolUseBlock>();
  const results = new Map<string, { entry: MessageEntry; block: ToolResultBlock }>();
  for (const entry of messages) {
    for (const b of blocks(entry.message)) {
      if (b.type === "tool_use") {
        if (!uses.has(b.id)) uses.set(b.id, b as ToolUseBlock);
      } else if (b.type === "tool_result") {
        const block = b as ToolResultBlock;
        const seen = results.get(block.tool_use_id);
        // The original is the first occurrence that is not a marker left by a layer.
        if (!seen || (isPlaceholder(seen.block) && !isPlaceholder(block))) results.set(block.tool_use_id, { entry, block });
      }
    }
  }
  return { dir, transcriptPath, toolResultsDir, transcript, messages, uses, results };
}

function savedFile(a: Archive, toolUseId: string): string | null {
  const path = join(a.toolResultsDir, resultFileName(toolUseId));
  return existsSync(path) ? path : null;
}

// ───────────────────────── rendering ─────────────────────────

interface Segment {
  start: number;
  end: number;
  use?: ToolUseBlock;
}

/** A message as readable text (tool results become one-line pointers to their own ids). */
function renderMessage(m: Message): { text: string; segments: Segment[] } {
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

// ───────────────────────── by id ─────────────────────────

interface Doc {
  id: string;
  source: RecallSource;
  path: string;
  label: string;
  text: string;
}

function findDoc(a: Archive, rawId: string): Doc | null {
  const candidates = [rawId];
  const base = basename(rawId);
  if (base !== rawId) candidates.push(base);
  for (const c of [...candidates]) if (c.endsWith(".txt")) candidates.push(c.slice(0, -4));

  for (const id of candidates) {
    const file = savedFile(a, id);
    if (file) {
      const tool = a.uses.get(id)?.name;
      return { id, source: "tool-result-file", path: file, label: `full tool result${tool ? ` of ${tool}` : ""}`, text: readFileSync(file, "utf8") };
    }
    const r = a.results.get(id);
    if (r) {
      const tool = a.uses.get(id)?.name;
      return {
        id,
        source: "tool_result",
        path: a.transcriptPath,
        label: `tool result${tool ? ` of ${tool}` : ""} from the transcript`,
        text: resultText(r.block.content),
      };
    }
    const m = a.messages.find((e) => e.uuid === id);
    if (m) {
      return { id, source: "message", path: a.transcriptPath, label: `${m.message.role} message of ${m.ts}`, text: renderMessage(m.message).text };
    }
    const u = a.uses.get(id);
    if (u) {
      return { id, source: "tool_use", path: a.transcriptPath, label: `tool call ${u.name} (no result recorded)`, text: JSON.stringify(u.input ?? null, null, 2) };
    }
  }
  return null;
}

/** Moves an index off the low half of a surrogate pair, so a slice never splits a character. */
function charBoundary(text: string, i: number): number {
  if (i > 0 && i < text.length) {
    const c = text.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) {
      const p = text.charCodeAt(i - 1);
      if (p >= 0xd800 && p <= 0xdbff) return i - 1;
    }
  }
  return i;
}

function sliceDoc(doc: Doc, opts: Required<Pick<RecallOptions, "offset" | "unit" | "maxChars">> & { limit?: number }): RecallSlice {
  const { unit, maxChars } = opts;
  const text = doc.text;
  let offset: number;
  let end: number;
  let total: number;
  let content: string;
  let next: number | null;
  let note = "";

  if (unit === "chars") {
    total = text.length;
    offset = charBoundary(text, Math.min(opts.offset, total));
    const limit = Math.min(opts.limit ?? maxChars, maxChars);
    end = charBoundary(text, Math.min(total, offset + limit));
    if (end === offset && offset < total) end = Math.min(total, offset + 2); // a lone pair with limit 1
    content = text.slice(offset, end);
    next = end < total ? end : null;
  } else {
    // Lines keep their "\n"; a file ending in "\n" has no extra empty line.
    const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
    total = lines.length;
    offset = Math.min(opts.offset, total);
    const want = opts.limit ?? Number.POSITIVE_INFINITY;
    content = "";
    end = offset;
    while (end < total && end - offset < want) {
      const line = lines[end] as string;
      if (content.length + line.length > maxChars) {
        if (end === offset) {
          // One line longer than the whole budget: show its start, continue by chars.
          const lineStart = lines.slice(0, end).reduce((n, l) => n + l.length, 0);
          const cut = charBoundary(line, maxChars);
          content = line.slice(0, cut);
          note = ` Line ${end} is ${fmt(line.length)} chars; continue it with recall id "${doc.id}" unit "chars" offset ${lineStart + cut}.`;
          end++;
        }
        break;
      }
      content += line;
      end++;
    }
    next = end < total ? end : null;
  }

  const span = total === 0 ? `empty (0 ${unit})` : `${unit} ${fmt(offset)}–${fmt(end)} of ${fmt(total)}`;
  const header = `[recall ${doc.id} · ${doc.label} · ${span} · ${doc.path}]`;
  const footer =
    next === null
      ? `[end of ${doc.id}.${note}]`
      : `[more: recall id "${doc.id}"${unit === "lines" ? ' unit "lines"' : ""} offset ${next} (${fmt(total - next)} ${unit} left).${note}]`;
  const body = content.endsWith("\n") || content === "" ? content : `${content}\n`;
  return {
    kind: "slice",
    id: doc.id,
    source: doc.source,
    path: doc.path,
    unit,
    offset,
    end,
    total,
    next,
    content,
    text: `${header}\n${body}${footer}`,
  };
}

// ───────────────────────── by query ─────────────────────────

function compileQuery(query: string): RegExp | string {
  const q = query.trim();
  if (q === "") return "give a non-empty query";
  const m = /^\/(.+)\/([a-z]*)$/s.exec(q);
  let re: RegExp;
  if (m) {
    const flags = new Set((m[2] as string).split("").filter((f) => "imsuv".includes(f)));
    flags.add("i");
    flags.add("g");
    try {
      re = new RegExp(m[1] as string, [...flags].join(""));
    } catch (err) {
      return `invalid regex ${q}: ${(err as Error).message}`;
    }
    if (re.test("")) return `the regex ${q} matches the empty string; make it more specific`;
    re.lastIndex = 0;
  } else {
    re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi");
  }
  return re;
}

interface Item {
  id: string;
  source: RecallSource;
  text: string;
  role?: "user" | "assistant";
  tool?: string;
  ts?: string;
  segments?: Segment[];
}

/** Items newest first: each message (as rendered), then the original results it carries; then orphan files. */
function* items(a: Archive): Generator<Item> {
  const fileIds = new Set<string>();
  for (let i = a.messages.length - 1; i >= 0; i--) {
    const entry = a.messages[i] as MessageEntry;
    const { text, segments } = renderMessage(entry.message);
    yield { id: entry.uuid, source: "message", text, role: entry.message.role, ts: entry.ts, segments };
    for (const b of blocks(entry.message)) {
      if (b.type !== "tool_result") continue;
      const r = b as ToolResultBlock;
      if (a.results.get(r.tool_use_id)?.block !== r) continue;
      const tool = a.uses.get(r.tool_use_id)?.name;
      const file = savedFile(a, r.tool_use_id);
      if (file) fileIds.add(basename(file));
      yield {
        id: r.tool_use_id,
        source: file ? "tool-result-file" : "tool_result",
        text: file ? readFileSync(file, "utf8") : resultText(r.content),
        ts: entry.ts,
        ...(tool ? { tool } : {}),
      };
    }
  }
  let files: { name: string; mtime: number }[] = [];
  try {
    files = readdirSync(a.toolResultsDir)
      .filter((n) => n.endsWith(".txt") && !fileIds.has(n))
      .map((name) => ({ name, mtime: statSync(join(a.toolResultsDir, name)).mtimeMs }))
      .sort((x, y) => y.mtime - x.mtime);
  } catch {
    // No tool-results/ folder.
  }
  for (const f of files) {
    yield { id: f.name.slice(0, -4), source: "tool-result-file", text: readFileSync(join(a.toolResultsDir, f.name), "utf8") };
  }
}

function snippet(text: string, at: number, len: number, ctx: number): string {
  const shown = Math.min(len, 200);
  const from = charBoundary(text, Math.max(0, at - ctx));
  const to = charBoundary(text, Math.min(text.length, at + shown + ctx));
  return `${from > 0 ? "…" : ""}${oneLine(text.slice(from, to))}${to < text.length ? "…" : ""}`;
}

function hitLine(n: number, h: RecallHit): string {
  const what =
    h.source === "message"
      ? `message ${h.id} (${h.role}${h.toolUseId ? `, input of ${h.tool} ${h.toolUseId}` : ""})`
      : `tool result ${h.id}${h.tool ? ` (${h.tool})` : ""}${h.source === "tool-result-file" ? " [saved file]" : ""}`;
  return `[${n}] ${what}${h.ts ? ` ${h.ts}` : ""} · at ${h.at} of ${fmt(h.total)}: ${h.snippet}`;
}

function search(a: Archive, query: string, maxHits: number, maxChars: number): RecallSearch | RecallError {
  const re = compileQuery(query);
  if (typeof re === "string") return fail(re);
  const hits: RecallHit[] = [];
  const lines: string[] = [];
  let used = 0;
  let totalMatches = 0;
  let itemsMatched = 0;
  let truncated = false;
  for (const item of items(a)) {
    re.lastIndex = 0;
    let inItem = 0;
    for (const m of item.text.matchAll(re)) {
      totalMatches++;
      inItem++;
      if (inItem > HITS_PER_ITEM || hits.length >= maxHits) {
        truncated = true;
        continue;
      }
      const at = m.index ?? 0;
      const seg = item.segments?.find((s) => s.use && at >= s.start && at < s.end);
      const hit: RecallHit = {
        id: item.id,
        source: item.source,
        ...(item.role ? { role: item.role } : {}),
        ...(seg?.use ? { tool: seg.use.name, toolUseId: seg.use.id } : item.tool ? { tool: item.tool } : {}),
        ...(item.ts ? { ts: item.ts } : {}),
        at,
        total: item.text.length,
        snippet: snippet(item.text, at, m[0].length, RECALL_CONTEXT_CHARS),
      };
      const line = hitLine(hits.length + 1, hit);
      // Keep room for the header line within maxChars.
      if (used + line.length + 1 > maxChars - HEADER_ROOM) {
        truncated = true;
        continue;
      }
      hits.push(hit);
      lines.push(line);
      used += line.length + 1;
    }
    if (inItem > 0) itemsMatched++;
  }
  const q = JSON.stringify(query.length > 100 ? `${query.slice(0, 100)}…` : query);
  const damaged = a.transcript.errors.length > 0 ? ` (${a.transcript.errors.length} damaged transcript line(s) skipped)` : "";
  const header =
    totalMatches === 0
      ? `recall: no match for ${q} in this session's transcript or saved tool results${damaged}.`
      : `recall: ${fmt(totalMatches)} match(es) for ${q} in ${fmt(itemsMatched)} item(s), newest first; showing ${hits.length}` +
        `${truncated ? " (narrow the query to see others)" : ""}. Read an item whole with recall id "<id>" (offset = "at", in chars)${damaged}.`;
  return { kind: "search", query, hits, totalMatches, truncated, text: [header, ...lines].join("\n") };
}

// ───────────────────────── entry point ─────────────────────────

function badNumber(name: string, v: unknown, min: number): string | null {
  if (v === undefined) return null;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) return `${name} must be an integer ≥ ${min}`;
  return null;
}

/** Reads archived content of the session in `sessionDir`. Never throws. */
export function recall(sessionDir: string, opts: RecallOptions): RecallResult {
  try {
    const maxChars = Math.max(1_000, opts.maxChars ?? RECALL_MAX_CHARS);
    const maxHits = Math.max(1, opts.maxHits ?? RECALL_MAX_HITS);
    const unit = opts.unit ?? "chars";
    if (unit !== "chars" && unit !== "lines") return fail(`unit must be "chars" or "lines", not ${JSON.stringify(unit)}`);
    const bad = badNumber("offset", opts.offset, 0) ?? badNumber("limit", opts.limit, 1);
    if (bad) return fail(bad);
    const id = typeof opts.id === "string" ? opts.id.trim() : "";
    const query = typeof opts.query === "string" ? opts.query : "";
    if (id === "" && query.trim() === "") return fail('give an id (a tool_use id or message uuid) or a query');

    const archive = openArchive(sessionDir);
    if ("kind" in archive) return archive;

    if (id !== "") {
      const doc = findDoc(archive, id);
      if (!doc) {
        return fail(`nothing with id ${JSON.stringify(id)} in this session (not a saved tool result, tool_use id or message uuid); search with a query to find ids`);
      }
      return sliceDoc(doc, { offset: opts.offset ?? 0, unit, maxChars, ...(opts.limit !== undefined ? { limit: opts.limit } : {}) });
    }
    return search(archive, query, maxHits, maxChars);
  } catch (err) {
    return fail(`failed: ${(err as Error)?.message ?? String(err)}`);
  }
}
