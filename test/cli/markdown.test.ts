// Markdown in the terminal: rendered by blocks as the text streams in, the same however the deltas
// are split; no raw ** or fences; plain (no ANSI) without colour. Status line and diff colours.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MarkdownStream, createRenderer, firstCut } from "../../src/cli/markdown.ts";
import { COLOR, PLAIN, coloredDiff, recentExchanges, statusLine } from "../../src/cli/render.ts";

const DOC = [
  "# Plan",
  "",
  "Some **bold** words, *emphasis* and `inline code`.",
  "",
  "1. first step",
  "2. second step",
  "",
  "```ts",
  "const x: number = 1;",
  "",
  "function f() { return x; }",
  "```",
  "",
  "| file | lines |",
  "|---|---|",
  "| a.ts | 12 |",
  "",
  "> a quote",
  "",
  "Done.",
].join("\n");

function streamed(doc: string, cuts: number[], color = false): string {
  let out = "";
  const s = new MarkdownStream(createRenderer({ color, width: 80 }), (t) => (out += t));
  let at = 0;
  for (const c of [...cuts].sort((a, b) => a - b)) {
    s.push(doc.slice(at, c));
    at = c;
  }
  s.push(doc.slice(at));
  s.flush();
  return out;
}

test("rendered: no raw ** or fences; headings, lists, code, tables laid out; no ANSI without colour", () => {
  const out = streamed(DOC, []);
  assert.doesNotMatch(out, /\*\*|```/);
  assert.match(out, /Some bold words, emphasis and inline code\./);
  assert.match(out, /const x: number = 1;/);
  assert.match(out, /│ a\.ts │ 12\s+│/);
  assert.doesNotMatch(out, /\x1b\[/, "no escape codes when plain");
  const colored = streamed("Some **bold**.\n\n```js\nconst a = 1;\n```\n", [], true);
  assert.doesNotMatch(colored.replace(/\x1b\[[\d;]*m/g, ""), /\*\*|```/);
});

test("streaming-safe: the output is the same however the text is split into deltas (property)", () => {
  const whole = streamed(DOC, []);
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: DOC.length }), { maxLength: 30 }), (cuts) => streamed(DOC, cuts) === whole),
    { numRuns: 200 },
  );
});

test("a block is held until it is complete: an open fence is never cut at its blank line", () => {
  assert.equal(firstCut("para\nstill para"), 0);
  assert.equal(firstCut("para\n\nnext"), 6);
  assert.equal(firstCut("```\ncode\n\nmore code\n"), 0, "inside a fence");
  assert.equal(firstCut("```\ncode\n\n```\n\nafter"), 15);
  let out = "";
  const s = new MarkdownStream(createRenderer({ color: false, width: 80 }), (t) => (out += t));
  s.push("Half a **sente");
  assert.equal(out, "", "nothing printed mid-block");
  assert.ok(s.pending);
  s.push("nce**.\n\n");
  assert.match(out, /Half a sentence\./);
});

test("status line: context as a share of the threshold and the session's cost; diffs coloured; the last exchanges of a resumed session", () => {
  const line = statusLine({ measured: 16_000, threshold: 32_000, window: 40_000, autoCompact: "on" }, 0.042, PLAIN);
  assert.equal(line, "[16,000 / 40,000 tokens in context · 50% of auto-compact at 32,000 · session $0.0420]");
  assert.match(statusLine({ measured: 1, threshold: 2, window: 3, autoCompact: "on" }, undefined, PLAIN), /session cost unknown/);
  const diff = coloredDiff("@@ -1,2 +1,2 @@\n-old\n+new\n same", COLOR);
  assert.match(diff, /\x1b\[31m-old\x1b\[39m/);
  assert.match(diff, /\x1b\[32m\+new\x1b\[39m/);
  assert.equal(coloredDiff("-old\n+new", PLAIN), "-old\n+new");
  const recent = recentExchanges([
    { role: "user", content: [{ type: "text", text: "first question" }] },
    { role: "assistant", content: [{ type: "text", text: "first answer" }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "x" }] },
    { role: "user", content: [{ type: "text", text: "second question" }] },
    { role: "assistant", content: [{ type: "text", text: "second answer" }] },
  ], 3, PLAIN);
  assert.match(recent, /> first question\n {2}first answer\n> second question\n {2}second answer/);
});
