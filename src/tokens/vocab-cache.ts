// A cache of letter pieces' tokens for the estimator (./estimate.ts), as o200k's own encoders
// cache words: text is mostly the same few thousand words, and walking the trie (./vocab.ts)
// costs about a cache miss per char (a third of the estimator's time before there was this).
import { type Vocab, greedyTokens } from "./vocab.ts";

/** Called on the string, never looked up on it (see charCodeAt in ./estimate.ts); a module constant (ibid.). */
const charCodeAt = String.prototype.charCodeAt;

/** log2 of the slots of the table of pieces of up to 8 chars, 8 bytes each (512 kB), and of the
 * table of pieces of 9 to 16 chars, 16 bytes each (512 kB). Open-addressed tables, emptied when
 * 3/4 full (49k and 24k pieces; the shared bench material has ~42k and ~9k distinct ones). */
const SHORT_BITS = 16;
const LONG_BITS = 15;
/** log2 of the slots of the front table (32 kB), probed first: the last short piece met at each
 * of its slots. The big table spreads its pieces over half a megabyte, so a probe there often
 * misses the processor's nearest caches; the pieces met most often stay in this one. */
const FRONT_BITS = 12;
/** A key word: 4 chars of 7 bits. Its top 4 bits hold part of the cost's index in `costs`. */
const KEY = 0xfffffff;
/** Index in `costs` where a cost from elsewhere is left (past the 256 distinct costs). */
const SCRATCH = 256;

/**
 * Closed pieces' costs under one vocabulary and one pair of costs, the pieces of ASCII chars
 * only. A slot of `short` is 2 i32: the piece's chars, 7 bits each, the last in the low bits of
 * the first word (0, 0: empty; no piece holds a NUL, so the key says the length too); a slot of
 * `long`, 4 i32 likewise, the first chars first. The top 4 bits of the words of a slot give the
 * index of its cost in `costs`: pieces of up to 16 letters cost a few distinct sums.
 */
export interface PieceCache {
  v: Vocab;
  hit: number;
  miss: number;
  short: Int32Array;
  shortUsed: number;
  /** The front table: slots as in `short`, each the last piece found at it (any piece in it is
   * in `short`, or was before `short` was last emptied: its cost's index stays right). */
  front: Int32Array;
  long: Int32Array;
  longUsed: number;
  /** The distinct costs met (and SCRATCH), where keyedTokens's caller reads each cost. */
  costs: Float64Array;
  costIndex: Map<number, number>;
}

let caches: PieceCache[] = [];

/** The cache for (v, hitCost, missCost): one of the last few used (calibration alternates
 * between a few weight vectors), or a new one. */
export function pieceCache(v: Vocab, hit: number, miss: number): PieceCache {
  const c = caches[0];
  if (c !== undefined && c.v === v && Object.is(c.hit, hit) && Object.is(c.miss, miss)) return c;
  let found = caches.find((x) => x.v === v && Object.is(x.hit, hit) && Object.is(x.miss, miss));
  if (!found) {
    const short = new Int32Array(2 << SHORT_BITS), long = new Int32Array(4 << LONG_BITS);
    found = { v, hit, miss, short, shortUsed: 0, front: new Int32Array(2 << FRONT_BITS), long, longUsed: 0, costs: new Float64Array(SCRATCH + 1), costIndex: new Map() };
  }
  caches = [found, ...caches.filter((x) => x !== found).slice(0, 3)];
  return found;
}

/**
 * greedyTokens(v, text, from, to, false, hit, miss), bit for bit, remembered by the piece: the
 * index in pc.costs where it is. (Not the number: a call the compiler does not inline would box
 * it, an allocation per piece.) The scan gives the key of a piece of up to 8 chars (`k1`, `k0`:
 * its chars, 7 bits each, the last in the low bits of k0; `wide`: one is not ASCII), built as it
 * reads them.
 */
export function keyedTokens(pc: PieceCache, text: string, from: number, to: number, k0: number, k1: number, wide: boolean): number {
  // The front table, here (small, for the compiler to inline); the big table in keyedMiss.
  const front = pc.front;
  const at = (Math.imul(k0 ^ Math.imul(k1, 0x9e3779b1), 0x85ebca6b) >>> (32 - FRONT_BITS)) << 1;
  const a = front[at]!, b = front[at + 1]!;
  return ((a ^ k0) & KEY) === 0 && ((b ^ k1) & KEY) === 0 && !wide && to - from <= 8 ? (a >>> 28) | ((b >>> 28) << 4) : keyedMiss(pc, text, from, to, k0, k1, wide);
}

function keyedMiss(pc: PieceCache, text: string, from: number, to: number, k0: number, k1: number, wide: boolean): number {
  if (wide || to - from > 8) return longTokens(pc, text, from, to);
  const keys = pc.short, mask = (2 << SHORT_BITS) - 1;
  const h = Math.imul(k0 ^ Math.imul(k1, 0x9e3779b1), 0x85ebca6b), front = pc.front, f = (h >>> (32 - FRONT_BITS)) << 1;
  let at = (h >>> (32 - SHORT_BITS)) << 1;
  for (let a = keys[at]!, b = keys[at + 1]!; (a | b) !== 0; a = keys[(at = (at + 2) & mask)]!, b = keys[at + 1]!) {
    if (((a ^ k0) & KEY) === 0 && ((b ^ k1) & KEY) === 0) {
      front[f] = a;
      front[f + 1] = b;
      return (a >>> 28) | ((b >>> 28) << 4);
    }
  }
  const ci = costAt(pc, greedyTokens(pc.v, text, from, to, false, pc.hit, pc.miss));
  if (ci === SCRATCH) return ci;
  if (4 * ++pc.shortUsed > 3 << SHORT_BITS) {
    keys.fill(0);
    pc.shortUsed = 1;
    at = (h >>> (32 - SHORT_BITS)) << 1;
  }
  keys[at] = front[f] = k0 | ((ci & 15) << 28);
  keys[at + 1] = front[f + 1] = k1 | ((ci >> 4) << 28);
  return ci;
}

/** Likewise for any other closed piece, its key read from the text (pieces of 9 to 16 ASCII chars). */
function longTokens(pc: PieceCache, text: string, from: number, to: number): number {
  const len = to - from;
  if (len > 16) return costAt(pc, greedyTokens(pc.v, text, from, to, false, pc.hit, pc.miss), true);
  let k0 = 0, k1 = 0, k2 = 0, k3 = 0, or = 0, i = from;
  for (const e = from + 4 < to ? from + 4 : to; i < e; i++) {
    const c = charCodeAt.call(text, i);
    or |= c;
    k0 = (k0 << 7) | c;
  }
  for (const e = from + 8 < to ? from + 8 : to; i < e; i++) {
    const c = charCodeAt.call(text, i);
    or |= c;
    k1 = (k1 << 7) | c;
  }
  for (const e = from + 12 < to ? from + 12 : to; i < e; i++) {
    const c = charCodeAt.call(text, i);
    or |= c;
    k2 = (k2 << 7) | c;
  }
  for (; i < to; i++) {
    const c = charCodeAt.call(text, i);
    or |= c;
    k3 = (k3 << 7) | c;
  }
  if (or > 0x7f) return costAt(pc, greedyTokens(pc.v, text, from, to, false, pc.hit, pc.miss), true);
  const keys = pc.long, mask = (4 << LONG_BITS) - 1;
  let at = (Math.imul(k0 ^ Math.imul(k1 ^ Math.imul(k2 ^ Math.imul(k3, 0x9e3779b1), 0x85ebca6b), 0xc2b2ae35), 0x27d4eb2f) >>> (32 - LONG_BITS)) << 2;
  const h = at;
  for (let a = keys[at]!; a !== 0; a = keys[(at = (at + 4) & mask)]!) {
    const b = keys[at + 1]!;
    if (((a ^ k0) & KEY) === 0 && ((b ^ k1) & KEY) === 0 && ((keys[at + 2]! ^ k2) & KEY) === 0 && ((keys[at + 3]! ^ k3) & KEY) === 0) return (a >>> 28) | ((b >>> 28) << 4);
  }
  const ci = costAt(pc, greedyTokens(pc.v, text, from, to, false, pc.hit, pc.miss));
  if (ci === SCRATCH) return ci;
  if (4 * ++pc.longUsed > 3 << LONG_BITS) {
    keys.fill(0);
    pc.longUsed = 1;
    at = h;
  }
  keys[at] = k0 | ((ci & 15) << 28);
  keys[at + 1] = k1 | ((ci >> 4) << 28);
  keys[at + 2] = k2;
  keys[at + 3] = k3;
  return ci;
}

/** The index in pc.costs of `cost`: one of the distinct costs, or SCRATCH (`once`, or when there
 * are 256 of them already; -0, which a Map would not tell from 0). */
function costAt(pc: PieceCache, cost: number, once = false): number {
  let ci = once || Object.is(cost, -0) ? SCRATCH : pc.costIndex.get(cost);
  if (ci === undefined) {
    ci = pc.costIndex.size < SCRATCH ? pc.costIndex.size : SCRATCH;
    if (ci < SCRATCH) pc.costIndex.set(cost, ci);
  }
  pc.costs[ci] = cost;
  return ci;
}
