// o200k's letter-token trie (./vocab.ts) and symbol table (./vocab-chars.ts) for the estimator:
// read from the file the build writes next to this module (`npm run build` →
// dist/tokens/o200k-letters.bin, ~2.8 MB, ~30 ms to load), or, where there is none or it is of an
// older format (running from source), built from gpt-tokenizer's token list (~0.35 s: parsing its
// 2.4 MB list is a third of it). Either way once per process, on the first estimate.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { type Vocab, buildVocab, finishVocab, hash } from "./vocab.ts";
import { CHAR_TABLE_SIZE, buildSymbolTable, pairKey } from "./vocab-chars.ts";

/** The prebuilt file, beside the compiled module. */
export const VOCAB_FILE = fileURLToPath(new URL("./o200k-letters.bin", import.meta.url));

/** "LVO2" read as a little-endian u32: another format (LVO1 had no char table) fails it. (The
 * arrays are read in the machine's byte order: a big-endian machine builds its own instead.) */
const MAGIC = 0x324f564c;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

let loaded: Vocab | undefined;

/** o200k's letter tokens as a trie, loaded on first use. */
export function o200kVocab(): Vocab {
  if (!loaded) loaded = readVocab(VOCAB_FILE) ?? buildO200kVocab();
  return loaded;
}

/** Built from gpt-tokenizer's token list. */
export function buildO200kVocab(): Vocab {
  const require = createRequire(import.meta.url);
  const id = require.resolve("gpt-tokenizer/cjs/bpeRanks/o200k_base");
  const ranks = (require(id) as { default: (string | number[])[] }).default;
  const vocab = buildVocab(ranks.filter((t): t is string => typeof t === "string"), buildSymbolTable(ranks));
  // The exact counter loads its own copy through the encoding module; this one is not needed again.
  delete require.cache[id];
  return vocab;
}

/**
 * The file: u32 magic, u32 table slots, u32 letters, u32 pairs; then per letter (u16 char code,
 * u16 alphabet index); then the occupied slots as (i32 key, i32 value) in slot order (re-inserted
 * in that order into a table of the same size, they land in the same slots); then the symbol
 * table: u16 per char (./vocab-chars.ts), u32 symbol pairs, and per pair (u32 first, u32 second).
 */
export function serializeVocab(v: Vocab): Buffer {
  const letters: number[] = [];
  for (let c = 0; c < 65536; c++) if (v.alpha[c] !== 0) letters.push(c, v.alpha[c]!);
  const pairs: number[] = [];
  for (let h = 0; h < v.table.length / 2; h++) if (v.table[2 * h] !== -1) pairs.push(v.table[2 * h]!, v.table[2 * h + 1]!);
  const buf = Buffer.alloc(16 + 2 * letters.length + 4 * pairs.length + 2 * CHAR_TABLE_SIZE + 4 + 8 * v.pairs.size);
  buf.writeUInt32LE(MAGIC, 0);
  buf.writeUInt32LE(v.table.length / 2, 4);
  buf.writeUInt32LE(letters.length / 2, 8);
  buf.writeUInt32LE(pairs.length / 2, 12);
  let at = 16;
  for (const x of letters) at = buf.writeUInt16LE(x, at);
  for (const x of pairs) at = buf.writeInt32LE(x, at);
  for (const x of v.chars) at = buf.writeUInt16LE(x, at);
  at = buf.writeUInt32LE(v.pairs.size, at);
  for (const key of v.pairs) at = buf.writeUInt32LE(key % CHAR_TABLE_SIZE, buf.writeUInt32LE(Math.floor(key / CHAR_TABLE_SIZE), at));
  return buf;
}

/** The trie in `file`, or undefined when there is none or it is not one (then it is rebuilt). */
export function readVocab(file: string): Vocab | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    return undefined;
  }
  if (buf.length < 16 || buf.readUInt32LE(0) !== MAGIC || !LITTLE_ENDIAN) return undefined;
  const size = buf.readUInt32LE(4);
  const letters = buf.readUInt32LE(8);
  const pairs = buf.readUInt32LE(12);
  const symbolsAt = 16 + 4 * letters + 8 * pairs;
  const symbolPairs = buf.length >= symbolsAt + 2 * CHAR_TABLE_SIZE + 4 ? buf.readUInt32LE(symbolsAt + 2 * CHAR_TABLE_SIZE) : -1;
  if (size === 0 || (size & (size - 1)) !== 0 || size > 1 << 24 || pairs * 2 > size || buf.length !== symbolsAt + 2 * CHAR_TABLE_SIZE + 4 + 8 * symbolPairs) return undefined;
  // Copied into aligned arrays (a Buffer from readFileSync may sit at any offset of its pool).
  const lettersAt = buf.byteOffset + 16;
  const pairsAt = lettersAt + 4 * letters;
  const letter = new Uint16Array(buf.buffer.slice(lettersAt, pairsAt));
  const pair = new Int32Array(buf.buffer.slice(pairsAt, pairsAt + 8 * pairs));
  const chars = new Uint16Array(buf.buffer.slice(pairsAt + 8 * pairs, pairsAt + 8 * pairs + 2 * CHAR_TABLE_SIZE));
  const symbols = { chars, pairs: new Set<number>() };
  for (let k = 0, at = symbolsAt + 2 * CHAR_TABLE_SIZE + 4; k < symbolPairs; k++, at += 8) symbols.pairs.add(pairKey(buf.readUInt32LE(at), buf.readUInt32LE(at + 4)));
  const alpha = new Uint16Array(65536);
  for (let k = 0; k < 2 * letters; k += 2) alpha[letter[k]!] = letter[k + 1]!;
  const table = new Int32Array(2 * size).fill(-1);
  const mask = size - 1;
  for (let k = 0; k < 2 * pairs; k += 2) {
    const key = pair[k]!;
    let h = hash(key, mask);
    while (table[2 * h] !== -1) h = (h + 1) & mask;
    table[2 * h] = key;
    table[2 * h + 1] = pair[k + 1]!;
  }
  return finishVocab(alpha, table, symbols);
}
