// What o200k spends on each symbol char, read off its vocabulary, for the estimator (./estimate.ts).
//
// Outside ASCII, o200k merges little: an emoji, arrow or box-drawing char is 1–4 tokens (the BPE
// of its UTF-8 bytes: common ones are a token, rarer ones a partial-byte token and the rest, the
// rarest a token per byte), and two such chars side by side almost never merge ("→→" is "→" "→",
// "🎉🎉" four tokens). A zero-width-joiner sequence is its parts and a token per joiner; a flag is
// two regional indicators of two tokens each. So the estimator prices these chars one by one at
// what BPE makes of each alone, with the few merges the vocabulary has around them: runs of one
// char ("──"), a char and the ASCII punctuation or newline after it ("”."), pairs ("❤️", "。”").

/** Chars with an entry: planes 0 and 1 (symbols and emoji; beyond them CJK extensions, tags). */
export const CHAR_TABLE_SIZE = 0x20000;
/** Entry fields: tokens of the char alone (bits 0–2) and after a space (bits 3–5), ... */
export const SPACED_SHIFT = 3;
/** ... whether a token is the char then ASCII punctuation ("”.", "…)"), ... */
export const JOINS = 0x40;
/** ... whether one is the char then a newline ("。\n", "—\n"; not "↓\n", though "↓\n\n" is), ... */
export const JOINS_NL = 0x2000;
/** ... and for its runs (bits 7–9) log2 R, R the longest of 2, 4, 8, ... 64 chars all of whose
 * runs of a power of two up to R are a token ("─" 16, "═" 8, "→" 0: none), and (bits 10–12)
 * log2 of the longest Q ≤ R whose runs of 1 to Q chars all are ("�" 4: "���" is one token). */
export const RUN_SHIFT = 7;
export const FILL_SHIFT = 10;
/** ... and whether it begins a pair of symbols that is one token ("❤" of "❤️", "。" of "。”"). */
export const PAIRS = 0x4000;

/** The table, and the pairs of different symbol chars that are one token, by pairKey. */
export interface SymbolTable {
  chars: Uint16Array;
  pairs: Set<number>;
}
export const pairKey = (first: number, second: number): number => first * CHAR_TABLE_SIZE + second;

/** What may follow a char in a token for it to join the ASCII punctuation after it. */
const JOINED = /^[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e\r\n]+$/;
const NEWLINES = /^[\r\n]+$/;
const NUMBER = /^\p{N}$/u;
const SYMBOL = /^[^\p{L}\p{N}\s\0-\x7f]$/u;

/**
 * The table from o200k's ranked token list (gpt-tokenizer's bpeRanks: a string per token that is
 * valid UTF-8, else its bytes), index = rank. Any list will do; an empty one gives a token per byte.
 */
export function buildSymbolTable(ranks: readonly (string | readonly number[])[]): SymbolTable {
  // Tokens that may occur inside one symbol char or a space and one (the last char not ASCII),
  // by their bytes as a latin1 string.
  const rank = new Map<string, number>();
  const table = new Uint16Array(CHAR_TABLE_SIZE);
  const runs = new Map<number, Set<number>>(); // char → lengths of its runs that are a token
  const pairs = new Set<number>();
  ranks.forEach((t, r) => {
    if (typeof t !== "string") {
      if (t.length <= 5) rank.set(String.fromCharCode(...t), r);
      return;
    }
    if (t.length <= 5 && t.charCodeAt(t.length - 1) >= 0x80) {
      const b = utf8(t);
      if (b.length <= 5) rank.set(b, r);
    }
    const cp = t.codePointAt(0)!;
    if (cp < 0x80 || cp >= CHAR_TABLE_SIZE) return;
    const w = cp > 0xffff ? 2 : 1;
    const rest = t.slice(w);
    if (rest === "\n") table[cp]! |= JOINS_NL;
    else if (rest && JOINED.test(rest) && !NEWLINES.test(rest)) table[cp]! |= JOINS;
    if (t.length > w && t === t.slice(0, w).repeat(t.length / w)) {
      if (!runs.has(cp)) runs.set(cp, new Set());
      runs.get(cp)!.add(t.length / w);
    } else if (rest && SYMBOL.test(t.slice(0, w)) && SYMBOL.test(rest) && rest.codePointAt(0)! < CHAR_TABLE_SIZE) {
      pairs.add(pairKey(cp, rest.codePointAt(0)!));
      table[cp]! |= PAIRS;
    }
  });
  const parts: string[] = [];
  /** Tokens BPE makes of these bytes: merge the lowest-ranked adjacent pair until none is a token. */
  const bpe = (bytes: string): number => {
    let n = bytes.length;
    for (let i = 0; i < n; i++) parts[i] = bytes[i]!;
    for (;;) {
      let best = -1, bestRank = Infinity;
      for (let i = 0; i + 1 < n; i++) {
        const r = rank.get(parts[i]! + parts[i + 1]!);
        if (r !== undefined && r < bestRank) (best = i), (bestRank = r);
      }
      if (best < 0) return n;
      parts[best] += parts[best + 1]!;
      for (let i = best + 1; i + 1 < n; i++) parts[i] = parts[i + 1]!;
      n--;
    }
  };
  for (let cp = 0x80; cp < CHAR_TABLE_SIZE; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue; // not chars (a lone surrogate is priced as U+FFFD)
    const b = utf8cp(cp);
    const alone = bpe(b);
    // A space merges into the char only if some token is the space and a prefix of its bytes,
    // and never into a number ("❶", "²", "½": o200k's split keeps a space before digits apart).
    let spaced = alone + 1;
    for (let k = 1; k <= b.length && !NUMBER.test(String.fromCodePoint(cp)); k++) {
      if (rank.has(" " + b.slice(0, k))) {
        spaced = bpe(" " + b);
        break;
      }
    }
    let lg = 0, q = 0;
    const lengths = runs.get(cp);
    if (lengths) {
      while (lg < 6 && lengths.has(2 << lg)) lg++;
      let fill = 1;
      while (lengths.has(fill + 1)) fill++;
      q = 31 - Math.clz32(Math.min(fill, 1 << lg));
    }
    table[cp]! |= alone | (spaced << SPACED_SHIFT) | (lg << RUN_SHIFT) | (q << FILL_SHIFT);
  }
  return { chars: table, pairs };
}

/** UTF-8 bytes as a latin1 string. */
const utf8 = (s: string): string => {
  let b = "";
  for (const ch of s) b += utf8cp(ch.codePointAt(0)!);
  return b;
};
const utf8cp = (cp: number): string =>
  cp < 0x80
    ? String.fromCharCode(cp)
    : cp < 0x800
      ? String.fromCharCode(0xc0 | (cp >> 6), 0x80 | (cp & 63))
      : cp < 0x10000
        ? String.fromCharCode(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63))
        : String.fromCharCode(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
