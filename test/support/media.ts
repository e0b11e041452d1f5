// Real image and PDF files built in memory for tests: valid headers (PNG, JPEG, GIF, WebP) and
// PDFs with text pages (plain or Flate-compressed content streams, optionally in object streams).
import { deflateSync } from "node:zlib";

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** A real (decodable) PNG of w×h grey pixels, padded with noise-like bytes to `minBytes`. */
export function png(width: number, height: number, minBytes = 0): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const row = Buffer.alloc(1 + width, 0x80);
  row[0] = 0;
  const raw = Buffer.concat(Array.from({ length: Math.min(height, 4096) }, () => row));
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk("IHDR", ihdr), pngChunk("IDAT", deflateSync(raw))];
  let size = parts.reduce((s, p) => s + p.length, 0) + 12;
  if (size < minBytes) {
    // An ancillary text chunk of pseudo-random bytes stands for the entropy of a real screenshot.
    const pad = Buffer.alloc(minBytes - size);
    let x = 12345;
    for (let i = 0; i < pad.length; i++) pad[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
    parts.push(pngChunk("zTXt", pad));
    size += pad.length + 12;
  }
  parts.push(pngChunk("IEND", Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/** A JPEG header with an APP1 segment of `exifBytes` before the SOF0 frame header. */
export function jpeg(width: number, height: number, exifBytes = 0): Buffer {
  const app1 = exifBytes > 0 ? Buffer.concat([Buffer.from([0xff, 0xe1, ((exifBytes + 2) >> 8) & 0xff, (exifBytes + 2) & 0xff]), Buffer.alloc(exifBytes, 0x41)]) : Buffer.alloc(0);
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app1, sof, Buffer.from([0xff, 0xd9])]);
}

export function gif(width: number, height: number): Buffer {
  const b = Buffer.from("GIF89a\0\0\0\0\0\0\0", "latin1");
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  return b;
}

/** A WebP (VP8X) header. */
export function webp(width: number, height: number): Buffer {
  const b = Buffer.alloc(30);
  b.write("RIFF", 0, "latin1");
  b.writeUInt32LE(22, 4);
  b.write("WEBPVP8X", 8, "latin1");
  b.writeUInt32LE(10, 16);
  b.writeUIntLE(width - 1, 24, 3);
  b.writeUIntLE(height - 1, 27, 3);
  return b;
}

export interface PdfOptions {
  /** Flate-compress the content streams. */
  compress?: boolean;
  /** Put the page objects inside a compressed object stream (PDF 1.5). */
  objectStream?: boolean;
}

/** A valid PDF with one page per entry, each showing its text (Helvetica, 12 pt, one Tj per line). */
export function pdf(pages: string[], opts: PdfOptions = {}): Buffer {
  const esc = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const objs: { body: string; stream?: Buffer; dict?: string }[] = [];
  const add = (o: (typeof objs)[number]) => objs.push(o) ;
  add({ body: "<< /Type /Catalog /Pages 2 0 R >>" });
  const kids = pages.map((_, i) => `${3 + i * 2} 0 R`).join(" ");
  add({ body: `<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>` });
  const fontId = 3 + pages.length * 2;
  const pageObjs: string[] = [];
  pages.forEach((text, i) => {
    const lines = text.split("\n");
    const ops = `BT /F1 12 Tf 72 720 Td 14 TL\n${lines.map((l) => `(${esc(l)}) Tj T*`).join("\n")}\nET`;
    const data = opts.compress ? deflateSync(Buffer.from(ops, "latin1")) : Buffer.from(ops, "latin1");
    const page = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${4 + i * 2} 0 R /Resources << /Font << /F1 ${fontId} 0 R >> >> >>`;
    pageObjs.push(page);
    add({ body: opts.objectStream ? "" : page });
    add({ body: "", stream: data, dict: `/Length ${data.length}${opts.compress ? " /Filter /FlateDecode" : ""}` });
  });
  add({ body: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>" });
  const chunks: Buffer[] = [Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "latin1")];
  let offset = chunks[0]!.length;
  const write = (s: string | Buffer) => {
    const b = typeof s === "string" ? Buffer.from(s, "latin1") : s;
    chunks.push(b);
    offset += b.length;
  };
  objs.forEach((o, i) => {
    const id = i + 1;
    const isPage = opts.objectStream && id >= 3 && id < fontId && (id - 3) % 2 === 0;
    if (isPage) return; // lives in the object stream
    write(`${id} 0 obj\n`);
    if (o.stream) {
      write(`<< ${o.dict} >>\nstream\n`);
      write(o.stream);
      write("\nendstream\nendobj\n");
    } else write(`${o.body}\nendobj\n`);
  });
  if (opts.objectStream) {
    const header = pageObjs.map((_, i) => `${3 + i * 2} 0`).join(" ") + "\n";
    let body = "";
    const offs: number[] = [];
    for (const p of pageObjs) {
      offs.push(body.length);
      body += `${p}\n`;
    }
    const head = pageObjs.map((_, i) => `${3 + i * 2} ${offs[i]}`).join(" ") + "\n";
    void header;
    const data = deflateSync(Buffer.from(head + body, "latin1"));
    write(`${objs.length + 1} 0 obj\n<< /Type /ObjStm /N ${pageObjs.length} /First ${head.length} /Length ${data.length} /Filter /FlateDecode >>\nstream\n`);
    write(data);
    write("\nendstream\nendobj\n");
  }
  write(`trailer\n<< /Root 1 0 R /Size ${objs.length + 2} >>\n%%EOF\n`);
  void offset;
  return Buffer.concat(chunks);
}

/** Text a page of prose holds: `words` words of plain English. */
export function prose(words: number, seed = 1): string {
  const vocab = "the context window of an agent fills with tool output and the model must keep what matters while older results are cleared summarised or saved to disk for later recall".split(" ");
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(vocab[(x >>> 8) % vocab.length]!);
    if (i % 12 === 11) out.push("\n");
  }
  return out.join(" ").replace(/ \n /g, "\n");
}
