// The shape of src/ (issue 21): no import cycle (type-only and dynamic imports included), no
// import that runs back down the layers of docs/architecture.md, and no function over 150 lines.
import { test } from "node:test";
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { cycles, functionsOf, importsOf, sourceFiles } from "./source.ts";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * The layers, lowest first: a module imports only from layers below its own, or from its own
 * folder. Folders on one level (session and hooks; tools and engine; agent and adapters) do not
 * import each other.
 */
const LAYERS: Record<string, number> = {
  errors: 0,
  messages: 1,
  tokens: 2,
  model: 3,
  compaction: 4,
  session: 5,
  hooks: 5,
  store: 5.5,
  tools: 6,
  engine: 6,
  agent: 7,
  adapters: 7,
  cli: 8,
  index: 9,
  clients: 9,
};

/** src/compaction/x.ts → compaction; src/engine-follow.ts and src/engine/x.ts → engine. */
function areaOf(path: string): string {
  const rest = path.replace(/^src\//, "");
  const first = rest.split("/")[0]!.replace(/\.ts$/, "");
  return first.startsWith("engine") ? "engine" : first;
}

/** Functions allowed past the limit, and why. */
const LONG_ALLOWED: Record<string, string> = {
  // One pass over the text, character classes inlined: split into calls it runs ~2x slower
  // (bench:tokens), and the estimate runs on every message of every request.
  "src/tokens/estimate.ts:estimateWith": "the estimator's scanning loop",
};
const MAX_LINES = 150;

const files = sourceFiles(ROOT);
const imports = files.flatMap((f) => importsOf(f, ROOT));

test("the import graph of src/ has no cycle, type-only imports included", () => {
  assert.ok(files.length > 100 && imports.length > 400, `${files.length} files, ${imports.length} imports read`);
  assert.deepEqual(cycles(imports), []);
});

test("no import runs back down the layers", () => {
  const back = imports
    .filter((i) => i.to.startsWith("src/"))
    .map((i) => ({ ...i, a: areaOf(i.from), b: areaOf(i.to) }))
    .filter((i) => i.a !== i.b)
    .filter((i) => {
      const a = LAYERS[i.a];
      const b = LAYERS[i.b];
      assert.ok(a !== undefined && b !== undefined, `no layer for ${i.a} or ${i.b}: add it to LAYERS and docs/architecture.md`);
      return b >= a;
    })
    .map((i) => `${i.from} → ${i.to}`);
  assert.deepEqual(back, []);
});

test(`no function in src/ is longer than ${MAX_LINES} lines (but the estimator's scanning loop)`, () => {
  const spans = files.flatMap(functionsOf);
  assert.ok(spans.length > 500, `${spans.length} functions read`);
  const long = spans.filter((f) => f.lines > MAX_LINES && !(`${f.file}:${f.name}` in LONG_ALLOWED)).map((f) => `${f.file}:${f.line} ${f.name} ${f.lines} lines`);
  assert.deepEqual(long, []);
  for (const key of Object.keys(LONG_ALLOWED)) assert.ok(spans.some((f) => `${f.file}:${f.name}` === key), `${key} is allowed but no longer exists`);
});

test("the reader sees what it must: a cycle, a type-only import, a long function (self-check on made-up files)", async () => {
  const { blank, cycles: find, functionsOf: fns, importsOf: imps } = await import("./source.ts");
  const a = { path: "src/x/a.ts", text: `import type { B } from "./b.ts";\nconst s = "function f() {";\n// import { z } from "./z.ts";\n`, code: "" };
  a.code = blank(a.text);
  const b = { path: "src/x/b.ts", text: `export { a } from "./a.ts";\nconst r = /[{]/g; const t = \`\${"}"}{\`;\n`, code: "" };
  b.code = blank(b.text);
  const edges = [...imps(a, "/r"), ...imps(b, "/r")];
  assert.deepEqual(edges.map((e) => `${e.from}>${e.to}:${e.typeOnly}`), ["src/x/a.ts>src/x/b.ts:true", "src/x/b.ts>src/x/a.ts:false"]);
  assert.deepEqual(find(edges), [["src/x/a.ts", "src/x/b.ts"]]);
  const body = Array.from({ length: 160 }, (_, k) => `  const v${k} = "}";`).join("\n");
  const f = { path: "src/x/f.ts", text: `export function big(x: number): { y: number } {\n${body}\n  return { y: x };\n}\nconst small = (a: string) => {\n  return a;\n};\n`, code: "" };
  f.code = blank(f.text);
  assert.deepEqual(fns(f).map((s) => `${s.name}:${s.lines}`), ["big:163", "small:3"]);
});
