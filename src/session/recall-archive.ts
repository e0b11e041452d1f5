// What the two halves of recall (./recall-id.ts, ./recall-search.ts) share: the session's
// archive (transcript messages, tool calls and their original results, saved result files),
// messages rendered as text, and small text helpers.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { resultText } from "../messages/blocks.ts";
import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from "../messages/types.ts";
import { isClearedPlaceholder, isPersistedMarker } from "../compaction/markers.ts";
import { TOOL_RESULTS_DIR, TRANSCRIPT_FILE } from "./paths.ts";
import { resultFileName } from "./tool-results.ts";
import { type LoadedTranscript, type MessageEntry, loadTranscript } from "./transcript.ts";
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

function isPlaceholder(block: ToolResultBlock): boolean {
  const c = block.content;
  const text = typeof c === "string" ? c : Array.isArray(c) && c[0]?.type === "text" ? c[0].text : "";
  return isPersistedMarker(text) || isClearedPlaceholder(text);
}

export function blocks(m: Message): ContentBlock[] {
  return typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
}

/** Loads the session's transcript and indexes its tool calls and their original results. */
export function openArchive(dir: string): Archive | RecallError {
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
