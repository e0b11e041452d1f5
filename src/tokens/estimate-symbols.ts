// Symbol chars in the estimator's scan (./estimate.ts): emoji, flags, arrows, math, box drawing,
// joiners, variation selectors, lone surrogates. Each costs what o200k's BPE makes of it alone
// (./vocab-chars.ts): they seldom merge with their neighbours, so a run of them is the sum. The
// scan used to price them by position in a punctuation run, and took a run of different emoji
// sharing a high surrogate for a repeated char: 100 × "😀" was 19 tokens for 100.
import { CHAR_TABLE_SIZE, FILL_SHIFT, JOINS, JOINS_NL, PAIRS, RUN_SHIFT, SPACED_SHIFT, pairKey } from "./vocab-chars.ts";
import type { Vocab } from "./vocab.ts";

/** Called on the string, never looked up on it (see charCodeAt in ./estimate.ts); a module constant (ibid.). */
const charCodeAt = String.prototype.charCodeAt;

/** A char beyond the table (CJK extensions, tags, private use): a token per UTF-8 byte, BPE's most. */
const BEYOND = 4 | (5 << SPACED_SHIFT);

/**
 * The code point of the astral char whose high surrogate `hi` is text[i], or U+FFFD for a lone
 * surrogate: o200k encodes text to UTF-8, which replaces one with U+FFFD ("a\ud800b" is "a" "�" "b").
 */
export function codePointAt(text: string, i: number, hi: number): number {
  const lo = i + 1 < text.length ? charCodeAt.call(text, i + 1) : 0;
  return hi <= 0xdbff && lo >= 0xdc00 && lo <= 0xdfff ? ((hi - 0xd800) << 10) + (lo - 0xdc00) + 0x10000 : 0xfffd;
}

/**
 * Tokens of a run of `k` of a char whose runs of 2, 4, ... 2^lg and of 1 to 2^q chars are tokens
 * (greedy: runs of 2^lg, then powers of two down to 2^q, then one for the rest), or more: the most
 * for any shorter run, as o200k's count of "═══" (2) exceeds that of "════" (1) and the estimate
 * must not drop when a char is appended.
 */
function runTokens(k: number, lg: number, q: number): number {
  const m = k >> lg, r = k & ((1 << lg) - 1), hi = r >> q, fill = q > 0 ? 1 : 0;
  const below = hi > 0 ? 31 - Math.clz32(hi) + fill : 0; // a shorter remainder, all 1-bits
  const p = Math.max(popcount(hi) + ((r & ((1 << q) - 1)) !== 0 ? 1 : 0), below);
  return m === 0 ? p : Math.max(m + p, m - 1 + lg - q + fill);
}
function popcount(x: number): number {
  let n = 0;
  for (; x > 0; x &= x - 1) n++;
  return n;
}

/**
 * Tokens the symbol char `c` adds: its own, or after a space that leads it (`spaced`) those of
 * both; as the `same`-th of a run of it (same ≥ 2), its share of the run's tokens, the run
 * counted from its second char if a space leads it (" ————" is " —" "——" "—", " ══" " " "═" "═");
 * none when it makes one token with the symbol `before` it ("❤️", "。”"; -1: none).
 */
export function symbolTokens(v: Vocab, c: number, same: number, spaced: boolean, runLed: boolean, before: number): number {
  const chars = v.chars;
  if (before >= 0 && before < CHAR_TABLE_SIZE && (chars[before]! & PAIRS) !== 0 && v.pairs.has(pairKey(before, c))) return 0;
  const e = c < CHAR_TABLE_SIZE ? chars[c]! : BEYOND;
  const lg = (e >> RUN_SHIFT) & 7, q = (e >> FILL_SHIFT) & 7;
  if (lg > 0 && same >= 2) {
    const k = runLed ? same - 1 : same;
    return (e & 7) * (runTokens(k, lg, q) - (k > 1 ? runTokens(k - 1, lg, q) : 0));
  }
  return spaced ? (e >> SPACED_SHIFT) & 7 : e & 7;
}

/** What no token joins to the symbol `c` (the `same`-th of a run of it) after it: 1 ASCII
 * punctuation, 2 newlines. After most symbols such a char is a token of its own ("🎉!" is "🎉"
 * "!"), not after "”" ("”." is one); after a run, joining would split the run ("………\n" is
 * "……" "…\n"), so it is counted apart too. */
export function symbolEnds(v: Vocab, c: number, same: number): number {
  const e = c < CHAR_TABLE_SIZE ? v.chars[c]! : 0;
  if (same >= 2 && (e >> RUN_SHIFT) & 7) return 3;
  return ((e & JOINS) === 0 ? 1 : 0) | ((e & (JOINS | JOINS_NL)) === 0 ? 2 : 0);
}
