// The viewer's session, parsed once and kept between requests (a 50,000-message transcript is
// 100 MB: parsing it per request took seconds, and sending it whole was 100 MB). Each request
// first reads what was appended since (whole lines; a file replaced or cut short is read again).
// Kept: the header, warnings and errors, what the chart draws (each request line's tokens and
// cost, each boundary's record) and where each entry's line is, so a page of entries is one read
// and a parse of that page only.
import { closeSync, fstatSync, openSync } from "node:fs";
import type { Message } from "../../messages/types.ts";
import { type Covered, readFileRange, readRange, splitLines, stillCovers, tailHash } from "../../session/appended.ts";
import { type BoundaryEntry, type EventEntry, type SessionHeader, type TranscriptEntry, REQUEST_EVENT, parseTranscript } from "../../session/transcript.ts";
import { parseLines } from "../../session/transcript-read.ts";

/** The chart's data: request lines as columns (one value per request), boundaries as records. */
export interface ChartData {
  requests: { i: number[]; input_tokens: (number | null)[]; threshold: (number | null)[]; context_window: (number | null)[]; cost_usd: number[] };
  boundaries: { i: number; kind: string; ts?: string; tokens_before: number; tokens_after: number }[];
}

export interface EntriesPage {
  from: number;
  /** Entries in the whole transcript, and where the next page starts (null: this was the last). */
  total: number;
  next: number | null;
  /** JSON of the entries, each with its index `i`. */
  json: string;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

export class SessionCache {
  header: SessionHeader | null = null;
  warnings: string[] = [];
  errors: string[] = [];
  readonly chart: ChartData = { requests: { i: [], input_tokens: [], threshold: [], context_window: [], cost_usd: [] }, boundaries: [] };
  /** Entry i's line is bytes [spans[2i], spans[2i+1]) of the file. */
  private spans: number[] = [];
  /** Full snip heads by head_id, for boundaries whose head is a diff (./transcript-heads.ts). */
  private heads = new Map<string, Message[]>();
  private covered: Covered = { size: 0, mtimeMs: 0, offset: 0, tail: "" };

  constructor(readonly path: string) {}

  get total(): number {
    return this.spans.length / 2;
  }

  /** Reads what was appended since the last call (everything, the first time or after a replace). */
  refresh(): void {
    const fd = openSync(this.path, "r");
    try {
      const st = fstatSync(fd);
      if (st.size === this.covered.size && st.mtimeMs === this.covered.mtimeMs) return;
      if (!stillCovers(this.covered, st, this.path)) this.reset();
      const from = this.covered.offset;
      const lines = splitLines(readRange(fd, from, st.size));
      const end = lines.end;
      if (end > 0) this.add(lines, from);
      this.covered = { size: st.size, mtimeMs: st.mtimeMs, offset: from + end, tail: end > 0 ? tailHash(this.path, from + end) : this.covered.tail };
    } finally {
      closeSync(fd);
    }
  }

  private reset(): void {
    this.header = null;
    this.warnings = [];
    this.errors = [];
    this.spans = [];
    this.heads = new Map();
    this.covered = { size: 0, mtimeMs: 0, offset: 0, tail: "" };
    for (const column of Object.values(this.chart.requests)) column.length = 0;
    this.chart.boundaries.length = 0;
  }

  /** Parses whole lines read at byte `from` and keeps what the chart and the pages need. */
  private add(lines: ReturnType<typeof splitLines>, from: number): void {
    const starts = lines.starts;
    const { requests, boundaries } = this.chart;
    const each = (e: TranscriptEntry, line: number) => {
      const i = this.total;
      this.spans.push(from + starts[line]!, from + starts[line + 1]! - 1);
      if (e.type === "event" && e.name === REQUEST_EVENT) {
        const r = e as EventEntry;
        requests.i.push(i);
        requests.input_tokens.push(num(r.input_tokens));
        requests.threshold.push(num(r.threshold));
        requests.context_window.push(num(r.context_window));
        requests.cost_usd.push(num(r.cost_usd) ?? 0);
      } else if (e.type === "boundary") {
        const b = e as BoundaryEntry;
        boundaries.push({ i, kind: b.kind, ...(typeof b.ts === "string" ? { ts: b.ts } : {}), tokens_before: b.tokens_before, tokens_after: b.tokens_after });
      }
    };
    const part = parseLines(lines, from === 0 ? this.path : `${this.path} (from byte ${from})`, { heads: this.heads, each });
    this.header ??= part.header;
    this.warnings.push(...part.warnings);
    this.errors.push(...part.errors);
  }

  /**
   * Entries from index `from`: at most `limit`, and no more than `maxBytes` of JSON unless the
   * first alone is larger (it is sent whole). Parsed from their lines, read in one piece.
   */
  page(from: number, limit: number, maxBytes: number): EntriesPage {
    const total = this.total;
    const start = Math.min(Math.max(0, from), total);
    const last = Math.min(total, start + limit);
    const parts: string[] = [];
    let bytes = 0;
    if (last > start) {
      const at = this.spans[2 * start]!;
      const text = readFileRange(this.path, at, this.spans[2 * last - 1]!).toString("utf8");
      // A snip boundary's removed lines, on earlier pages, are read where it says they are.
      const readBytes = (from: number, to: number) => readFileRange(this.path, from, to).toString("utf8");
      const entries: TranscriptEntry[] = parseTranscript(text, this.path, { heads: this.heads, readBytes }).entries;
      for (let k = 0; k < entries.length && start + k < last; k++) {
        const json = JSON.stringify({ i: start + k, ...entries[k] });
        const size = Buffer.byteLength(json) + 1;
        if (parts.length > 0 && bytes + size > maxBytes) break;
        parts.push(json);
        bytes += size;
      }
    }
    const end = start + parts.length;
    return { from: start, total, next: end < total ? end : null, json: `[${parts.join(",")}]` };
  }
}
