// Public types and limits of recall (./recall.ts).

export const RECALL_MAX_CHARS = 8_000;
export const RECALL_MAX_HITS = 20;
/** Characters of context shown on each side of a search match. */
export const RECALL_CONTEXT_CHARS = 80;

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
