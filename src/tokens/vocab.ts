// o200k's letter tokens as a trie, for the estimator's letter pieces (./estimate.ts).
//
// A model of letters by length alone (most English words of up to 8 letters are one token) is
// right for English and code and wrong for everything o200k saw less of: Italian, Finnish,
// Klingon or Chuvash words, package names, month names glued by "_" split into 2–4 tokens where
// such a model charges one (8% under on locale catalogues, the worst held-out family). Walking
// the vocabulary itself — greedy longest match, which is what BPE's merges come to on most
// words — brought every letter-heavy family within 3% in the first measurement.
//
// The trie of o200k's own tokens is loaded by ./vocab-o200k.ts, with a table of what each
// symbol char costs (./vocab-chars.ts).
import { type SymbolTable, buildSymbolTable } from "./vocab-chars.ts";

/** Called on the string, never looked up on it (see charCodeAt in ./estimate.ts); a module constant (ibid.). */
const charCodeAt = String.prototype.charCodeAt;

/**
 * The trie. Node 0 is the root; a child is found by hashing (node, char index) into one
 * open-addressed typed array of (key, value) pairs: no object per node (320k nodes), one multiply
 * and usually one cache line per char. The root's children are a direct table.
 */
export interface Vocab {
  /** UTF-16 code unit → index in the trie's alphabet (0: no token has that char). */
  alpha: Uint16Array;
  /** Alphabet index → the root's child as a value (below), or -1. (Derived from `table`.) */
  root: Int32Array;
  /** (ASCII char, ASCII char) → the node two steps below the root as a value, or -1: most
   * pieces are ASCII, and their first two steps are the busiest. (Derived from `table`.) */
  ascii2: Int32Array;
  /** Pairs: key (node × 2^11 + char index, -1 empty), value (child × 2 + 1 if it ends a token). */
  table: Int32Array;
  mask: number;
  /** Code point (planes 0 and 1) → what o200k spends on that char (./vocab-chars.ts). */
  chars: Uint16Array;
  /** The pairs of symbols that are one token (./vocab-chars.ts). */
  pairs: Set<number>;
}

/** Tokens the trie holds: letters with at most one leading non-letter char and perhaps a
 * contraction ("don't", " we'll": o200k's split keeps them with the word), or that char alone. */
const LETTER_TOKEN = /^[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+(?:'(?:[stdmSTDM]|re|ve|ll|RE|VE|LL))?$|^[^\r\n\p{L}\p{N}]$/u;
/** CJK and hangul are priced per char by the scan, never as letter pieces. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** The first slot to probe for a key (linear probing from there). */
export const hash = (key: number, mask: number): number => (Math.imul(key, 0x9e3779b1) >>> 11) & mask;

/** Token chars after the first: only ASCII letters (most tokens; no regex needed). */
function asciiLetters(t: string): boolean {
  for (let i = 1; i < t.length; i++) {
    const c = t.charCodeAt(i) | 0x20;
    if (c < 0x61 || c > 0x7a) return false;
  }
  return true;
}

function keep(t: string): boolean {
  const c = t.charCodeAt(0);
  // An ASCII first char may lead when it is a letter or punctuation/space, not a digit or newline.
  if (c < 128 && c !== 0x0a && c !== 0x0d && (c < 0x30 || c > 0x39) && asciiLetters(t)) return true;
  return LETTER_TOKEN.test(t) && !CJK.test(t);
}

/** Build the trie from a token list (exported for tests: any list, not only o200k's); the symbol
 * table defaults to a token per UTF-8 byte of every char. */
export function buildVocab(tokens: Iterable<string>, symbols?: SymbolTable): Vocab {
  const alpha = new Uint16Array(65536);
  let letters = 0;
  const kept: string[] = [];
  let chars = 0;
  for (const t of tokens) {
    if (t.length === 0 || !keep(t)) continue;
    kept.push(t);
    chars += t.length;
    for (let i = 0; i < t.length; i++) {
      const c = t.charCodeAt(i);
      if (alpha[c] === 0) alpha[c] = ++letters;
    }
  }
  // key = node × 2^11 + char index needs fewer than 2^11 distinct chars and 2^20 nodes.
  if (letters >= 1 << 11) throw new Error(`lethe: too many distinct chars for the estimator's trie (${letters})`);
  // Sized for a node per third of the chars (o200k's letter tokens share most prefixes), grown if not.
  let size = 1 << 10;
  while (size < (2 * chars) / 3) size <<= 1;
  let table: Int32Array = new Int32Array(2 * size).fill(-1);
  let nodes = 1;
  const ends: number[] = [0];
  for (const t of kept) {
    let node = 0;
    for (let i = 0; i < t.length; i++) {
      const key = (node << 11) | alpha[t.charCodeAt(i)]!;
      let h = hash(key, size - 1);
      while (table[2 * h] !== -1 && table[2 * h] !== key) h = (h + 1) & (size - 1);
      if (table[2 * h] === -1) {
        if (nodes >= 1 << 20) throw new Error("lethe: too many nodes for the estimator's trie");
        table[2 * h] = key;
        table[2 * h + 1] = nodes++;
        ends.push(0);
        // At most half full: double and re-hash.
        if (2 * nodes > size) {
          table = rehash(table, size, 2 * size);
          size *= 2;
        }
        node = nodes - 1;
      } else node = table[2 * h + 1]!;
    }
    ends[node] = 1;
  }
  // Values become child × 2 + 1 where the child ends a token.
  for (let h = 0; h < size; h++) {
    if (table[2 * h] !== -1) table[2 * h + 1] = table[2 * h + 1]! * 2 + ends[table[2 * h + 1]!]!;
  }
  return finishVocab(alpha, table, symbols ?? buildSymbolTable([]));
}

/** The direct tables (the root's children, two ASCII steps) of a finished hash table. */
export function finishVocab(alpha: Uint16Array, table: Int32Array, { chars, pairs }: SymbolTable): Vocab {
  // A lone surrogate leading a piece is U+FFFD to o200k ("\ud800a" is "�a"). (No piece the
  // estimator prices holds an astral char, so their tokens' surrogates are never looked up.)
  if (alpha[0xfffd]) alpha.fill(alpha[0xfffd]!, 0xd800, 0xe000);
  const size = table.length / 2;
  const mask = size - 1;
  let letters = 0;
  for (let c = 0; c < 65536; c++) if (alpha[c]! > letters) letters = alpha[c]!;
  const root = new Int32Array(letters + 1).fill(-1);
  for (let h = 0; h < size; h++) {
    const key = table[2 * h]!;
    if (key !== -1 && key >>> 11 === 0) root[key & 0x7ff] = table[2 * h + 1]!;
  }
  const ascii2 = new Int32Array(128 * 128).fill(-1);
  for (let c1 = 0; c1 < 128; c1++) {
    const one = alpha[c1] ? root[alpha[c1]!]! : -1;
    if (one < 0) continue;
    for (let c2 = 0; c2 < 128; c2++) {
      if (!alpha[c2]) continue;
      const key = ((one >>> 1) << 11) | alpha[c2]!;
      let h = hash(key, mask);
      while (table[2 * h] !== -1 && table[2 * h] !== key) h = (h + 1) & mask;
      if (table[2 * h] === key) ascii2[(c1 << 7) | c2] = table[2 * h + 1]!;
    }
  }
  return { alpha, root, ascii2, table, mask, chars, pairs };
}

function rehash(table: Int32Array, size: number, to: number): Int32Array {
  const out = new Int32Array(2 * to).fill(-1);
  for (let h = 0; h < size; h++) {
    const key = table[2 * h]!;
    if (key === -1) continue;
    let g = hash(key, to - 1);
    while (out[2 * g] !== -1) g = (g + 1) & (to - 1);
    out[2 * g] = key;
    out[2 * g + 1] = table[2 * h + 1]!;
  }
  return out;
}

/**
 * Tokens of text[from, to) by greedy longest match: from each position the longest token, then
 * on: `hitCost` per token, `missCost` per char that starts no token. When `open` (the piece may
 * still grow: the text ends in it), a match that runs to the end counts as one token even if it
 * is only a prefix of tokens, so that appending a char never lowers the count (given missCost >=
 * hitCost >= 0: a closed piece never costs less than the same piece open).
 */
export function greedyTokens(v: Vocab, text: string, from: number, to: number, open: boolean, hitCost: number, missCost: number): number {
  const { alpha, root, ascii2, table, mask } = v;
  let n = -0;
  let i = from;
  while (i < to) {
    let last = -1;
    let j = i;
    const c0 = charCodeAt.call(text, j);
    let value = root[alpha[c0]!]!;
    if (value >= 0 && j + 1 < to) {
      const c1 = charCodeAt.call(text, j + 1);
      if ((c0 | c1) < 128) {
        // Two steps at once (a miss at the second step falls through to the loop below).
        const two = ascii2[(c0 << 7) | c1]!;
        if (two >= 0) {
          if ((value & 1) === 1) last = j + 1;
          j++;
          value = two;
        }
      }
    }
    while (value >= 0) {
      j++;
      if ((value & 1) === 1) last = j;
      if (j === to) break;
      const a = alpha[charCodeAt.call(text, j)]!;
      if (a === 0) break;
      const key = ((value >>> 1) << 11) | a;
      let h = hash(key, mask);
      let k = table[2 * h]!;
      while (k !== key && k !== -1) k = table[2 * (h = (h + 1) & mask)]!;
      value = k === -1 ? -1 : table[2 * h + 1]!;
    }
    if (open && j === to && j > i) return n + hitCost;
    if (last < 0) {
      n += missCost;
      const c = charCodeAt.call(text, i);
      i += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
    } else {
      n += hitCost;
      i = last;
    }
  }
  return n;
}
