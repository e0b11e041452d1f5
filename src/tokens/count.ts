// Token counts of messages and blocks, memoised per object, and long texts by content.
//
// Layers never mutate a block: a changed block is a new object, an unchanged one keeps
// its identity. So a WeakMap keyed by block gives O(new blocks) per turn, and entries
// for blocks that left the history are collected with them.
import type { ContentBlock, Message } from "../messages/types.ts";
import { estimateTokens, estimateUnrounded } from "./estimate.ts";
import { type MediaFormula, MAX_IMAGE_TOKENS, documentTokens, imageBlockTokens } from "./media.ts";

/**
 * Strings at least this long are memoised by text(), up to TEXT_MEMO_ENTRIES of them. Hashing a
 * string for the lookup runs at GB/s, the estimate at tens of MB/s: even a short carried text (a
 * user's one-line message, carried by every snip) costs less to look up than to count again.
 */
const TEXT_MEMO_MIN_CHARS = 32;
const TEXT_MEMO_ENTRIES = 8_192;
const TEXT_MEMO_CHARS = 4_000_000;
/** Other blocks' strings at least this long (tool output, thinking) are memoised by content too. */
const LARGE_MIN_CHARS = 4_096;
const LARGE_MEMO_ENTRIES = 512;
const LARGE_MEMO_CHARS = 4_000_000;
/** Shorter arrays (a probe of a block or two, a summary's request) are summed without the prefix memo. */
const PREFIX_MIN_MESSAGES = 8;

export type TextCounter = (text: string) => number;

/** Fixed costs the wire format adds around content (role markers, block framing). */
export const MESSAGE_OVERHEAD = 4;
export const BLOCK_OVERHEAD = 3;
/** The most an image costs (Anthropic: (w×h)/750 after a resize that caps it near 1,600); see ./media.ts. */
export const IMAGE_TOKENS = MAX_IMAGE_TOKENS;

export interface TokenCounter {
  /** Tokens of a bare string. */
  text(text: string): number;
  block(block: ContentBlock): number;
  message(message: Message): number;
  /**
   * Sum over messages, or over history[from..to) (memoised per block, and the running sums of
   * the last long history: summing it again, or what it became by appending, walks references).
   */
  messages(history: readonly Message[], from?: number, to?: number): number;
  /**
   * With records counted line by line (TokenCounterOptions.lineCounted): the unrounded tokens of
   * one line of such a record as it stands in it (with its newline, unless `last`), memoised. A
   * record's text() is the sum of its lines' in order, rounded once, so a caller can fit a record
   * to a budget without rendering it, and count its lines ahead, as they arrive.
   */
  recordLine?(line: string, last?: boolean): number;
  /**
   * With recordLine: a record just rendered, and its tokens as its lines' recordLine values summed
   * in order and rounded give them (what text() would count), so text() does not count it again.
   */
  rememberRecord?(text: string, tokens: number): void;
}

// Module functions, not closures made per call: blocks are counted on every request.
const image = (b: { source: unknown; detail?: unknown }, media: MediaFormula) => imageBlockTokens(b.source, media, typeof b.detail === "string" ? b.detail : undefined);

function blockTokens(block: ContentBlock, count: TextCounter, media: MediaFormula): number {
  switch (block.type) {
    case "text":
      return BLOCK_OVERHEAD + count(block.text);
    case "thinking":
      return BLOCK_OVERHEAD + count(block.thinking);
    case "redacted_thinking":
      // Opaque encrypted payload: the model sees the underlying thinking, which is
      // roughly a third the size of its base64 form.
      return BLOCK_OVERHEAD + Math.ceil(block.data.length / 3);
    case "image":
      return image(block, media);
    case "tool_use":
      return BLOCK_OVERHEAD + count(block.name) + count(JSON.stringify(block.input ?? {}));
    case "tool_result": {
      const c = block.content;
      if (c === undefined) return BLOCK_OVERHEAD;
      if (typeof c === "string") return BLOCK_OVERHEAD + count(c);
      let n = BLOCK_OVERHEAD;
      for (const b of c) n += b.type === "text" ? count(b.text) : b.type === "image" ? image(b, media) : count(JSON.stringify(b));
      return n;
    }
    default: {
      if ((block as { type: string }).type === "document") return BLOCK_OVERHEAD + documentTokens(block as { source?: unknown }, count);
      // Unknown block kinds (future API additions) still cost something.
      return BLOCK_OVERHEAD + count(JSON.stringify(block));
    }
  }
}

/**
 * `count`, remembering strings of at least `min` characters by content. Bounded by entries and by
 * characters (cleared when full), so the memo never holds much of what it has seen.
 */
function memoByContent(count: TextCounter, min: number, entries: number, chars: number): TextCounter & { remember(s: string, n: number): void } {
  const memo = new Map<string, number>();
  let held = 0;
  const remember = (s: string, n: number) => {
    if (s.length < min) return;
    if (memo.size >= entries || held + s.length > chars) (memo.clear(), (held = 0));
    if (s.length <= chars / 8) (memo.set(s, n), (held += s.length));
  };
  const counter = (s: string) => {
    if (s.length < min) return count(s);
    let n = memo.get(s);
    if (n === undefined) remember(s, (n = count(s)));
    return n;
  };
  return Object.assign(counter, { remember });
}

export interface TokenCounterOptions {
  /** Whose image and PDF formulas to apply (./media.ts). Default "anthropic". */
  media?: MediaFormula;
  /** Texts that start with one of these are counted line by line (see lineByLine). */
  lineCounted?: readonly string[];
}

const LINE_MEMO_ENTRIES = 16_384;
const LINE_MEMO_CHARS = 2_000_000;

/**
 * The estimator's count of `text` as the sum of its lines' (each line with its newline, each
 * memoised), rounded once. A record that a compaction renders again with a few lines changed
 * (the file ledger, the work record) costs a lookup per line instead of a scan of all of it.
 * The estimator's pieces never span a newline but for a run of blank lines, which a record has
 * none of: on bench:replay's sessions 1,034 of 1,040 records counted the same either way, and the
 * other 6 one token apart.
 */
function lineByLine(): { count: TextCounter; line: (line: string, last?: boolean) => number } {
  const memo = new Map<string, number>();
  let held = 0;
  const lineTokens = (line: string): number => {
    let n = memo.get(line);
    if (n === undefined) {
      n = estimateUnrounded(line);
      if (memo.size >= LINE_MEMO_ENTRIES || held + line.length > LINE_MEMO_CHARS) (memo.clear(), (held = 0));
      if (line.length <= LINE_MEMO_CHARS / 8) (memo.set(line, n), (held += line.length));
    }
    return n;
  };
  const count = (text: string): number => {
    let sum = 0;
    for (let i = 0; i < text.length; ) {
      const nl = text.indexOf("\n", i);
      const end = nl < 0 ? text.length : nl + 1;
      sum += lineTokens(text.slice(i, end));
      i = end;
    }
    return Math.round(sum) + 0;
  };
  return { count, line: (line, last = false) => lineTokens(last ? line : `${line}\n`) };
}

/** A memoising counter over any text counter (the estimator by default). */
export function createTokenCounter(count: TextCounter = estimateTokens, opts: TokenCounterOptions = {}): TokenCounter {
  const media = opts.media ?? "anthropic";
  const byBlock = new WeakMap<object, number>();
  const byMessage = new WeakMap<Message, number>();
  const byString = new Map<string, number>();

  // Compactions count the same carried texts again at every snip (the user's messages, the
  // ledger, the work record): remember long ones. Short strings cost less to count than to hash.
  // lethe's own records, counted line by line with the estimator (another counter counts them whole).
  const prefixes = count === estimateTokens ? (opts.lineCounted ?? []) : [];
  const lines = prefixes.length > 0 ? lineByLine() : undefined;
  const counted: TextCounter = lines === undefined ? count : (s) => (prefixes.some((p) => s.startsWith(p)) ? lines.count(s) : count(s));
  const text = memoByContent(counted, TEXT_MEMO_MIN_CHARS, TEXT_MEMO_ENTRIES, TEXT_MEMO_CHARS);
  // A host that passes new objects with the same content (a deserialised history) would pay to
  // estimate every big tool result again: those are memoised by content, in a memo of their own
  // so they never push the carried texts out of text()'s.
  const large = memoByContent(count, LARGE_MIN_CHARS, LARGE_MEMO_ENTRIES, LARGE_MEMO_CHARS);

  const block = (b: ContentBlock): number => {
    let n = byBlock.get(b);
    if (n === undefined) {
      // Text blocks through text(): a carried text (ledger, work record) counted when it was
      // fitted to its budget is not counted again as a block.
      n = blockTokens(b, b.type === "text" ? text : large, media);
      byBlock.set(b, n);
    }
    return n;
  };

  const message = (m: Message): number => {
    if (typeof m.content === "string") {
      let n = byString.get(m.content);
      if (n === undefined) {
        n = BLOCK_OVERHEAD + count(m.content);
        // Plain-string contents are short user prompts in practice; bound the cache anyway.
        if (byString.size > 10_000) byString.clear();
        byString.set(m.content, n);
      }
      return MESSAGE_OVERHEAD + n;
    }
    // Messages are never mutated either (a changed one is a new object): one lookup per message.
    let n = byMessage.get(m);
    if (n === undefined) {
      n = MESSAGE_OVERHEAD;
      for (const b of m.content) n += block(b);
      byMessage.set(m, n);
    }
    return n;
  };

  // The last long history summed, with its running sums (sums[i]: its first i messages). Each
  // request's history is the last one and what arrived since (the same objects), and a snip keeps
  // its head: comparing references along an array is cheaper than a memo lookup per message, which
  // touches each message again (at a 200k window, ~130 of them).
  const seen: Message[] = [];
  const sums: number[] = [0];
  const messages = (h: readonly Message[], from = 0, to = h.length): number => {
    // Indices as slice() reads them, but for negatives (and NaN): 0.
    const end = to >= 0 ? Math.min(Math.trunc(to), h.length) : 0;
    const start = from >= 0 ? Math.min(Math.trunc(from), end) : 0;
    if (h.length < PREFIX_MIN_MESSAGES) {
      let n = 0;
      for (let i = start; i < end; i++) n += message(h[i]!);
      return n;
    }
    const shared = Math.min(h.length, seen.length);
    let i = 0;
    while (i < shared && h[i] === seen[i]) i++;
    let n = sums[i]!;
    for (let j = i; j < h.length; j++) {
      const m = h[j]!;
      n += message(m);
      seen[j] = m;
      sums[j + 1] = n;
    }
    seen.length = h.length;
    sums.length = h.length + 1;
    return start === 0 && end === h.length ? n : sums[end]! - sums[start]!;
  };

  const records = lines ? { recordLine: lines.line, rememberRecord: (t: string, n: number) => prefixes.some((p) => t.startsWith(p)) && text.remember(t, n) } : {};
  // text() as it is, without its memo's remember (rememberRecord takes records only).
  return { text: (s: string) => text(s), block, message, messages, ...records };
}
