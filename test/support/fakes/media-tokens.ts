// How the real servers count images, for the fakes: by dimensions, not base64 length.
// Anthropic: fit the long edge to 1,568 px, then ceil(w×h/750), at most ~1,600 tokens.
// OpenAI (high/auto detail): fit in 2048×2048, shortest side to 768, 170 per 512-px tile + 85;
// low detail 85. Dimensions from the PNG IHDR or the JPEG SOF marker; other images count as one
// 1,092×1,092 image (about Anthropic's cap). Written apart from src/tokens/media.ts on purpose:
// the fake is the reference the product's estimates are checked against.

function dimensions(bytes: Buffer): { w: number; h: number } | undefined {
  if (bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47) return { w: bytes.readUInt32BE(16), h: bytes.readUInt32BE(20) };
  if (bytes[0] === 0xff && bytes[1] === 0xd8) {
    let i = 2;
    while (i + 9 < bytes.length && bytes[i] === 0xff) {
      const marker = bytes[i + 1]!;
      const len = bytes.readUInt16BE(i + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return { w: bytes.readUInt16BE(i + 7), h: bytes.readUInt16BE(i + 5) };
      i += 2 + len;
    }
  }
  return undefined;
}

export function anthropicImageTokens(base64: string): number {
  let { w, h } = dimensions(Buffer.from(base64.slice(0, 100_000), "base64")) ?? { w: 1092, h: 1092 };
  const fit = Math.min(1, 1568 / Math.max(w, h));
  w = Math.round(w * fit);
  h = Math.round(h * fit);
  return Math.min(1_600, Math.ceil((w * h) / 750));
}

export function openaiImageTokens(base64: string, detail: string | undefined): number {
  if (detail === "low") return 85;
  let { w, h } = dimensions(Buffer.from(base64.slice(0, 100_000), "base64")) ?? { w: 1092, h: 1092 };
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const short = Math.min(1, 768 / Math.min(w, h));
  w *= short;
  h *= short;
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** The unit with each inline image replaced by a stub, and the images' tokens. */
export function withoutImages(unit: unknown): { unit: unknown; tokens: number } {
  let tokens = 0;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== "object") return v;
    const o = v as Record<string, any>;
    if (o.type === "image" && o.source?.type === "base64" && typeof o.source.data === "string") {
      tokens += anthropicImageTokens(o.source.data);
      return { type: "image" };
    }
    if (o.type === "image_url" && typeof o.image_url?.url === "string" && o.image_url.url.startsWith("data:")) {
      tokens += openaiImageTokens(o.image_url.url.slice(o.image_url.url.indexOf(",") + 1), o.image_url.detail);
      return { type: "image_url" };
    }
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, walk(x)]));
  };
  return { unit: walk(unit), tokens };
}
