// recall by query: a case-insensitive substring or /regex/ over every item of the session
// (messages as rendered, original tool results, saved result files), newest first, as a bounded
// list of hits that each name the id (and char offset) to read the whole item with.
import { type SafeRegex, compileSafe } from "./safe-regex.ts";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Archive, type Segment, charBoundary, fail, fileOf, fmt, oneLine, segmentsOf, toolOf } from "./recall-archive.ts";
import { RECALL_CONTEXT_CHARS, type RecallError, type RecallHit, type RecallSearch, type RecallSource } from "./recall-types.ts";

/** Hits shown per item before "N more in this item". */
const HITS_PER_ITEM = 3;
/** Room kept for a search answer's header line. */
const HEADER_ROOM = 400;

/** A literal query, case-insensitive, on the native engine: an escaped literal cannot backtrack. */
function literal(query: string): SafeRegex {
  const re = new RegExp(query.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "giu");
  return {
    test: (text) => ((re.lastIndex = 0), re.test(text)),
    *matches(text) {
      re.lastIndex = 0;
      for (let m = re.exec(text); m; m = re.exec(text)) yield [m.index, m.index + m[0].length];
    },
  };
}

/**
 * A literal every match of `pattern` contains (the longest run of plain characters outside groups,
 * classes and optional parts), or null when there is none worth using (or an alternation makes
 * it uncertain). Items without it are skipped before the linear-time engine, which is far slower
 * than the native search for a literal.
 */
export function requiredLiteral(pattern: string): string | null {
  if (pattern.includes("|")) return null;
  let best = "", run = "", depth = 0;
  const end = () => {
    if (run.length > best.length) best = run;
    run = "";
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    let lit: string | null = null;
    if (c === "\\") {
      const n = pattern[++i] ?? "";
      // Escaped punctuation is itself; \w, \d, \b, \x41 and the like are not one character.
      if (/[^\w\s]/.test(n)) lit = n;
    } else if (c === "[") {
      while (i < pattern.length && pattern[i] !== "]") i += pattern[i] === "\\" ? 2 : 1;
    } else if (c === "{") {
      while (i < pattern.length && pattern[i] !== "}") i++; // a quantifier's bounds
    } else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (/[\w ,:;'"=<>!@#%&~`/-]/.test(c)) lit = c;
    if (lit === null || depth > 0) {
      end();
      continue;
    }
    // A quantifier that allows zero makes the character before it optional.
    const q = pattern[i + 1];
    if (q === "?" || q === "*" || (q === "{" && /^\{0/.test(pattern.slice(i + 1)))) {
      end();
      continue;
    }
    run += lit;
    if (q === "+" || q === "{") end();
  }
  end();
  return best.trim().length >= 3 ? best : null;
}

/** The query as a case-insensitive pattern (a /regex/ on the linear-time engine), or why it cannot be one. */
function compileQuery(query: string): SafeRegex | string {
  const q = query.trim();
  if (q === "") return "give a non-empty query";
  const m = /^\/(.+)\/([a-z]*)$/s.exec(q);
  if (!m) return literal(q);
  const flags = m[2] as string;
  let re: SafeRegex;
  try {
    re = compileSafe(m[1] as string, { ignoreCase: true, multiline: flags.includes("m"), dotAll: flags.includes("s") });
  } catch (err) {
    return (err as Error).message.replace(/^invalid regular expression/, "invalid regex");
  }
  if (re.test("")) return `the regex ${q} matches the empty string; make it more specific`;
  const needle = requiredLiteral(m[1] as string);
  if (!needle) return re;
  const pre = literal(needle);
  if (!withinLines(m[1] as string, flags)) {
    return {
      test: (text) => pre.test(text) && re.test(text),
      *matches(text) {
        if (pre.test(text)) yield* re.matches(text);
      },
    };
  }
  // Every match lies inside one line and holds the literal: only the lines holding it are run.
  return {
    test: (text) => {
      for (const _ of matchesInLines(text, pre, re)) return true;
      return false;
    },
    matches: (text) => matchesInLines(text, pre, re),
  };
}

/** Matches of `re` in the lines of `text` that hold a match of `pre`, as offsets into `text`. */
function* matchesInLines(text: string, pre: SafeRegex, re: SafeRegex): Generator<[number, number]> {
  let done = -1; // lines before this offset were run already
  for (const [at] of pre.matches(text)) {
    if (at < done) continue;
    const start = text.lastIndexOf("\n", at) + 1;
    const nl = text.indexOf("\n", at);
    const end = nl < 0 ? text.length : nl;
    for (const [a, b] of re.matches(text.slice(start, end))) yield [start + a, start + b];
    done = end + 1;
  }
}

/**
 * Whether no match of `pattern` can span a line break: nothing in it matches "\n" (no \s, \W, \D,
 * negated class, escape or raw control character, or . under the s flag) and no ^ or $ outside
 * multiline mode (which would mean the text's ends, not a line's). Unsure means false.
 */
export function withinLines(pattern: string, flags: string): boolean {
  if (flags.includes("s")) return false;
  // Escapes that can name a line break or a range reaching one (\t-\r), raw control characters.
  if (/\\[sWDnrvfx0-9uAzpPtc]|\[\^|[\x00-\x1f]/.test(pattern)) return false;
  if (!flags.includes("m") && /(^|[^\\])[\^$]/.test(pattern.replace(/\[(?:\\.|[^\]])*\]/g, ""))) return false;
  return true;
}

/** Something searched: message i, result k (with its saved file), or a saved file the transcript does not name. */
interface Item {
  text: string;
  message?: number;
  result?: number;
  saved?: boolean;
  file?: string;
}

/** Items newest first: each message (as rendered), then the original results it carries; then orphan files. */
function* items(a: Archive): Generator<Item> {
  // One directory read per search, not a stat per tool result.
  let saved: Set<string>;
  try {
    saved = new Set(readdirSync(a.toolResultsDir).filter((n) => n.endsWith(".txt")));
  } catch {
    saved = new Set(); // no tool-results/ folder
  }
  const fileIds = new Set<string>();
  const { messages: m, results: r } = a;
  let end = r.msg.length; // results are in message order: those of message i end at `end`
  for (let i = m.text.length - 1; i >= 0; i--) {
    yield { text: m.text.at(i), message: i };
    let first = end;
    while (first > 0 && r.msg.at(first - 1) === i) first--;
    for (let k = first; k < end; k++) {
      if (r.original.at(k) !== 1) continue;
      const name = fileOf(a, k);
      const file = saved.has(name) ? join(a.toolResultsDir, name) : null;
      if (file) fileIds.add(name);
      // A saved file holds what the transcript's original holds; read it only when the transcript
      // kept no original (a marker or placeholder there).
      const text = file && r.placeholder.at(k) === 1 ? readFileSync(file, "utf8") : r.text.at(k);
      yield { text, result: k, saved: file !== null };
    }
    end = first;
  }
  const files = [...saved]
    .filter((n) => !fileIds.has(n))
    .flatMap((name) => {
      try {
        return [{ name, mtime: statSync(join(a.toolResultsDir, name)).mtimeMs }];
      } catch {
        return [];
      }
    })
    .sort((x, y) => y.mtime - x.mtime);
  for (const f of files) yield { text: readFileSync(join(a.toolResultsDir, f.name), "utf8"), file: f.name.slice(0, -4) };
}

/** What a hit in `item` says about it (read from the columns only for items with a hit). */
function describe(a: Archive, item: Item): { id: string; source: RecallSource; role?: "user" | "assistant"; tool?: string; ts?: string; segments?: Segment[] } {
  const { messages: m, results: r } = a;
  if (item.message !== undefined) {
    const i = item.message;
    return { id: m.uuid.at(i), source: "message", role: m.role.at(i) === 0 ? "user" : "assistant", ts: m.ts.at(i), segments: segmentsOf(a, i) };
  }
  if (item.result !== undefined) {
    const k = item.result, tool = toolOf(a, k);
    return { id: r.id.at(k), source: item.saved ? "tool-result-file" : "tool_result", ts: m.ts.at(r.msg.at(k)), ...(tool ? { tool } : {}) };
  }
  return { id: item.file!, source: "tool-result-file" };
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
  for (const found of items(a)) {
    let inItem = 0;
    let item: (ReturnType<typeof describe> & { text: string }) | undefined;
    for (const [at, end] of re.matches(found.text)) {
      item ??= { ...describe(a, found), text: found.text };
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
  const damaged = a.damaged > 0 ? ` (${a.damaged} damaged transcript line(s) skipped)` : "";
  const header =
    totalMatches === 0
      ? `recall: no match for ${q} in this session's transcript or saved tool results${damaged}.`
      : `recall: ${fmt(totalMatches)} match(es) for ${q} in ${fmt(itemsMatched)} item(s), newest first; showing ${hits.length}` +
        `${truncated ? " (narrow the query to see others)" : ""}. Read an item whole with recall id "<id>" (offset = "at", in chars)${damaged}.`;
  return { kind: "search", query, hits, totalMatches, truncated, text: [header, ...lines].join("\n") };
}
