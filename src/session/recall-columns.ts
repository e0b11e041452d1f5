// Columns for recall's archive (./recall-archive.ts), so that loading its index from disk
// (./recall-index.ts) costs about one copy of its bytes, not an object and a string per message: a
// column loaded from disk keeps its values in a few big strings and slices a value out when asked;
// values appended later (the transcript grew) are kept as they come.

/** An index file whose columns do not add up (edited, or damaged): it is rebuilt. */
export class IndexDamaged extends Error {
  constructor() {
    super("recall index: a column does not add up");
  }
}

/** Where decode reads an encoded column from: the index file, in order. */
export interface ByteSource {
  /** The next `n` bytes, in a buffer of their own. */
  take(n: number): Buffer;
  /** The next `bytes` bytes decoded (through a buffer reused from call to call: no fresh memory for the bytes). */
  text(bytes: number, encoding: "latin1" | "utf16le"): string;
}

/** Texts are read in pages of about this many chars: a page is one string, sliced for the values in it. */
const PAGE = 4 << 20;
/** Chars of one kind a column can place (its offsets are int32); a larger column is not written. */
const MAX_CHARS = 2 ** 31 - 1;

/**
 * A column of strings. Encoded: the count and, for each kind of value (0: ASCII, 1: other), its
 * pages' sizes in chars (doubles); each value's length (int32); for each kind, the chars of that
 * kind before each value and after the last (n + 1 int32s: a value takes chars of its own kind
 * only); each value's page of its kind (int32); the pages, ASCII ones as latin1, the others as
 * UTF-16: a third and a fifth of the cost of decoding UTF-8. A page holds whole values, closed
 * before the value that would take it past PAGE.
 *
 * Where a value is comes with it, so a column loaded from disk is ready to read: no pass over its
 * values first (that pass ran in a new process's first query, on cold code: about 10 ms over the
 * columns of a 50,000-message session). Each value read is checked against its neighbours'
 * offsets, its length and its page, so an edited offset, length or page makes the values it
 * touches throw IndexDamaged instead of slicing wrong.
 */
export class StringColumn {
  private pages: [string[], string[]] = [[], []];
  private sizes: [number[], number[]] = [[], []];
  /** Where each page starts among the chars of its kind. */
  private pageStart: [number[], number[]] = [[], []];
  private lengths = new Int32Array(0);
  private before: [Int32Array, Int32Array] = [new Int32Array(1), new Int32Array(1)];
  private page = new Int32Array(0);
  private more: string[] = [];

  get length(): number {
    return this.lengths.length + this.more.length;
  }

  at(i: number): string {
    const n = this.lengths.length;
    if (i >= n) return this.more[i - n]!;
    const len = this.lengths[i]!;
    const a = this.before[0], b = this.before[1];
    const a0 = a[i]!, b0 = b[i]!;
    // A value of kind 0 moves only the kind-0 offsets, by its length; one of kind 1 only the other.
    let k: 0 | 1, from: number;
    if (b[i + 1] === b0 && a[i + 1]! - a0 === len) (k = 0), (from = a0);
    else if (a[i + 1] === a0 && b[i + 1]! - b0 === len) (k = 1), (from = b0);
    else throw new IndexDamaged();
    if (len === 0) return "";
    const p = this.page[i]!, start = this.pageStart[k][p]!;
    // Inside its page (a page that does not exist compares false).
    if (!(len > 0 && from >= start && from + len <= start + this.sizes[k][p]!)) throw new IndexDamaged();
    return this.pages[k][p]!.slice(from - start, from - start + len);
  }

  push(value: string): void {
    this.more.push(value);
  }

  encode(): Buffer[] {
    const n = this.length;
    const lengths = new Int32Array(n);
    const before = [new Int32Array(n + 1), new Int32Array(n + 1)] as const;
    const page = new Int32Array(n);
    const parts: [string[], string[]] = [[], []];
    const sizes: [number[], number[]] = [[], []];
    const size = [0, 0], total = [0, 0];
    for (let i = 0; i < n; i++) {
      const v = this.at(i);
      const k = /^[\x00-\x7f]*$/.test(v) ? 0 : 1;
      lengths[i] = v.length;
      before[0][i] = total[0]!;
      before[1][i] = total[1]!;
      parts[k].push(v);
      if (size[k]! > 0 && size[k]! + v.length > PAGE) (sizes[k].push(size[k]!), (size[k] = 0));
      page[i] = sizes[k].length;
      size[k]! += v.length;
      total[k]! += v.length;
      if (total[k]! > MAX_CHARS) throw new RangeError(`recall index: a column of more than ${MAX_CHARS} chars`);
    }
    before[0][n] = total[0]!;
    before[1][n] = total[1]!;
    for (const k of [0, 1] as const) if (size[k]! > 0) sizes[k].push(size[k]!);
    const head = Buffer.alloc(8 * (3 + sizes[0].length + sizes[1].length));
    [n, sizes[0].length, sizes[1].length, ...sizes[0], ...sizes[1]].forEach((x, j) => head.writeDoubleLE(x, 8 * j));
    const bytes = (a: Int32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    return [head, bytes(lengths), bytes(before[0]), bytes(before[1]), bytes(page), Buffer.from(parts[0].join(""), "latin1"), Buffer.from(parts[1].join(""), "utf16le")];
  }

  /** The column encoded next in `src`. Throws when it does not add up. */
  static decode(src: ByteSource): StringColumn {
    const head = src.take(24);
    const n = head.readDoubleLE(0), counts = [head.readDoubleLE(8), head.readDoubleLE(16)];
    if (!Number.isInteger(n) || n < 0 || !counts.every((x) => Number.isInteger(x) && x >= 0)) throw new IndexDamaged();
    const sizes = src.take(8 * (counts[0]! + counts[1]!));
    const c = new StringColumn();
    c.sizes = [Array.from({ length: counts[0]! }, (_, j) => sizes.readDoubleLE(8 * j)), Array.from({ length: counts[1]! }, (_, j) => sizes.readDoubleLE(8 * (counts[0]! + j)))];
    c.lengths = int32s(src, n);
    c.before = [int32s(src, n + 1), int32s(src, n + 1)];
    c.page = int32s(src, n);
    for (const k of [0, 1] as const) {
      if (!c.sizes[k].every((x) => Number.isInteger(x) && x > 0)) throw new IndexDamaged();
      let at = 0;
      c.pageStart[k] = c.sizes[k].map((x) => ((at += x), at - x));
      c.pages[k] = c.sizes[k].map((x) => src.text(k === 0 ? x : x * 2, k === 0 ? "latin1" : "utf16le"));
    }
    return c;
  }
}

/** A column of small integers (int32): a typed array from disk, then appended ones. */
export class IntColumn {
  private loaded = new Int32Array(0);
  private more: number[] = [];

  get length(): number {
    return this.loaded.length + this.more.length;
  }

  at(i: number): number {
    const n = this.loaded.length;
    return i < n ? this.loaded[i]! : this.more[i - n]!;
  }

  set(i: number, v: number): void {
    const n = this.loaded.length;
    if (i < n) this.loaded[i] = v;
    else this.more[i - n] = v;
  }

  push(v: number): void {
    this.more.push(v);
  }

  encode(): Buffer[] {
    const all = new Int32Array(this.length);
    for (let i = 0; i < all.length; i++) all[i] = this.at(i);
    const head = Buffer.alloc(8);
    head.writeDoubleLE(all.length, 0);
    return [head, Buffer.from(all.buffer)];
  }

  static decode(src: ByteSource): IntColumn {
    const n = src.take(8).readDoubleLE(0);
    const c = new IntColumn();
    c.loaded = int32s(src, n);
    return c;
  }
}

/** The next `n` int32s of `src`, in an array of their own. */
function int32s(src: ByteSource, n: number): Int32Array<ArrayBuffer> {
  if (!Number.isInteger(n) || n < 0) throw new IndexDamaged();
  const buf = src.take(n * 4);
  // A buffer that has its memory to itself is used as it is; one in a shared pool is copied out
  // (typed arrays need their offset aligned).
  const own = buf.buffer as ArrayBuffer;
  if (buf.byteOffset === 0 && own.byteLength === buf.length) return new Int32Array(own, 0, n);
  return new Int32Array(own.slice(buf.byteOffset, buf.byteOffset + buf.length));
}
