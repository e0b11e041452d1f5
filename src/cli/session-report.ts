// What `lethe sessions` and `lethe export` show, from a loaded transcript (a workspace session's
// or a store conversation's): the sessions table's row, the table, and the Markdown export.
import type { ContentBlock, Message } from "../messages/types.ts";
import type { SessionSummary } from "../session/paths.ts";
import { REQUEST_EVENT, type LoadedTranscript } from "../session/transcript-format.ts";
import { loadTranscript } from "../session/transcript-read.ts";

export interface SessionStats {
  id: string;
  start?: string;
  lastActivity: string;
  turns: number;
  requests: number;
  compactions: Record<string, number>;
  /** Input + output tokens the provider reported, over every request line. */
  tokens: number;
  /** undefined when no request line has a price. */
  costUsd?: number;
  firstMessage: string;
}

const isTyped = (m: Message) =>
  m.role === "user" && (typeof m.content === "string" || (m.content.some((b) => b.type === "text" && !/^(\[lethe|<lethe-|\[an earlier message|\[the user's latest|\[conversation continues\])/.test(b.text)) && !m.content.some((b) => b.type === "tool_result")));

export function sessionStats(s: SessionSummary, t: LoadedTranscript = loadTranscript(s.transcript)): SessionStats {
  let turns = 0;
  let requests = 0;
  let tokens = 0;
  let cost: number | undefined;
  let last = s.lastModified.toISOString();
  const compactions: Record<string, number> = {};
  for (const e of t.entries) {
    if (typeof e.ts === "string") last = e.ts;
    if (e.type === "message" && isTyped(e.message)) turns++;
    else if (e.type === "boundary") compactions[e.kind] = (compactions[e.kind] ?? 0) + 1;
    else if (e.type === "event" && e.name === REQUEST_EVENT) {
      requests++;
      tokens += Number(e.input_tokens ?? 0) + Number(e.output_tokens ?? 0);
      if (typeof e.cost_usd === "number") cost = (cost ?? 0) + e.cost_usd;
    }
  }
  return { id: s.id, ...(s.created ? { start: s.created } : {}), lastActivity: last, turns, requests, compactions, tokens, ...(cost !== undefined ? { costUsd: cost } : {}), firstMessage: s.preview };
}

const short = (iso: string | undefined) => (iso ? iso.replace("T", " ").slice(0, 16) : "—");

/** The `lethe sessions` table. */
export function sessionsTable(rows: readonly SessionStats[]): string {
  if (rows.length === 0) return "No sessions in this workspace yet.";
  const head = ["session", "started", "last activity", "turns", "compactions", "tokens", "cost", "first message"];
  const lines = rows.map((r) => {
    const c = Object.entries(r.compactions);
    return [
      r.id,
      short(r.start),
      short(r.lastActivity),
      String(r.turns),
      c.length ? c.map(([k, n]) => `${n} ${k}`).join(", ") : "0",
      r.requests ? r.tokens.toLocaleString("en-US") : "—",
      r.costUsd !== undefined ? `$${r.costUsd.toFixed(2)}` : "—",
      r.firstMessage || "(none)",
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...lines.slice(0).map((l) => (i === 7 ? 0 : l[i]!.length))));
  const fmt = (cells: string[]) => cells.map((c, i) => (i === 7 ? c : c.padEnd(widths[i]!))).join("  ");
  return [fmt(head), ...lines.map(fmt)].join("\n");
}

function fence(text: string, lang = ""): string {
  // A fence longer than any run of backticks inside, so the text cannot close it.
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const f = "`".repeat(longest + 1);
  return `${f}${lang}\n${text}\n${f}`;
}

function blockMarkdown(b: ContentBlock): string {
  switch (b.type) {
    case "text":
      return b.text;
    case "thinking":
      return `<details><summary>thinking</summary>\n\n${fence(b.thinking)}\n</details>`;
    case "redacted_thinking":
      return "_(redacted thinking)_";
    case "compaction":
      return typeof b.content === "string" ? `<details><summary>server compaction (summary of the earlier conversation)</summary>\n\n${fence(b.content)}\n</details>` : "_(server compaction that failed)_";
    case "tool_use":
      return `**tool call** \`${b.name}\` (${b.id})\n${fence(JSON.stringify(b.input, null, 2), "json")}`;
    case "tool_result": {
      const content = typeof b.content === "string" ? b.content : (b.content ?? []).map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
      return `**tool result** (${b.tool_use_id})${b.is_error ? " — error" : ""}\n${fence(content)}`;
    }
    case "image":
      return "_[image]_";
    default:
      return `_[${String((b as { type: unknown }).type)}]_`;
  }
}

/** A readable Markdown transcript, compactions marked where they happened. */
export function exportMarkdown(id: string, t: LoadedTranscript): string {
  const out: string[] = [`# lethe session ${id}`, ""];
  if (t.header) out.push(`- workspace: \`${String(t.header.cwd ?? "")}\``, `- started: ${String(t.header.created ?? "—")}`, ...(t.header.model ? [`- model: ${String(t.header.model)}`] : []), "");
  for (const e of t.entries) {
    if (e.type === "message") {
      const blocks: ContentBlock[] = typeof e.message.content === "string" ? [{ type: "text", text: e.message.content }] : e.message.content;
      out.push(`## ${e.message.role === "user" ? (blocks.every((b) => b.type === "tool_result") ? "Tool results" : "User") : "Assistant"}`, "", ...blocks.map(blockMarkdown).flatMap((x) => [x, ""]));
    } else if (e.type === "boundary") {
      const n = (x: number) => (x >= 0 ? x.toLocaleString("en-US") : "?");
      out.push(`---`, "", `> **Compaction: ${e.kind}** — ${n(e.tokens_before)} → ${n(e.tokens_after)} tokens${e.ts ? ` (${short(e.ts)})` : ""}`, "");
      if (typeof e.summary === "string" && e.summary) out.push(`<details><summary>summary</summary>\n\n${fence(e.summary)}\n</details>`, "");
      out.push("---", "");
    }
  }
  return `${out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd()}\n`;
}

