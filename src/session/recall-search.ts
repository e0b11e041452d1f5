// recall by query: a case-insensitive substring or /regex/ over every item of the session
// (messages as rendered, original tool results, saved result files), newest first, as a bounded
// list of hits that each name the id (and char offset) to read the whole item with.
import { type SafeRegex, compileSafe } from "./safe-regex.ts";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { resultText } from "../messages/blocks.ts";
import type { ToolResultBlock } from "../messages/types.ts";
import type { MessageEntry } from "./transcript.ts";
import { type Archive, type Segment, blocks, charBoundary, fail, fmt, oneLine, renderMessage, savedFile } from "./recall-archive.ts";
import { RECALL_CONTEXT_CHARS, type RecallError, type RecallHit, type RecallSearch, type RecallSource } from "./recall-types.ts";

/** Hits shown per item before "N more in this item". */
const HITS_PER_ITEM = 3;
/** Room kept for a search answer's header line. */
const HEADER_ROOM = 400;

/** The query as a case-insensitive pattern on the linear-time engine, or why it cannot be one. */
function compileQuery(query: string): SafeRegex | string {
  const q = query.trim();
  if (q === "") return "give a non-empty query";
  const m = /^\/(.+)\/([a-z]*)$/s.exec(q);
  if (!m) return compileSafe(q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), { ignoreCase: true });
  const flags = m[2] as string;
  let re: SafeRegex;
  try {
    re = compileSafe(m[1] as string, { ignoreCase: true, multiline: flags.includes("m"), dotAll: flags.includes("s") });
  } catch (err) {
    return (err as Error).message.replace(/^invalid regular expression/, "invalid regex");
  }
  if (re.test("")) return `the regex ${q} matches the empty string; make it more specific`;
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

/** Every item's matches, newest first, within maxHits hits and maxChars of answer text. */
export function search(a: Archive, query: string, maxHits: number, maxChars: number): RecallSearch | RecallError {
  const re = compileQuery(query);
  if (typeof re === "string") return fail(re);
  const hits: RecallHit[] = [];
  const lines: string[] = [];
  let used = 0;
  let totalMatches = 0;
  let itemsMatched = 0;
  let truncated = false;
  for (const item of items(a)) {
    let inItem = 0;
    for (const [at, end] of re.matches(item.text)) {
      totalMatches++;
      inItem++;
      if (inItem > HITS_PER_ITEM || hits.length >= maxHits) {
        truncated = true;
        continue;
      }
      const seg = item.segments?.find((s) => s.use && at >= s.start && at < s.end);
      const hit: RecallHit = {
        id: item.id,
        source: item.source,
        ...(item.role ? { role: item.role } : {}),
        ...(seg?.use ? { tool: seg.use.name, toolUseId: seg.use.id } : item.tool ? { tool: item.tool } : {}),
        ...(item.ts ? { ts: item.ts } : {}),
        at,
        total: item.text.length,
        snippet: snippet(item.text, at, end - at, RECALL_CONTEXT_CHARS),
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
