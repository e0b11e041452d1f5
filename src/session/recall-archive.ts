// What the two halves of recall (./recall-id.ts, ./recall-search.ts) share: the session's
// archive (transcript messages rendered as text, tool calls and their results; kept on disk by
// ./recall-index.ts), saved result files, and small text helpers.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { resultText } from "../messages/blocks.ts";
import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from "../messages/types.ts";
import { isClearedPlaceholder, isPersistedMarker } from "../compaction/layers/markers.ts";
import { TOOL_RESULTS_DIR, TRANSCRIPT_FILE } from "./paths.ts";
import { IntColumn, StringColumn } from "./recall-columns.ts";
import { resultFileName } from "./tool-results.ts";
import type { TranscriptEntry } from "./transcript.ts";
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

/** A span of a message's text; `use` names the tool call whose input it renders. */
export interface Segment {
  start: number;
  end: number;
  use?: { id: string; name: string };
}

/**
 * What recall searches and reads, column by column (./recall-columns.ts): every message of the
 * transcript rendered to text, every tool_result block as text. Built from the transcript, or
 * loaded from its index on disk (./recall-index.ts); either way extended with the lines appended
 * since. The maps by id are built when first asked for: a new process's first search needs none.
 */
export interface Archive {
  dir: string;
  transcriptPath: string;
  toolResultsDir: string;
  /** Transcript lines skipped as damaged. */
  damaged: number;
  messages: {
    uuid: StringColumn;
    ts: StringColumn;
    text: StringColumn;
    /** 0 user, 1 assistant. */
    role: IntColumn;
    /** The text's tool-call inputs as JSON [start, end, id, name, …] ("" for none). */
    segments: StringColumn;
  };
  /** Every tool_result block, in file order. */
  results: {
    /** Index of its message. */
    msg: IntColumn;
    id: StringColumn;
    text: StringColumn;
    /** 1: a marker a layer left in place of the result. */
    placeholder: IntColumn;
    /** 1: its call's original result (the first that is not a marker, else the first). */
    original: IntColumn;
    /** Its file name in tool-results/ should a layer have saved it there ("" for "<id>.txt"; most ids are hashed: done once). */
    file: StringColumn;
    /** Its call's tool, as known when it was indexed ("" when not seen yet). */
    tool: StringColumn;
  };
  maps: {
    /** tool_use id → the first call with that id: its tool's name, message, and the input's segment. */
    uses?: Map<string, { name: string; msg: number; segment: Segment }>;
    /** message uuid → index of the first message with it. */
    byUuid?: Map<string, number>;
    /** tool_use id → index of its original result. */
    original?: Map<string, number>;
  };
}

export function isPlaceholder(block: ToolResultBlock): boolean {
  const c = block.content;
  const text = typeof c === "string" ? c : Array.isArray(c) && c[0]?.type === "text" ? c[0].text : "";
  return isPersistedMarker(text) || isClearedPlaceholder(text);
}

export function blocks(m: Message): ContentBlock[] {
  return typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
}

/** An archive with nothing in it yet, or with the columns given. */
export function emptyArchive(dir: string, columns?: Pick<Archive, "messages" | "results">): Archive {
  const s = () => new StringColumn(), n = () => new IntColumn();
  return {
    dir,
    transcriptPath: join(dir, TRANSCRIPT_FILE),
    toolResultsDir: join(dir, TOOL_RESULTS_DIR),
    damaged: 0,
    messages: columns?.messages ?? { uuid: s(), ts: s(), text: s(), role: n(), segments: s() },
    results: columns?.results ?? { msg: n(), id: s(), text: s(), placeholder: n(), original: n(), file: s(), tool: s() },
    maps: {},
  };
}

/** Message i's tool-call segments. */
export function segmentsOf(a: Archive, i: number): Segment[] {
  const json = a.messages.segments.at(i);
  if (json === "") return [];
  const flat = JSON.parse(json) as (number | string)[];
  const out: Segment[] = [];
  for (let k = 0; k + 3 < flat.length; k += 4) out.push({ start: flat[k] as number, end: flat[k + 1] as number, use: { id: flat[k + 2] as string, name: flat[k + 3] as string } });
  return out;
}

function addUses(uses: NonNullable<Archive["maps"]["uses"]>, segments: readonly Segment[], i: number): void {
  for (const s of segments) if (s.use && !uses.has(s.use.id)) uses.set(s.use.id, { name: s.use.name, msg: i, segment: s });
}

/** tool_use id → its first call. */
export function usesOf(a: Archive): NonNullable<Archive["maps"]["uses"]> {
  if (!a.maps.uses) {
    a.maps.uses = new Map();
    for (let i = 0; i < a.messages.segments.length; i++) if (a.messages.segments.at(i) !== "") addUses(a.maps.uses, segmentsOf(a, i), i);
  }
  return a.maps.uses;
}

/** message uuid → index of its first message. */
export function uuidIndex(a: Archive): Map<string, number> {
  if (!a.maps.byUuid) {
    const byUuid = (a.maps.byUuid = new Map());
    for (let i = 0; i < a.messages.uuid.length; i++) if (!byUuid.has(a.messages.uuid.at(i))) byUuid.set(a.messages.uuid.at(i), i);
  }
  return a.maps.byUuid;
}

/** tool_use id → index of its original result. */
export function originals(a: Archive): Map<string, number> {
  if (!a.maps.original) {
    a.maps.original = new Map();
    for (let k = 0; k < a.results.id.length; k++) if (a.results.original.at(k) === 1) a.maps.original.set(a.results.id.at(k), k);
  }
  return a.maps.original;
}

/** Result k's tool (the name of its call). */
export function toolOf(a: Archive, k: number): string | undefined {
  return a.results.tool.at(k) || usesOf(a).get(a.results.id.at(k))?.name;
}

/** Result k's file name in tool-results/. */
export function fileOf(a: Archive, k: number): string {
  return a.results.file.at(k) || `${a.results.id.at(k)}.txt`;
}

/** Indexes message entries (in file order). */
export function indexEntries(a: Archive, entries: readonly TranscriptEntry[]): void {
  const m = a.messages, r = a.results;
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    const rendered = renderMessage(entry.message);
    const segments = rendered.segments.filter((s) => s.use);
    const i = m.uuid.length;
    m.uuid.push(entry.uuid);
    m.ts.push(entry.ts);
    m.text.push(rendered.text);
    m.role.push(entry.message.role === "user" ? 0 : 1);
    m.segments.push(segments.length ? JSON.stringify(segments.flatMap((s) => [s.start, s.end, s.use!.id, s.use!.name])) : "");
    if (a.maps.byUuid && !a.maps.byUuid.has(entry.uuid)) a.maps.byUuid.set(entry.uuid, i);
    addUses(usesOf(a), segments, i);
    for (const b of blocks(entry.message)) {
      if (b.type !== "tool_result") continue;
      const block = b as ToolResultBlock;
      const id = block.tool_use_id, placeholder = isPlaceholder(block);
      // The first result of a call that is not a marker is its original (else the first).
      const byId = originals(a);
      const seen = byId.get(id);
      const original = seen === undefined || (r.placeholder.at(seen) === 1 && !placeholder);
      const k = r.id.length;
      if (original) {
        if (seen !== undefined) r.original.set(seen, 0);
        byId.set(id, k);
      }
      const file = resultFileName(id);
      r.msg.push(i);
      r.id.push(id);
      r.text.push(resultText(block.content));
      r.placeholder.push(placeholder ? 1 : 0);
      r.original.push(original ? 1 : 0);
      r.file.push(file === `${id}.txt` ? "" : file);
      r.tool.push(usesOf(a).get(id)?.name ?? "");
    }
  }
}

/** The input of a tool call, as its message's text renders it (JSON), parsed back. */
export function useInput(a: Archive, id: string): unknown {
  const u = usesOf(a).get(id);
  if (!u) return undefined;
  const prefix = `[tool_use ${u.name} ${id}] `.length;
  return JSON.parse(a.messages.text.at(u.msg).slice(u.segment.start + prefix, u.segment.end));
}

/** The saved full result of a tool call (tool-results/<id>.txt), or null. */
export function savedFile(a: Archive, toolUseId: string): string | null {
  const path = join(a.toolResultsDir, resultFileName(toolUseId));
  return existsSync(path) ? path : null;
}

// ───────────────────────── rendering ─────────────────────────

/** A message as readable text (tool results become one-line pointers to their own ids). */
export function renderMessage(m: Message): { text: string; segments: Segment[] } {
  const parts: { text: string; use?: { id: string; name: string } }[] = [];
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
      case "compaction":
        parts.push({ text: typeof b.content === "string" ? `[server compaction: summary of the earlier conversation]\n${b.content}` : "[server compaction that failed]" });
        break;
      case "image":
        parts.push({ text: "[image]" });
        break;
      case "tool_use": {
        const u = b as ToolUseBlock;
        parts.push({ text: `[tool_use ${u.name} ${u.id}] ${JSON.stringify(u.input ?? null)}`, use: { id: u.id, name: u.name } });
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
