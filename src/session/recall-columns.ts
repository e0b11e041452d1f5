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

/**
 * A column of strings. Encoded: the count and, for each kind of value (0: ASCII, 1: other), its
 * pages' sizes in chars (doubles); each value's length (int32) and kind (byte); the pages, ASCII
 * ones as latin1, the others as UTF-16: a third and a fifth of the cost of decoding UTF-8. A page
 * holds whole values, closed before the value that would take it past PAGE.
 */
export class StringColumn {
  private pages: [string[], string[]] = [[], []];
  private sizes: [number[], number[]] = [[], []];
  private lengths = new Int32Array(0);
  private kind = new Uint8Array(0);
  // Where each loaded value is, worked out when first asked for (most columns rarely are).
  private page: Int32Array | null = null;
  private start = new Float64Array(0);
  private more: string[] = [];

  get length(): number {
    return this.kind.length + this.more.length;
  }

  at(i: number): string {
    const n = this.kind.length;
    if (i >= n) return this.more[i - n]!;
    if (!this.page) this.locate();
    const from = this.start[i]!;
    // An empty value may name a page never made (nothing of its kind after it).
    return this.pages[this.kind[i]! as 0 | 1][this.page![i]!]?.slice(from, from + this.lengths[i]!) ?? "";
  }

  push(value: string): void {
    this.more.push(value);
  }

  /** Works out each loaded value's page and start; throws IndexDamaged when they do not fit the pages. */
  private locate(): void {
    const n = this.kind.length;
    const page = new Int32Array(n);
    this.start = new Float64Array(n);
    const at = [0, 0], used = [0, 0];
    for (let i = 0; i < n; i++) {
      const k = this.kind[i]!, len = this.lengths[i]!;
      if (k > 1 || len < 0) throw new IndexDamaged();
      if (len > 0 && used[k]! + len > this.sizes[k as 0 | 1][at[k]!]!) (at[k]!++, (used[k] = 0));
      if (len > 0 && used[k]! + len > (this.sizes[k as 0 | 1][at[k]!] ?? -1)) throw new IndexDamaged();
      page[i] = at[k]!;
      this.start[i] = used[k]!;
      used[k]! += len;
    }
    this.page = page;
  }

  encode(): Buffer[] {
    const n = this.length;
    const lengths = new Int32Array(n);
    const kinds = new Uint8Array(n);
    const parts: [string[], string[]] = [[], []];
    const sizes: [number[], number[]] = [[], []];
    const size = [0, 0];
    for (let i = 0; i < n; i++) {
      const v = this.at(i);
      const k = /^[\x00-\x7f]*$/.test(v) ? 0 : 1;
      lengths[i] = v.length;
      kinds[i] = k;
      parts[k].push(v);
      if (size[k]! > 0 && size[k]! + v.length > PAGE) (sizes[k].push(size[k]!), (size[k] = 0));
      size[k]! += v.length;
    }
    for (const k of [0, 1] as const) if (size[k]! > 0) sizes[k].push(size[k]!);
    const head = Buffer.alloc(8 * (3 + sizes[0].length + sizes[1].length));
    [n, sizes[0].length, sizes[1].length, ...sizes[0], ...sizes[1]].forEach((x, j) => head.writeDoubleLE(x, 8 * j));
    return [head, Buffer.from(lengths.buffer), Buffer.from(kinds.buffer), Buffer.from(parts[0].join(""), "latin1"), Buffer.from(parts[1].join(""), "utf16le")];
  }

  /** The column encoded next in `src`. Throws when it does not add up. */
  static decode(src: ByteSource): StringColumn {
    const head = src.take(24);
    const n = head.readDoubleLE(0), counts = [head.readDoubleLE(8), head.readDoubleLE(16)];
    const sizes = src.take(8 * (counts[0]! + counts[1]!));
    const c = new StringColumn();
    c.sizes = [Array.from({ length: counts[0]! }, (_, j) => sizes.readDoubleLE(8 * j)), Array.from({ length: counts[1]! }, (_, j) => sizes.readDoubleLE(8 * (counts[0]! + j)))];
    c.lengths = new Int32Array(arrayOf(src.take(n * 4)));
    c.kind = new Uint8Array(arrayOf(src.take(n)));
    // Each value's place is checked against the pages when first needed (locate).
    for (const k of [0, 1] as const) {
      if (!c.sizes[k].every((x) => Number.isInteger(x) && x > 0)) throw new IndexDamaged();
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
    c.loaded = new Int32Array(arrayOf(src.take(n * 4)));
    return c;
  }
}

/** A buffer's bytes as an ArrayBuffer of their own (typed arrays need their offset aligned). */
function arrayOf(buf: Buffer): ArrayBuffer {
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length) as ArrayBuffer;
}
