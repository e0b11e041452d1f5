// The five loops of docs/library.md are the ones test/types/*.ts compile as strict TypeScript
// against the SDKs' own types (npm run typecheck): each docs block, its imports aside, is the
// marked region of its file, line for line.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "../..");
const docs = readFileSync(join(ROOT, "docs/library.md"), "utf8");

/** The ts code block after `heading` in docs/library.md, its import lines left out. */
function docsBlock(heading: string): string[] {
  const at = docs.indexOf(heading);
  assert.ok(at >= 0, `docs/library.md has ${heading}`);
  const start = docs.indexOf("```ts\n", at) + 6;
  const body = docs.slice(start, docs.indexOf("\n```", start));
  return lines(body).filter((l) => !l.startsWith("import "));
}

/** The region of a type test between `// ---- docs/library.md` and `// ----`. */
function region(file: string): string[] {
  const text = readFileSync(join(ROOT, "test/types", file), "utf8");
  const start = text.indexOf("\n", text.indexOf("// ---- docs/library.md")) + 1;
  return lines(text.slice(start, text.indexOf("// ----\n", start)));
}

const lines = (text: string) => text.split("\n").map((l) => l.trim()).filter((l) => l !== "");

for (const [heading, file] of [
  ["## A loop on `@anthropic-ai/sdk`", "anthropic-loop.ts"],
  ["## A loop on the `openai` package", "openai-loop.ts"],
  ["## Vercel AI SDK", "ai-sdk-loop.ts"],
  ["### Your own loop", "langchain-loop.ts"],
  ["### OpenAI's Responses API", "responses-loop.ts"],
] as const) {
  test(`docs/library.md "${heading}" is what test/types/${file} compiles`, () => {
    assert.deepEqual(region(file), docsBlock(heading));
  });
}
