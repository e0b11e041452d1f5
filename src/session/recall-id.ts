// recall by id: find the item an id names (a saved tool result, a tool_result in the
// transcript, a message, a tool call) and return one bounded slice of it, in chars or lines.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { type Archive, charBoundary, fmt, originals, savedFile, useInput, usesOf, uuidIndex } from "./recall-archive.ts";
import type { RecallOptions, RecallSlice, RecallSource } from "./recall-types.ts";

/** An item found by id: its whole text, where it came from, and how the slice header names it. */
export interface Doc {
  id: string;
  source: RecallSource;
  path: string;
  label: string;
  text: string;
}

/**
 * The item `rawId` names, tried as given, as a base name and without ".txt": a saved result file
 * first, then the transcript's original tool_result, a message uuid, a tool call without result.
 */
export function findDoc(a: Archive, rawId: string): Doc | null {
  const candidates = [rawId];
  const base = basename(rawId);
  if (base !== rawId) candidates.push(base);
  for (const c of [...candidates]) if (c.endsWith(".txt")) candidates.push(c.slice(0, -4));

  for (const id of candidates) {
    const file = savedFile(a, id);
    if (file) {
      const tool = usesOf(a).get(id)?.name;
      return { id, source: "tool-result-file", path: file, label: `full tool result${tool ? ` of ${tool}` : ""}`, text: readFileSync(file, "utf8") };
    }
    const k = originals(a).get(id);
    if (k !== undefined) {
      const tool = usesOf(a).get(id)?.name;
      return {
        id,
        source: "tool_result",
        path: a.transcriptPath,
        label: `tool result${tool ? ` of ${tool}` : ""} from the transcript`,
        text: a.results.text.at(k),
      };
    }
    const i = uuidIndex(a).get(id);
    if (i !== undefined) {
      const m = a.messages;
      return { id, source: "message", path: a.transcriptPath, label: `${m.role.at(i) === 0 ? "user" : "assistant"} message of ${m.ts.at(i)}`, text: m.text.at(i) };
    }
    const u = usesOf(a).get(id);
    if (u) {
      return { id, source: "tool_use", path: a.transcriptPath, label: `tool call ${u.name} (no result recorded)`, text: JSON.stringify(useInput(a, id) ?? null, null, 2) };
    }
  }
  return null;
}

/** One slice of `doc`, between a header line (what, where, which part) and a footer naming the next call. */
export function sliceDoc(doc: Doc, opts: Required<Pick<RecallOptions, "offset" | "unit" | "maxChars">> & { limit?: number }): RecallSlice {
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
