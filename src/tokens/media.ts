// What images and PDFs cost, as the providers bill them, not as their base64 length.
//
// Images: the dimensions are read from the file header (PNG, JPEG, GIF, WebP), then the
// provider's documented formula is applied:
//   - Anthropic: resized so the long edge is ≤ 1568 px and the area ≤ ~1.15 MP, then
//     tokens = ceil(w × h / 750) (so at most ~1,600).
//   - OpenAI (gpt-4o family, detail high): fit in 2048 × 2048, shortest side ≤ 768, then
//     85 + 170 per 512-px tile; detail low is 85.
// An image whose size cannot be read (a URL, an unknown format) costs the maximum.
//
// PDFs: both providers send each page as an image plus its extracted text, so a document
// costs pages × (a page image) + the tokens of its text. Pages and text are read from the
// file itself (page objects, content streams, inflated when Flate-compressed), within a
// bounded amount of work; what cannot be read falls back to a dense page's text.
import { type ImageSize, base64ImageSize, pdfInfo } from "../messages/media.ts";
import type { ToolResultBlock, ToolResultContentBlock } from "../messages/types.ts";


export type MediaFormula = "anthropic" | "openai";

/** The most an image costs (Anthropic's cap; OpenAI's high-detail 2048×768 is 1,105). */
export const MAX_IMAGE_TOKENS = 1600;
/** A page image at the providers' resize cap (a US Letter / A4 page always reaches it). */
export const PAGE_IMAGE_TOKENS = 1600;
/** Text of a page whose text could not be read: a dense page (Anthropic: 1,500–3,000 tokens a page in all). */
export const UNREAD_PAGE_TEXT_TOKENS = 800;

export function imageTokens(size: ImageSize | undefined, formula: MediaFormula = "anthropic", detail?: string): number {
  if (formula === "openai") {
    if (detail === "low") return 85;
    if (!size) return 85 + 170 * 8; // the most: 2048×768 after the resize is 4×2 tiles
    let { width: w, height: h } = size;
    const fit = Math.min(1, 2048 / Math.max(w, h));
    w *= fit;
    h *= fit;
    const short = Math.min(1, 768 / Math.min(w, h));
    w *= short;
    h *= short;
    return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
  }
  if (!size) return MAX_IMAGE_TOKENS;
  const { width: w, height: h } = size;
  const scale = Math.min(1, 1568 / Math.max(w, h), Math.sqrt(1_200_000 / (w * h)));
  return Math.max(1, Math.ceil((Math.floor(w * scale) * Math.floor(h * scale)) / 750));
}

// ── image headers ─────────────────────────────────────────────────────────────────

/** Token cost of an image block's source (base64 read for its size; a URL costs the maximum). */
export function imageBlockTokens(source: unknown, formula: MediaFormula = "anthropic", detail?: string): number {
  const s = source as { type?: unknown; data?: unknown } | undefined;
  const size = s?.type === "base64" && typeof s.data === "string" ? base64ImageSize(s.data) : undefined;
  return imageTokens(size, formula, detail);
}

/** Token cost of a PDF: a page image per page plus its text (estimated with `count`). */
export function pdfTokens(base64: string, count: (text: string) => number): number {
  const info = pdfInfo(Buffer.from(base64, "base64"));
  return info.pages * PAGE_IMAGE_TOKENS + count(info.text) + info.unreadPages * UNREAD_PAGE_TEXT_TOKENS;
}

/** Token cost of a document block: a base64 PDF by pages, plain text by its text, else its JSON. */
export function documentTokens(block: { source?: unknown }, count: (text: string) => number): number {
  const s = block.source as { type?: unknown; media_type?: unknown; data?: unknown; content?: unknown } | undefined;
  if (s?.type === "base64" && typeof s.data === "string" && (s.media_type === "application/pdf" || s.media_type === undefined)) return pdfTokens(s.data, count);
  if (s?.type === "text" && typeof s.data === "string") return count(s.data);
  if (s?.type === "url") return 5 * (PAGE_IMAGE_TOKENS + UNREAD_PAGE_TEXT_TOKENS); // unknown length: a short document
  return count(JSON.stringify(block));
}

/**
 * Size of a result's content in characters, cheap (no serialisation for strings). An image
 * weighs its token cost at 4 characters a token, not its base64 length: a screenshot is
 * ~1,600 tokens however many bytes encode it.
 */
export function resultChars(content: ToolResultBlock["content"]): number {
  if (content === undefined) return 0;
  if (typeof content === "string") return content.length;
  let n = 0;
  for (const b of content as ToolResultContentBlock[]) {
    n += b.type === "text" ? b.text.length : b.type === "image" ? 4 * imageBlockTokens(b.source) : JSON.stringify(b).length;
  }
  return n;
}
