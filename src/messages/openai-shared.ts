// What both directions of the OpenAI converters (./openai-to.ts, ./openai-from.ts) use: errors,
// tool call arguments, images and content parts.
import { LetheError } from "../errors.ts";
import { LetheInputError, readSafely, show } from "./input.ts";
import { jsonProblem, thrownText } from "./input-values.ts";
import type { ContentBlock, ImageBlock } from "./types.ts";
import type { OpenAIImagePart, OpenAITextPart, OpenAIUserPart } from "./openai-types.ts";

export type Obj = Record<string, unknown>;
type Side = "toOpenAI" | "fromOpenAI";

/** Throws "<side>: message <i> <what>": the converters reject what they cannot convert faithfully. */
export function fail(side: Side, i: number, what: string): never {
  throw new LetheInputError(`${side}: message ${i}`, what, `${side}: message ${i} ${what}`);
}

/**
 * What a converter throws for message `i` when converting it threw: lethe's own errors as they
 * are; anything else came from reading the caller's value (a getter, a Proxy trap, a toString).
 */
export function messageError(side: Side, i: number, e: unknown): Error {
  try {
    if (e instanceof LetheError) return e;
  } catch {
    // a revoked Proxy thrown: not ours
  }
  const what = `cannot be read: ${thrownText(e)}`;
  return new LetheInputError(`${side}: message ${i}`, what, `${side}: message ${i} ${what}`);
}

/** The messages' count, or a LetheInputError when `messages` is not a readable list. */
export function listLength(side: Side, messages: unknown, what: string): number {
  return readSafely(`${side}: messages`, () => {
    if (!Array.isArray(messages)) throw new LetheInputError(`${side}: messages`, `must be an array of ${what}, got ${messages === null ? "null" : typeof messages}`);
    return messages.length;
  });
}

export function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// ── tool call arguments ────────────────────────────────────────────────────────────

function isRawInput(v: unknown): v is { _raw: string } {
  return isObject(v) && typeof v._raw === "string" && Object.keys(v).length === 1;
}

export function encodeArgs(input: unknown): string {
  if (isRawInput(input)) return input._raw;
  return JSON.stringify(input) ?? "{}";
}

export function decodeArgs(args: string): unknown {
  try {
    const v: unknown = JSON.parse(args);
    // Nested past any real tool's input (or too large to walk): kept as the text it came as, as
    // parseToolInput does, so the history stays one lethe can check and count.
    if (isObject(v) && jsonProblem(v) === null) return v;
  } catch {
    // not JSON: kept raw below
  }
  return { _raw: args };
}

// ── images and content parts ──────────────────────────────────────────────────────

export function encodeImage(source: ImageBlock["source"]): OpenAIImagePart | undefined {
  const s = source as Obj;
  if (s.type === "base64" && typeof s.media_type === "string" && typeof s.data === "string") {
    return { type: "image_url", image_url: { url: `data:${s.media_type};base64,${s.data}` } };
  }
  if (s.type === "url" && typeof s.url === "string") return { type: "image_url", image_url: { url: s.url } };
  return undefined;
}

export function decodeImage(url: string): ImageBlock["source"] {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { type: "base64", media_type: m[1]!, data: m[2]! } : { type: "url", url };
}

export function encodeUserPart(b: ContentBlock): OpenAIUserPart | undefined {
  if (b.type === "text") return { type: "text", text: b.text };
  if (b.type === "image") {
    const part = encodeImage(b.source);
    if (part && typeof b.detail === "string") (part.image_url as { detail?: string }).detail = b.detail;
    return part;
  }
  // A PDF document goes as a file part (what OpenAI's chat API takes for PDFs).
  const d = b as Obj;
  if (d.type === "document" && isObject(d.source) && d.source.type === "base64" && typeof d.source.data === "string") {
    const mediaType = typeof d.source.media_type === "string" ? d.source.media_type : "application/pdf";
    return { type: "file", file: { file_data: `data:${mediaType};base64,${d.source.data}`, ...(typeof d.title === "string" ? { filename: d.title } : {}) } } as unknown as OpenAIUserPart;
  }
  // Parts lethe has no block kind for came in from OpenAI and go back out as they were.
  const raw = (b as Obj).openai_part;
  if ((b as Obj).type === OPENAI_PART && isObject(raw)) return raw as unknown as OpenAIUserPart;
  return undefined;
}

/** A block kind holding an OpenAI content part lethe does not model (audio, files): kept, not dropped. */
export const OPENAI_PART = "openai_part";

export function decodeUserPart(p: OpenAIUserPart, i: number): ContentBlock {
  if (p?.type === "text" && typeof p.text === "string") return { type: "text", text: p.text };
  if (p?.type === "image_url" && typeof p.image_url?.url === "string") {
    const detail = (p.image_url as { detail?: unknown }).detail;
    return { type: "image", source: decodeImage(p.image_url.url), ...(typeof detail === "string" ? { detail } : {}) };
  }
  // A PDF as a file part is a document to Anthropic; other files and audio are kept as they are.
  const q = p as unknown as Obj;
  if (q?.type === "file" && isObject(q.file)) {
    const f = q.file as Obj;
    const m = typeof f.file_data === "string" ? /^data:application\/pdf;base64,(.*)$/s.exec(f.file_data) : null;
    if (m) return { type: "document", source: { type: "base64", media_type: "application/pdf", data: m[1]! }, ...(typeof f.filename === "string" ? { title: f.filename } : {}) } as unknown as ContentBlock;
  }
  if (q?.type === "file" || q?.type === "input_audio") return { type: OPENAI_PART, openai_part: q } as unknown as ContentBlock;
  return fail("fromOpenAI", i, `has an unsupported content part ${partType(p)}`);
}

function partType(p: unknown): string {
  return isObject(p) ? show(p.type) : show(p);
}

/** Texts of a string | text-part list | null content. */
export function textsOf(content: string | OpenAITextPart[] | null | undefined, i: number): string[] {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) fail("fromOpenAI", i, "has content that is neither a string nor a part list");
  return content.map((p) => {
    if (p?.type === "text" && typeof p.text === "string") return p.text;
    // An assistant's refusal part is what it said: keep it as text.
    const r = p as unknown as Obj;
    if (r?.type === "refusal" && typeof r.refusal === "string") return r.refusal;
    return fail("fromOpenAI", i, `has an unsupported content part ${partType(p)}`);
  });
}
