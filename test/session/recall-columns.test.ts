// The columns recall's index is kept in (src/session/recall-columns.ts): every value comes back
// exactly as it went in (empty, ASCII, any other UTF-16 including lone surrogates, values longer
// than a page, many pages), and a column read back takes appended values and changes as before.
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ByteSource, IndexDamaged, IntColumn, StringColumn } from "../../src/session/recall-columns.ts";

function source(buf: Buffer): ByteSource {
  let pos = 0;
  const take = (n: number) => {
    if (pos + n > buf.length) throw new Error("cut short");
    return buf.subarray(pos, (pos += n));
  };
  return { take: (n) => Buffer.from(take(n)), text: (n, enc) => take(n).toString(enc) };
}

test("a string column read back gives every value exactly, across pages; appended values follow", () => {
  const values = ["", "plain ascii", "", "émigré 日本 🎉", "lone \ud800 high", "lone \udc00 low", "x".repeat(5_000_000), "", "ü".repeat(3_000_000), "tail"];
  for (let i = 0; i < 3_000; i++) values.push(i % 3 === 0 ? "" : i % 3 === 1 ? `line ${i} `.repeat(300) : `zeile ${i} ä `.repeat(200));
  const c = new StringColumn();
  for (const v of values) c.push(v);
  const read = StringColumn.decode(source(Buffer.concat(c.encode())));
  assert.equal(read.length, values.length);
  for (let i = 0; i < values.length; i++) assert.ok(read.at(i) === values[i], `value ${i}`);
  read.push("after");
  assert.equal(read.at(values.length), "after");
  // Read back again, appended value included.
  const again = StringColumn.decode(source(Buffer.concat(read.encode())));
  assert.equal(again.at(values.length), "after");
  assert.equal(again.at(6), values[6]);
  // Every value empty, or no value at all.
  for (const vs of [["", "", ""], []]) {
    const e = new StringColumn();
    for (const v of vs) e.push(v);
    const r = StringColumn.decode(source(Buffer.concat(e.encode())));
    assert.deepEqual(Array.from({ length: r.length }, (_, i) => r.at(i)), vs);
  }
});

test("an int column read back takes changes and appended values; a column cut short throws", () => {
  const c = new IntColumn();
  for (const v of [0, 1, -5, 2 ** 31 - 1]) c.push(v);
  const read = IntColumn.decode(source(Buffer.concat(c.encode())));
  read.set(1, 0);
  read.push(7);
  read.set(4, 8);
  assert.deepEqual(Array.from({ length: read.length }, (_, i) => read.at(i)), [0, 0, -5, 2 ** 31 - 1, 8]);
  const s = new StringColumn();
  s.push("abc");
  s.push("de");
  const bytes = Buffer.concat(s.encode());
  assert.throws(() => StringColumn.decode(source(bytes.subarray(0, bytes.length - 1))));
  // A length that does not fit the pages: found when the values are first read.
  const edited = Buffer.from(bytes);
  edited.writeInt32LE(4, 8 * 4);
  const read2 = StringColumn.decode(source(edited));
  assert.throws(() => read2.at(0), IndexDamaged);
});

test("each value read is checked where it lies: an edited offset, length or page throws IndexDamaged for the values it touches, the others read as before", () => {
  // Both kinds interleaved, empty values among them, several pages of each (values of 1.5M chars: pages of 4M chars hold two).
  const values = ["a".repeat(1_500_000), "ü".repeat(1_500_000), "", "b".repeat(1_500_000), "é".repeat(1_500_000), "c".repeat(1_500_000), "ß".repeat(1_500_000), "tail", "ok ✓"];
  const c = new StringColumn();
  for (const v of values) c.push(v);
  const parts = c.encode(); // head, lengths, chars of kind 0 before each value, of kind 1, pages, latin1, UTF-16
  assert.equal(parts.length, 7);
  const n = values.length;
  const read = (edit: (p: Buffer[]) => void) => {
    const copy = parts.map((p) => Buffer.from(p));
    edit(copy);
    return StringColumn.decode(source(Buffer.concat(copy)));
  };
  const check = (what: string, edit: (p: Buffer[]) => void, touched: number[]) => {
    const r = read(edit);
    for (let i = 0; i < n; i++) {
      if (touched.includes(i)) assert.throws(() => r.at(i), IndexDamaged, `${what}: value ${i}`);
      else assert.ok(r.at(i) === values[i], `${what}: value ${i} reads as before`);
    }
  };
  check("nothing edited", () => {}, []);
  // Value 3 ("b…") is the third of kind 0: the chars of kind 0 before it, moved by one either way.
  check("an offset moved on", (p) => p[2]!.writeInt32LE(p[2]!.readInt32LE(4 * 3) + 1, 4 * 3), [2, 3]);
  check("an offset moved back", (p) => p[2]!.writeInt32LE(p[2]!.readInt32LE(4 * 3) - 1, 4 * 3), [2, 3]);
  check("a kind-1 offset moved", (p) => p[3]!.writeInt32LE(p[3]!.readInt32LE(4 * 4) + 2, 4 * 4), [3, 4]);
  check("a length", (p) => p[1]!.writeInt32LE(values[5]!.length - 1, 4 * 5), [5]);
  check("an empty value made longer", (p) => p[1]!.writeInt32LE(1, 4 * 2), [2]);
  // Value 5 is on the second page of kind 0: named the first, or one that does not exist.
  check("a page", (p) => p[4]!.writeInt32LE(0, 4 * 5), [5]);
  check("a page that does not exist", (p) => p[4]!.writeInt32LE(9, 4 * 7), [7]);
  check("a negative page", (p) => p[4]!.writeInt32LE(-1, 4 * 8), [8]);
  // A column whose parts do not add up to its count is cut short, not read.
  assert.throws(() => StringColumn.decode(source(Buffer.concat(parts.slice(0, 4)))));
});
