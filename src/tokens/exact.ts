// Exact o200k token count (gpt-tokenizer), safe on pathological input.
//
// o200k splits text with a regex into pieces and runs BPE inside each piece. BPE is quadratic in
// the piece length, and a run without a piece boundary (100 KB of one letter, of spaces, of "=")
// is a single piece: seconds of CPU. So text is cut wherever a boundary-free span exceeds
// MAX_SPAN chars and the parts are counted separately. Ordinary text has boundaries every few
// chars and is never cut, so its count is exact. Each forced cut can add about one token (a
// merge across the cut is lost): at most ~1 token per 1,000 chars of such a run, e.g. 180
// instead of 157 for 20,000 spaces, 320 instead of 312 for 20,000 "=", exact for "a" or "中".
import { createRequire } from "node:module";

type Encoding = typeof import("gpt-tokenizer/encoding/o200k_base");
let encoding: Encoding | undefined;

/**
 * The o200k tables take ~150 ms to load, and the engine never needs them (it estimates): they
 * load on the first exact count, synchronously (gpt-tokenizer ships a CommonJS build), so
 * importing lethe stays fast.
 */
function o200k(text: string, options: { disallowedSpecial: Set<string> }): number {
  if (!encoding) {
    encoding = createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as Encoding;
    // The merge cache (LRU over pieces) costs more than it saves once full: 2–5× slower.
    encoding.setMergeCacheSize(0);
  }
  return encoding.countTokens(text, options);
}

/** Special-token text ("<|endoftext|>") in user content is counted as plain text, not rejected. */
const OPTIONS = { disallowedSpecial: new Set<string>() };

/** Longest boundary-free span handed to the tokenizer whole (BPE of 1,000 chars: 1–10 ms). */
export const MAX_SPAN = 1000;

const isLetter = (c: number): boolean => (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isCjkLetter = (c: number): boolean => (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3041 && c <= 0x3096) || (c >= 0x30a1 && c <= 0x30fa);
// 、 。 「 」 『 』 and fullwidth ！ （ ） ， ： ； ？
const isCjkPunct = (c: number): boolean => c === 0x3001 || c === 0x3002 || (c >= 0x300c && c <= 0x300f) || c === 0xff01 || c === 0xff08 || c === 0xff09 || c === 0xff0c || c === 0xff1a || c === 0xff1b || c === 0xff1f;
// JavaScript's \s, which the o200k regex uses.
const isSpace = (c: number): boolean =>
  c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;

/**
 * True when no o200k piece spans position i (between text[i-1] and text[i]), whatever the rest
 * of the text: counting text[..i] and text[i..] separately then gives the exact total.
 * Only cheap, certain cases are recognised (a space after a non-space, a letter or digit run
 * ending, a line starting); the regex pieces they rely on are in the comments.
 */
export function isPieceBoundary(text: string, i: number): boolean {
  if (i <= 0 || i >= text.length) return true;
  const a = text.charCodeAt(i - 1), b = text.charCodeAt(i);
  // A space after anything but whitespace starts a piece: only whitespace pieces take a space
  // after their last char (a space before a word or punctuation leads the next piece).
  if (b === 0x20 && !isSpace(a)) return true;
  // Letter pieces end at the last letter (only a contraction like "'s" extends them).
  if ((isLetter(a) || isCjkLetter(a)) && ((b < 0x80 && !isLetter(b) && b !== 0x27) || isCjkPunct(b))) return true;
  // Digit pieces are groups of up to 3 counted from the start of the run.
  if (isDigit(a) && b < 0x80 && !isDigit(b)) return true;
  // Newlines end whitespace pieces; after punctuation only [\r\n/]* extends a piece.
  if ((a === 0x0a || a === 0x0d) && !isSpace(b) && b !== 0x2f) return true;
  return false;
}

/** Positions where countTokens cuts `text`: only inside boundary-free spans longer than maxSpan. */
export function forcedCuts(text: string, maxSpan = MAX_SPAN): number[] {
  const cuts: number[] = [];
  if (text.length <= maxSpan) return cuts;
  let last = 0; // the latest piece boundary or cut
  for (let i = 1; i < text.length; i++) {
    if (isPieceBoundary(text, i)) last = i;
    else if (i - last >= maxSpan) {
      // Never split a surrogate pair.
      const cut = (text.charCodeAt(i) & 0xfc00) === 0xdc00 ? i + 1 : i;
      if (cut >= text.length) break;
      cuts.push(cut);
      last = cut;
      i = cut;
    }
  }
  return cuts;
}

/** Exact o200k token count (see the header for the one, tiny, exception). */
export function countTokens(text: string): number {
  if (text.length <= MAX_SPAN) return o200k(text, OPTIONS);
  const cuts = forcedCuts(text);
  if (cuts.length === 0) return o200k(text, OPTIONS);
  let total = 0, start = 0;
  for (const cut of cuts) {
    total += o200k(text.slice(start, cut), OPTIONS);
    start = cut;
  }
  return total + o200k(text.slice(start), OPTIONS);
}
