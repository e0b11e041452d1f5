// Token counts of messages and blocks, memoised per object, and long texts by content.
//
// Layers never mutate a block: a changed block is a new object, an unchanged one keeps
// its identity. So a WeakMap keyed by block gives O(new blocks) per turn, and entries
// for blocks that left the history are collected with them.
import type { ContentBlock, Message } from "../messages/types.ts";
import { estimateTokens } from "./estimate.ts";
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
  /** Sum over messages (memoised per block, so repeated calls are cheap). */
  messages(history: readonly Message[]): number;
}

function blockTokens(block: ContentBlock, count: TextCounter, media: MediaFormula): number {
  const image = (b: { source: unknown; detail?: unknown }) => imageBlockTokens(b.source, media, typeof b.detail === "string" ? b.detail : undefined);
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
      return image(block);
    case "tool_use":
      return BLOCK_OVERHEAD + count(block.name) + count(JSON.stringify(block.input ?? {}));
    case "tool_result": {
      const c = block.content;
      if (c === undefined) return BLOCK_OVERHEAD;
      if (typeof c === "string") return BLOCK_OVERHEAD + count(c);
      let n = BLOCK_OVERHEAD;
      for (const b of c) n += b.type === "text" ? count(b.text) : b.type === "image" ? image(b) : count(JSON.stringify(b));
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
function memoByContent(count: TextCounter, min: number, entries: number, chars: number): TextCounter {
  const memo = new Map<string, number>();
  let held = 0;
  return (s) => {
    if (s.length < min) return count(s);
    let n = memo.get(s);
    if (n === undefined) {
      n = count(s);
      if (memo.size >= entries || held + s.length > chars) (memo.clear(), (held = 0));
      if (s.length <= chars / 8) (memo.set(s, n), (held += s.length));
    }
    return n;
  };
}

export interface TokenCounterOptions {
  /** Whose image and PDF formulas to apply (./media.ts). Default "anthropic". */
  media?: MediaFormula;
}

/** A memoising counter over any text counter (the estimator by default). */
export function createTokenCounter(count: TextCounter = estimateTokens, opts: TokenCounterOptions = {}): TokenCounter {
  const media = opts.media ?? "anthropic";
  const byBlock = new WeakMap<object, number>();
  const byMessage = new WeakMap<Message, number>();
  const byString = new Map<string, number>();

  // Compactions count the same carried texts again at every snip (the user's messages, the
  // ledger, the work record): remember long ones. Short strings cost less to count than to hash.
  const text = memoByContent(count, TEXT_MEMO_MIN_CHARS, TEXT_MEMO_ENTRIES, TEXT_MEMO_CHARS);
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

  const messages = (h: readonly Message[]): number => {
    let n = 0;
    for (const m of h) n += message(m);
    return n;
  };

  return { text, block, message, messages };
}
