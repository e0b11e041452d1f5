// glob and grep: pattern syntax, .gitignore (root and nested; negation, folder-only, anchored),
// .git/ and node_modules/ skipped unless named, newest first, bounded output.
import { test } from "node:test";
import assert from "node:assert/strict";
import { utimesSync } from "node:fs";
import { join } from "node:path";
import { expandBraces, globToRegExp, splitStatic } from "../../src/tools/glob-match.ts";
import { isIgnored, parseGitignore } from "../../src/tools/walk.ts";
import { fixture, text } from "./helpers.ts";

const lines = (s: string) => s.split("\n").filter((l) => l !== "" && !l.startsWith("["));

test("glob syntax: ** * ? [..] {a,b} and static prefixes", () => {
  const m = (g: string, p: string) => globToRegExp(g).test(p);
  assert.ok(m("**/*.ts", "a.ts"));
  assert.ok(m("**/*.ts", "src/x/y/a.ts"));
  assert.ok(!m("**/*.ts", "a.tsx"));
  assert.ok(m("src/**/b.ts", "src/b.ts"));
  assert.ok(m("src/**/b.ts", "src/x/y/b.ts"));
  assert.ok(!m("src/*.ts", "src/x/b.ts"), "* does not cross /");
  assert.ok(m("src/**", "src/x/b.ts"));
  assert.ok(m("file?.txt", "file1.txt"));
  assert.ok(!m("file?.txt", "file10.txt"));
  assert.ok(m("[abc].md", "b.md"));
  assert.ok(!m("[!abc].md", "b.md"));
  assert.ok(m("[!abc].md", "d.md"));
  assert.ok(m("[a-c]x", "bx"));
  assert.ok(m("a.b+c(d)", "a.b+c(d)"), "regex specials are literal");
  assert.ok(!m("a.b", "axb"));
  assert.ok(m("*", ".hidden"));
  assert.deepEqual(expandBraces("{src,test}/**/*.{ts,tsx}"), ["src/**/*.ts", "src/**/*.tsx", "test/**/*.ts", "test/**/*.tsx"]);
  assert.deepEqual(expandBraces("a{b,{c,d}}e"), ["abe", "ace", "ade"]);
  assert.deepEqual(expandBraces("{x}"), ["{x}"]);
  assert.deepEqual(splitStatic("src/lib/**/*.ts"), { prefix: "src/lib", rest: "**/*.ts" });
  assert.deepEqual(splitStatic("/abs/x/*.ts"), { prefix: "/abs/x", rest: "*.ts" });
  assert.deepEqual(splitStatic("a/b.txt"), { prefix: "a/b.txt", rest: "" });
});

test("gitignore semantics: name patterns, anchored, folder-only, negation, **", () => {
  const rules = parseGitignore(["# comment", "*.log", "!keep.log", "/rootonly.txt", "build/", "docs/*.tmp", "**/gen/**", "trailing   ", "\\#hash"].join("\n"));
  const base = "/w";
  const ig = (p: string, dir = false) => isIgnored(`${base}/${p}`, dir, [{ base, rules }]);
  assert.ok(ig("a.log"));
  assert.ok(ig("deep/x/a.log"), "a name pattern matches at any depth");
  assert.ok(!ig("keep.log"), "negation re-includes");
  assert.ok(ig("rootonly.txt"));
  assert.ok(!ig("sub/rootonly.txt"), "a leading / anchors to the .gitignore's folder");
  assert.ok(ig("build", true));
  assert.ok(ig("src/build", true));
  assert.ok(!ig("build", false), "folder-only pattern does not match a file");
  assert.ok(ig("docs/a.tmp"));
  assert.ok(!ig("x/docs/a.tmp"), "a pattern with a middle / is anchored");
  assert.ok(ig("a/gen/b/c.ts"));
  assert.ok(ig("trailing"), "trailing spaces are dropped");
  assert.ok(ig("#hash"));
});

function searchFixture() {
  const f = fixture();
  f.write(".gitignore", "*.log\n!keep.log\nbuild/\n/rootonly.txt\n");
  f.write("src/a.ts", "export const alpha = 1;\n// TODO: alpha\n");
  f.write("src/b.tsx", "export const beta = 2;\n");
  f.write("src/sub/c.ts", "const gamma = 'ALPHA';\n");
  f.write("src/sub/.gitignore", "secret*\n/local.txt\n");
  f.write("src/sub/secret.ts", "alpha secret\n");
  f.write("src/sub/local.txt", "alpha local\n");
  f.write("src/local.txt", "alpha not ignored here\n");
  f.write("debug.log", "alpha in a log\n");
  f.write("keep.log", "alpha kept log\n");
  f.write("build/out.js", "alpha built\n");
  f.write("rootonly.txt", "alpha root only\n");
  f.write("src/rootonly.txt", "alpha nested rootonly\n");
  f.write(".git/config", "alpha in git\n");
  f.write("node_modules/pkg/index.js", "alpha in deps\n");
  f.write("data.bin", Buffer.from([0x61, 0x6c, 0x70, 0x68, 0x61, 0x00, 0x01]));
  return f;
}

test("glob respects .gitignore (root and nested), skips .git and node_modules unless named", async () => {
  const f = searchFixture();
  try {
    const all = lines(text(await f.call("glob", { pattern: "**/*" }))).sort();
    assert.deepEqual(all, [".gitignore", "data.bin", "keep.log", "src/a.ts", "src/b.tsx", "src/local.txt", "src/rootonly.txt", "src/sub/.gitignore", "src/sub/c.ts"]);
    assert.deepEqual(lines(text(await f.call("glob", { pattern: "src/**/*.{ts,tsx}" }))).sort(), ["src/a.ts", "src/b.tsx", "src/sub/c.ts"]);
    assert.deepEqual(lines(text(await f.call("glob", { pattern: "*.ts", path: "src/sub" }))), ["src/sub/c.ts"]);
    // Named explicitly: searched.
    assert.deepEqual(lines(text(await f.call("glob", { pattern: "node_modules/**/*.js" }))), ["node_modules/pkg/index.js"]);
    assert.deepEqual(lines(text(await f.call("glob", { pattern: "**/node_modules/**/*.js" }))), ["node_modules/pkg/index.js"]);
    assert.deepEqual(lines(text(await f.call("glob", { pattern: "*", path: "build" }))), ["build/out.js"]);
    // A literal file path.
    assert.deepEqual(lines(text(await f.call("glob", { pattern: "src/a.ts" }))), ["src/a.ts"]);
    const none = await f.call("glob", { pattern: "**/*.py" });
    assert.equal(none.isError, undefined);
    assert.match(text(none), /^No files match \*\*\/\*\.py in the workspace\.$/);
    assert.match(text(await f.call("glob", { pattern: "src" })), /src is a folder; use "src\/\*"/);
  } finally {
    f.cleanup();
  }
});

test("glob sorts newest first and caps the list at 200 with a note", async () => {
  const f = fixture();
  try {
    for (let i = 0; i < 250; i++) {
      const p = f.write(`many/f${String(i).padStart(3, "0")}.txt`, "x");
      const t = new Date(Date.UTC(2020, 0, 1) + i * 60_000);
      utimesSync(p, t, t);
    }
    const r = text(await f.call("glob", { pattern: "many/*.txt" }));
    const got = lines(r);
    assert.equal(got.length, 200);
    assert.equal(got[0], "many/f249.txt");
    assert.equal(got[1], "many/f248.txt");
    assert.equal(got[199], "many/f050.txt");
    assert.match(r, /\[250 files match; showing the 200 most recently modified/);
  } finally {
    f.cleanup();
  }
});

test("grep respects .gitignore like glob, skips binary files, and has three output modes", async () => {
  const f = searchFixture();
  try {
    const files = lines(text(await f.call("grep", { pattern: "alpha" }))).sort();
    assert.deepEqual(files, ["keep.log", "src/a.ts", "src/local.txt", "src/rootonly.txt"]);

    const ci = lines(text(await f.call("grep", { pattern: "alpha", case_insensitive: true }))).sort();
    assert.ok(ci.includes("src/sub/c.ts"));
    assert.deepEqual(lines(text(await f.call("grep", { pattern: "(?i)ALPHA", path: "src/sub" }))), ["src/sub/c.ts"]);

    const content = text(await f.call("grep", { pattern: "alpha", output_mode: "content", path: "src", glob: "*.ts" }));
    assert.equal(content, "src/a.ts:1:export const alpha = 1;\nsrc/a.ts:2:// TODO: alpha");

    const count = text(await f.call("grep", { pattern: "alpha", output_mode: "count", glob: "**/*.ts" }));
    assert.equal(count, "src/a.ts:2\n[2 matching lines in 1 files]");

    // Named explicitly, ignored places are searched.
    assert.deepEqual(lines(text(await f.call("grep", { pattern: "alpha", path: "node_modules" }))), ["node_modules/pkg/index.js"]);
    assert.deepEqual(lines(text(await f.call("grep", { pattern: "alpha", path: "debug.log" }))), ["debug.log"]);
    // A binary file named directly is refused; in a folder it is skipped.
    const bin = await f.call("grep", { pattern: "alpha", path: "data.bin" });
    assert.equal(bin.isError, true);
    assert.match(text(bin), /binary/);

    const bad = await f.call("grep", { pattern: "(unclosed" });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /invalid regular expression "\(unclosed"/);
  } finally {
    f.cleanup();
  }
});

test("grep context lines, separators, and bounded output", async () => {
  const f = fixture();
  try {
    f.write("ctx.txt", ["a", "b", "MATCH 1", "c", "d", "e", "f", "g", "MATCH 2", "h"].join("\n"));
    const r = text(await f.call("grep", { pattern: "MATCH", output_mode: "content", context: 1 }));
    assert.equal(r, ["ctx.txt-2-b", "ctx.txt:3:MATCH 1", "ctx.txt-4-c", "--", "ctx.txt-8-g", "ctx.txt:9:MATCH 2", "ctx.txt-10-h"].join("\n"));

    f.write("many.txt", Array.from({ length: 1_000 }, (_, i) => `hit ${i} ${"z".repeat(900)}`).join("\n"));
    const big = text(await f.call("grep", { pattern: "hit", output_mode: "content", path: "many.txt" }));
    assert.ok(big.length < 42_000, `${big.length} chars`);
    assert.match(big, /output limit reached/);
    assert.match(big, /… \[line cut: 9\d\d chars\]/);
    const head = text(await f.call("grep", { pattern: "hit", output_mode: "content", path: "many.txt", head_limit: 3 }));
    assert.equal(lines(head).length, 3);
  } finally {
    f.cleanup();
  }
});

test("glob and grep skip symlinked folders (no loops) and a nested repo's .git", async () => {
  const f = fixture();
  try {
    f.write("real/x.txt", "needle\n");
    const { symlinkSync } = await import("node:fs");
    symlinkSync(join(f.ws, "real"), join(f.ws, "loop"));
    symlinkSync(f.ws, join(f.ws, "real", "up"));
    assert.deepEqual(lines(text(await f.call("glob", { pattern: "**/*.txt" }))), ["real/x.txt"]);
    assert.deepEqual(lines(text(await f.call("grep", { pattern: "needle" }))), ["real/x.txt"]);
  } finally {
    f.cleanup();
  }
});
