// What an image or a PDF is, read from its own bytes: an image's dimensions (PNG, JPEG, GIF,
// WebP headers), a PDF's pages and shown text (within a bounded amount of work), and the one-line
// description placeholders use. What they cost is tokens/media.ts's business.
import { inflateSync } from "node:zlib";

export interface ImageSize {
  width: number;
  height: number;
}

/** Decodes the first `bytes` of a base64 string (enough for any header we read). */
function headOf(base64: string, bytes: number): Buffer {
  const chars = Math.min(base64.length, Math.ceil(bytes / 3) * 4);
  return Buffer.from(base64.slice(0, chars - (chars % 4)), "base64");
}

/** Width and height from a PNG, JPEG, GIF or WebP file's first bytes; undefined if unknown. */
export function imageSize(buf: Buffer): ImageSize | undefined {
  const ok = (width: number, height: number) => (width > 0 && height > 0 ? { width, height } : undefined);
  if (buf.length >= 24 && buf.readUInt32BE(0) === 0x89504e47 && buf.toString("latin1", 12, 16) === "IHDR") {
    return ok(buf.readUInt32BE(16), buf.readUInt32BE(20));
  }
  if (buf.length >= 10 && buf.toString("latin1", 0, 3) === "GIF") return ok(buf.readUInt16LE(6), buf.readUInt16LE(8));
  if (buf.length >= 30 && buf.toString("latin1", 0, 4) === "RIFF" && buf.toString("latin1", 8, 12) === "WEBP") {
    const kind = buf.toString("latin1", 12, 16);
    if (kind === "VP8X") return ok(1 + buf.readUIntLE(24, 3), 1 + buf.readUIntLE(27, 3));
    if (kind === "VP8L") {
      const b = buf.readUInt32LE(21);
      return ok(1 + (b & 0x3fff), 1 + ((b >> 14) & 0x3fff));
    }
    if (kind === "VP8 ") return ok(buf.readUInt16LE(26) & 0x3fff, buf.readUInt16LE(28) & 0x3fff);
    return undefined;
  }
  if (buf.length >= 4 && buf[0] === 0xff && buf[1] === 0xd8) {
    let i = 2;
    while (i + 9 < buf.length) {
      if (buf[i] !== 0xff) return undefined;
      const marker = buf[i + 1]!;
      if (marker === 0xff) {
        i++;
        continue;
      }
      const len = buf.readUInt16BE(i + 2);
      // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return ok(buf.readUInt16BE(i + 7), buf.readUInt16BE(i + 5));
      }
      i += 2 + len;
    }
  }
  return undefined;
}

/** The size of a base64 image (headers sit in the first bytes; a JPEG's frame header may follow large EXIF data). */
export function base64ImageSize(data: string): ImageSize | undefined {
  for (const bytes of [512, 65_536, 1 << 20]) {
    const size = imageSize(headOf(data, bytes));
    if (size || data.length <= (bytes / 3) * 4) return size;
  }
  return undefined;
}

// ── PDFs ──────────────────────────────────────────────────────────────────────────

export interface PdfInfo {
  pages: number;
  /** Text shown by the pages' content streams (what could be read). */
  text: string;
  /** Pages whose text could not be read (encrypted, unknown filters, work limit). */
  unreadPages: number;
}

/** Work limits: a hostile PDF must not make estimating expensive. */
const MAX_STREAMS = 4_000;
const MAX_INFLATED = 32 << 20;

/** Literal (…) and hex <…> strings shown by Tj, TJ, ' and " in a content stream. */
function shownText(ops: string): string {
  const out: string[] = [];
  const re = /\((?:\\[\s\S]|[^\\)])*\)|<([0-9A-Fa-f\s]*)>|(T[Jj]|T\*|'|"|ET)(?![A-Za-z])/g;
  let pending: string[] = [];
  for (let m = re.exec(ops); m; m = re.exec(ops)) {
    if (m[2] !== undefined) {
      if (m[2] === "ET" || m[2] === "T*") out.push("\n");
      else out.push(pending.join(""));
      pending = [];
      continue;
    }
    if (m[1] !== undefined) {
      const hex = m[1].replace(/\s+/g, "");
      // Two-byte CIDs are common in hex strings: count a glyph per 2 bytes, shown as a letter.
      pending.push("x".repeat(Math.floor(hex.length / 4) || Math.floor(hex.length / 2)));
    } else {
      pending.push(m[0].slice(1, -1).replace(/\\(?:[0-7]{1,3}|[\s\S])/g, (e) => (/^\\[nrtbf]$/.test(e) ? " " : e.length > 2 ? "?" : e[1]!)));
    }
  }
  return out.join("");
}

/** Pages and shown text of a PDF (bytes). */
export function pdfInfo(pdf: Buffer): PdfInfo {
  const raw = pdf.toString("latin1");
  let objects = raw;
  const texts: string[] = [];
  let inflated = 0;
  let streams = 0;
  let unreadable = 0;
  const streamRe = /<<((?:[^<>]|<<(?:[^<>]|<<[^<>]*>>)*>>|<[^<>]*>)*)>>\s*stream\r?\n/g;
  for (let m = streamRe.exec(raw); m && streams < MAX_STREAMS; m = streamRe.exec(raw)) {
    streams++;
    const dict = m[1]!;
    const start = m.index + m[0].length;
    const lenMatch = /\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(dict);
    let end = lenMatch ? start + Number(lenMatch[1]) : raw.indexOf("endstream", start);
    if (end < start || end > raw.length) end = raw.indexOf("endstream", start);
    if (end < 0) break;
    streamRe.lastIndex = end;
    let body: string | undefined;
    const filter = /\/Filter\s*\[?\s*\/(\w+)/.exec(dict)?.[1];
    if (!filter) body = raw.slice(start, end);
    else if (filter === "FlateDecode" && inflated < MAX_INFLATED) {
      try {
        const out = inflateSync(pdf.subarray(start, end), { maxOutputLength: MAX_INFLATED - inflated });
        inflated += out.length;
        body = out.toString("latin1");
      } catch {
        body = undefined;
      }
    }
    if (/\/Type\s*\/(?:XObject|XRef|Metadata)\b/.test(dict) || /\/Subtype\s*\/(?:Image|XML)\b/.test(dict)) continue;
    if (body === undefined) {
      if (!/\/Subtype|\/Type/.test(dict)) unreadable++;
      continue;
    }
    if (/\/Type\s*\/ObjStm\b/.test(dict)) objects += `\n${body}`;
    else if (/\bT[Jj]\b|'|"/.test(body) && /\bBT\b/.test(body)) texts.push(shownText(body));
  }
  const pages = (objects.match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []).length || Number(/\/Type\s*\/Pages\b[^>]*?\/Count\s+(\d+)/.exec(objects)?.[1] ?? 0) || 1;
  const text = texts.join("\n");
  const unreadPages = texts.length === 0 ? pages : Math.min(pages, unreadable);
  return { pages, text, unreadPages };
}

/** A one-line description of an image or document for placeholders and previews. */
export function describeMedia(block: { type: string; source?: unknown; title?: unknown }): string {
  const s = block.source as { type?: unknown; media_type?: unknown; data?: unknown; url?: unknown } | undefined;
  if (block.type === "image") {
    const size = s?.type === "base64" && typeof s.data === "string" ? base64ImageSize(s.data) : undefined;
    const kind = typeof s?.media_type === "string" ? s.media_type : s?.type === "url" ? `url ${String(s.url).slice(0, 80)}` : "image";
    return `image ${kind}${size ? ` ${size.width}×${size.height}` : ""}`;
  }
  const title = typeof block.title === "string" ? ` "${block.title.slice(0, 80)}"` : "";
  if (s?.type === "base64" && typeof s.data === "string" && s.media_type === "application/pdf") {
    const { pages } = pdfInfo(Buffer.from(s.data, "base64"));
    return `PDF document${title}, ${pages} page${pages === 1 ? "" : "s"}`;
  }
  return `${block.type}${title}`;
}
