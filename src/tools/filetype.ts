// Telling text from binary by a file's first bytes, and naming common binary formats.
import { closeSync, openSync, readSync } from "node:fs";
import { extname } from "node:path";

export const SNIFF_BYTES = 8_192;

const IMAGE_EXTENSIONS: Record<string, string> = {
  ".png": "PNG image",
  ".jpg": "JPEG image",
  ".jpeg": "JPEG image",
  ".gif": "GIF image",
  ".webp": "WebP image",
  ".bmp": "BMP image",
  ".ico": "ICO image",
  ".tif": "TIFF image",
  ".tiff": "TIFF image",
  ".avif": "AVIF image",
  ".heic": "HEIC image",
};

const startsWith = (b: Buffer, bytes: number[], at = 0) => bytes.every((x, i) => b[at + i] === x);
const ascii = (b: Buffer, s: string, at = 0) => b.length >= at + s.length && b.toString("latin1", at, at + s.length) === s;

/** A name for well-known binary formats, from magic numbers. */
export function magicType(b: Buffer): string | null {
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47])) return "PNG image";
  if (startsWith(b, [0xff, 0xd8, 0xff])) return "JPEG image";
  if (ascii(b, "GIF87a") || ascii(b, "GIF89a")) return "GIF image";
  if (ascii(b, "RIFF") && ascii(b, "WEBP", 8)) return "WebP image";
  if (ascii(b, "BM") && b.length > 14 && b[14] !== undefined && [12, 40, 56, 108, 124].includes(b[14])) return "BMP image";
  if (ascii(b, "%PDF")) return "PDF document";
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04])) return "ZIP archive (or jar/docx/xlsx)";
  if (startsWith(b, [0x1f, 0x8b])) return "gzip compressed data";
  if (ascii(b, "BZh")) return "bzip2 compressed data";
  if (startsWith(b, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])) return "xz compressed data";
  if (startsWith(b, [0x28, 0xb5, 0x2f, 0xfd])) return "zstd compressed data";
  if (startsWith(b, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])) return "7-zip archive";
  if (ascii(b, "ustar", 257)) return "tar archive";
  if (startsWith(b, [0x7f, 0x45, 0x4c, 0x46])) return "ELF executable or library";
  if (startsWith(b, [0xcf, 0xfa, 0xed, 0xfe]) || startsWith(b, [0xce, 0xfa, 0xed, 0xfe])) return "Mach-O executable";
  if (startsWith(b, [0xca, 0xfe, 0xba, 0xbe])) return "Java class file or Mach-O universal binary";
  if (ascii(b, "MZ")) return "Windows executable";
  if (startsWith(b, [0x00, 0x61, 0x73, 0x6d])) return "WebAssembly module";
  if (ascii(b, "SQLite format 3\0")) return "SQLite database";
  return null;
}

export function imageTypeByExtension(path: string): string | null {
  return IMAGE_EXTENSIONS[extname(path).toLowerCase()] ?? null;
}

export interface Sniff {
  binary: boolean;
  /** What it looks like, for binary files. */
  type: string;
}

/** Decides from a file's first bytes whether it is binary (NUL bytes, mostly invalid UTF-8 or control bytes). */
export function sniffBuffer(b: Buffer): Sniff {
  const magic = magicType(b);
  if (magic) return { binary: true, type: magic };
  if (b.length === 0) return { binary: false, type: "empty" };
  if (b.includes(0)) return { binary: true, type: "binary data (contains NUL bytes)" };
  // Do not count a multi-byte character cut at the end of the sample as invalid.
  let end = b.length;
  for (let k = 1; k <= 3 && end - k >= 0; k++) {
    const byte = b[end - k] as number;
    if ((byte & 0xc0) === 0xc0) {
      end -= k;
      break;
    }
    if ((byte & 0x80) === 0) break;
  }
  const text = new TextDecoder("utf-8", { fatal: false }).decode(b.subarray(0, end));
  let bad = 0;
  let control = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0xfffd) bad++;
    else if (c < 0x20 && c !== 9 && c !== 10 && c !== 13 && c !== 12 && c !== 11 && c !== 8 && c !== 27) control++;
  }
  const n = Math.max(1, text.length);
  if (bad / n > 0.05) return { binary: true, type: "binary data (not valid UTF-8 text)" };
  if (control / n > 0.1) return { binary: true, type: "binary data (many control bytes)" };
  return { binary: false, type: "text" };
}

/** Reads up to SNIFF_BYTES from the start of a file and sniffs them. */
export function sniffFile(abs: string): Sniff {
  const fd = openSync(abs, "r");
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    const n = readSync(fd, buf, 0, SNIFF_BYTES, 0);
    return sniffBuffer(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
}
