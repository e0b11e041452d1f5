// Images and PDFs are estimated as the providers bill them (dimensions, pages and text), not by
// their base64 length.
import { test } from "node:test";
import assert from "node:assert/strict";
import { base64ImageSize, describeMedia, pdfInfo } from "../../src/messages/media.ts";
import { imageTokens } from "../../src/tokens/media.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { countTokens } from "../../src/tokens/exact.ts";
import { gif, jpeg, pdf, png, prose, webp } from "../support/media.ts";

const b64 = (b: Buffer) => b.toString("base64");
const within = (actual: number, expected: number, pct: number) =>
  assert.ok(Math.abs(actual - expected) / expected <= pct / 100, `${actual} vs ${expected} (more than ${pct}% off)`);

test("image sizes are read from PNG, JPEG (after a large EXIF segment), GIF and WebP headers", () => {
  assert.deepEqual(base64ImageSize(b64(png(1280, 800))), { width: 1280, height: 800 });
  assert.deepEqual(base64ImageSize(b64(jpeg(4032, 3024, 60_000))), { width: 4032, height: 3024 });
  assert.deepEqual(base64ImageSize(b64(gif(320, 200))), { width: 320, height: 200 });
  assert.deepEqual(base64ImageSize(b64(webp(1600, 900))), { width: 1600, height: 900 });
  assert.equal(base64ImageSize(b64(Buffer.from("not an image at all"))), undefined);
});

test("Anthropic's documented image costs: ceil(w×h/750) after the 1568 px / 1.15 MP resize", () => {
  // The examples in Anthropic's vision guide: 200×200 ≈ 54, 1000×1000 ≈ 1,334, 1092×1092 ≈ 1,590.
  within(imageTokens({ width: 200, height: 200 }), 54, 2);
  within(imageTokens({ width: 1000, height: 1000 }), 1334, 1);
  within(imageTokens({ width: 1092, height: 1092 }), 1590, 1);
  // A large photo is resized to the cap (~1,600), never more.
  assert.ok(imageTokens({ width: 4032, height: 3024 }) <= 1600);
  within(imageTokens({ width: 4032, height: 3024 }), 1600, 2);
});

test("OpenAI's documented image costs: 85 + 170 per 512 px tile after the resize; low detail 85", () => {
  assert.equal(imageTokens({ width: 1024, height: 1024 }, "openai"), 765);
  assert.equal(imageTokens({ width: 2048, height: 4096 }, "openai"), 1105);
  assert.equal(imageTokens({ width: 4096, height: 8192 }, "openai", "low"), 85);
});

test("a screenshot costs its dimensions, not its base64 length", () => {
  const shot = png(1280, 800, 400_000); // ~530k base64 characters
  const block = { type: "image" as const, source: { type: "base64", media_type: "image/png", data: b64(shot) } };
  const c = createTokenCounter();
  assert.ok(block.source.data.length > 500_000);
  within(c.block(block), Math.ceil((1280 * 800) / 750), 1);
  const inResult = c.block({ type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: "screenshot" }, block] });
  assert.ok(inResult < 1500, `${inResult}`);
  assert.equal(createTokenCounter(undefined, { media: "openai" }).block(block), 85 + 170 * 6);
});

for (const variant of [{}, { compress: true }, { compress: true, objectStream: true }]) {
  test(`a PDF costs a page image per page plus its text (${JSON.stringify(variant)}), within 20% of the documented cost`, () => {
    const pages = Array.from({ length: 12 }, (_, i) => prose(350, i + 1));
    const file = pdf(pages, variant);
    const info = pdfInfo(file);
    assert.equal(info.pages, 12);
    assert.equal(info.unreadPages, 0);
    const documented = 12 * 1600 + countTokens(pages.join("\n"));
    const block = { type: "document", source: { type: "base64", media_type: "application/pdf", data: b64(file) } };
    const estimate = createTokenCounter().block(block as never);
    within(estimate, documented, 20);
    // What the base64 length would have said is far off for a compressed file.
    assert.match(describeMedia(block), /PDF document, 12 pages/);
  });
}

test("a hostile PDF (huge page count claim, garbage streams) is estimated quickly and bounded", () => {
  const junk = Buffer.concat([Buffer.from("%PDF-1.4\n1 0 obj\n<< /Type /Pages /Count 999999999 >>\nendobj\n"), ...Array.from({ length: 200 }, () => Buffer.from("2 0 obj\n<< /Length 99999999 /Filter /FlateDecode >>\nstream\nxxxxxxxx\nendstream\nendobj\n"))]);
  const t0 = performance.now();
  const info = pdfInfo(junk);
  const ms = performance.now() - t0;
  assert.ok(info.pages >= 1);
  assert.ok(ms < 5_000, `${ms} ms`);
});
