// The estimator's cache of priced pieces (src/tokens/vocab-cache.ts) gives what the trie walk
// gives, bit for bit: a cached estimate is the same number as an uncached one.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { type Vocab, buildVocab, greedyTokens } from "../../src/tokens/vocab.ts";
import { type PieceCache, keyedTokens, pieceCache } from "../../src/tokens/vocab-cache.ts";
import { o200kVocab } from "../../src/tokens/vocab-o200k.ts";
import { estimateTokens, estimateWith, currentWeights } from "../../src/tokens/estimate.ts";

/** The piece's key as the scan builds it: its last 8 chars, 7 bits each; whether one is not ASCII. */
function cached(pc: PieceCache, text: string, from = 0, to = text.length): number {
  let k0 = 0, k1 = 0, wide = false;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) wide = true;
    k1 = ((k1 << 7) | (k0 >>> 21)) & 0xfffffff;
    k0 = ((k0 << 7) | c) & 0xfffffff;
  }
  return pc.costs[keyedTokens(pc, text, from, to, k0, k1, wide)]!;
}

const same = (v: Vocab, pc: PieceCache, text: string, from = 0, to = text.length): void => {
  const want = greedyTokens(v, text, from, to, false, pc.hit, pc.miss);
  const got = cached(pc, text, from, to);
  assert.ok(Object.is(got, want), `${JSON.stringify(text.slice(from, to))}: cached ${got}, walked ${want}`);
};

// Pieces as the scan makes them: letters with perhaps one lead char, of every length the cache
// tells apart (up to 8, 9 to 16, longer), some not ASCII.
const lead = fc.constantFrom("", " ", "(", ".", "/", "'", "\t", "\u00a0", "\ufffd");
const letters = fc.array(fc.constantFrom("a", "e", "i", "n", "s", "t", "x", "q", "T", "H", "é", "ж", "ß", "'"), { minLength: 1, maxLength: 24 });
const piece = fc.tuple(lead, letters).map(([l, a]) => l + a.join(""));

test("a piece costs what the trie walk says, bit for bit, the first time and every time after", () => {
  const v = o200kVocab();
  for (const [hit, miss] of [[1, 2.17], [Math.PI / 10, Math.E / 3], [0, 1], [1, 0]] as const) {
    const pc = pieceCache(v, hit, miss);
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 20 }), (pieces) => {
        for (const p of [...pieces, ...pieces]) same(v, pc, p);
        // Inside a longer text, as the scan asks.
        const text = pieces.join("|");
        let at = 0;
        for (const p of pieces) {
          same(v, pc, text, at, at + p.length);
          at += p.length + 1;
        }
      }),
      { numRuns: 300 },
    );
  }
});

test("pieces that differ in one char, in their length or in where a char sits are priced apart", () => {
  // A vocabulary where these cost different amounts.
  const v = buildVocab(["a", "b", "ab", "aab", "abab", "ba", "bab", " ", " a", "'", "'s"]);
  const pc = pieceCache(v, 1, 2);
  const words = ["a", "aa", "aaa", "ab", "ba", "aab", "aba", "baa", "abab", "baba", "aabab", " a", " ab", "a ", "a's", "'s", "ss", "abababab", "babababa", "abababa", "ababababa", "aababababababab", "aababababababa"];
  for (let round = 0; round < 2; round++) for (const w of words) same(v, pc, w);
});

test("the cache empties itself when full and stays exact; many distinct costs are all kept apart", () => {
  const v = buildVocab(["ab", "abc", "b", "c", "ca", "d", "ef", "g", "hab"]);
  // Irrational costs: sums in another order differ in the last bits, so there are many of them.
  const pc = pieceCache(v, Math.PI / 7, Math.SQRT2 / 3);
  let seed = 7;
  const rnd = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const alphabet = "abcdefghxyz";
  const seen: string[] = [];
  for (let i = 0; i < 200_000; i++) {
    let w = "";
    for (let n = 1 + Math.floor(rnd() * 16); n > 0; n--) w += alphabet[Math.floor(rnd() * alphabet.length)];
    if (i % 1000 === 0) seen.push(w);
    same(v, pc, w);
  }
  for (const w of seen) same(v, pc, w);
  assert.equal(pc.costIndex.size, 256); // (more distinct costs than it keeps: the rest are not cached)
});

test("estimates do not depend on what the cache holds", () => {
  const texts = [
    "The quick brown fox doesn't jump over the lazy dog's getElementById().",
    "Die Übersetzung wird später geprüft; Привет, мир! naïve café — ça va?",
    JSON.stringify({ id: "toolu_01A2b3C4d5E6f7G8h9", input: { command: "npm test -- --grep 'token counter'" } }),
    "QmFzZTY0IGVuY29kZWQgc3RyaW5nIHdpdGggbWl4ZWQ ".repeat(300), // more long runs than the scan notes at once
  ];
  const w = currentWeights();
  const before = texts.map((t) => [estimateTokens(t), estimateWith(t, w), estimateWith(t, w, true)]);
  // Enough distinct pieces to empty the cache at least once.
  let filler = "";
  for (let i = 0; i < 120_000; i++) filler += ` w${i.toString(36).replace(/\d/g, (d) => "qrstuvwxyz"[Number(d)]!)}`;
  estimateTokens(filler);
  assert.deepEqual(texts.map((t) => [estimateTokens(t), estimateWith(t, w), estimateWith(t, w, true)]), before);
});
