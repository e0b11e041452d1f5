// A resume reads what it needs of a long transcript, not all of it: the last request line (the
// window the session last ran with) from the end, and the request lines' costs by a byte marker.
// The answers are those of parsing every line; bench:resume measures the time (it had gone from
// 0.78 to 1.6 s to the first request of a --resume on a 74 MB transcript when both read it whole).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { lastLineWith, linesWith } from "../../src/session/transcript-scan.ts";
import { costInTranscript } from "../../src/cli/pricing.ts";
import { lastRequestWindow } from "../../src/cli/steer.ts";

/** What the two functions answered when they parsed every line (the reference). */
function reference(text: string): { cost: number; last: { model: string; contextWindow: number } | undefined } {
  let cost = 0;
  let last: { model: string; contextWindow: number } | undefined;
  for (const line of text.split("\n")) {
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    if (e.type !== "event" || e.name !== "request") continue;
    if (typeof e.cost_usd === "number" && Number.isFinite(e.cost_usd)) cost += e.cost_usd;
    if (!e.summary && typeof e.model === "string" && typeof e.context_window === "number") last = { model: e.model, contextWindow: e.context_window };
  }
  return { cost, last };
}

const lineArb = fc.oneof(
  fc.record({ model: fc.constantFrom("a", "b", "claude-opus-4-5"), w: fc.integer({ min: 1, max: 300_000 }), cost: fc.option(fc.double({ min: 0, max: 5, noNaN: true }), { nil: undefined }), summary: fc.boolean() })
    .map(({ model, w, cost, summary }) => JSON.stringify({ type: "event", ts: "t", name: "request", model, ...(cost !== undefined ? { cost_usd: cost } : {}), ...(summary ? { summary: true } : {}), context_window: w })),
  // A message whose text holds the markers (escaped inside a string, or as keys of a tool input).
  fc.string().map((t) => JSON.stringify({ type: "message", message: { role: "user", content: [{ type: "text", text: `${t} "name":"request" "cost_usd":9` }] } })),
  fc.constant(JSON.stringify({ type: "message", message: { role: "assistant", content: [{ type: "tool_use", id: "x", name: "t", input: { name: "request", cost_usd: 7, context_window: 1 } }] } })),
  fc.constant(JSON.stringify({ type: "boundary", kind: "snip" })),
  fc.string({ unit: "grapheme", maxLength: 40 }).map((t) => JSON.stringify({ type: "event", name: "note", text: `é😀${t}` })),
);

test("the costs and the last request's window found by marker, in chunks of any size, are those of parsing every line (torn last line, markers inside other lines)", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-scan-"));
  try {
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 30 }), fc.boolean(), fc.integer({ min: 1, max: 300 }), (lines, torn, chunk) => {
        let text = lines.join("\n") + (lines.length ? "\n" : "");
        if (torn) text += '{"type":"event","name":"request","model":"z","cost_usd":1,"context_wi';
        const path = join(dir, "t.jsonl");
        writeFileSync(path, text);
        const want = reference(text);
        let cost = 0;
        linesWith(path, '"cost_usd"', (l) => {
          try {
            const e = JSON.parse(l);
            if (e.type === "event" && e.name === "request" && typeof e.cost_usd === "number") cost += e.cost_usd;
          } catch {}
        }, chunk);
        assert.ok(Math.abs(cost - want.cost) < 1e-9, `chunk ${chunk}: ${cost} vs ${want.cost}`);
        assert.ok(Math.abs(costInTranscript(path) - want.cost) < 1e-9);
        assert.deepEqual(lastRequestWindow(path), want.last);
        let found: unknown;
        lastLineWith(path, '"name":"request"', (l) => {
          try {
            const e = JSON.parse(l);
            if (e.type === "event" && !e.summary && typeof e.model === "string" && typeof e.context_window === "number") found = { model: e.model, contextWindow: e.context_window };
          } catch {}
          return found !== undefined;
        }, chunk);
        assert.deepEqual(found, want.last, `chunk ${chunk}`);
      }),
      { numRuns: 300 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the last request line of a 20 MB transcript is found reading from its end (under 2 MB read); a missing file has none", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-scan-"));
  try {
    const msg = JSON.stringify({ type: "message", message: { role: "user", content: "x".repeat(2_000) } });
    const req = (w: number) => JSON.stringify({ type: "event", ts: "t", name: "request", model: "m", cost_usd: 0.01, context_window: w });
    const lines: string[] = [];
    for (let i = 0; i < 10_000; i++) lines.push(msg, req(i + 1));
    lines.push(msg, msg);
    const path = join(dir, "big.jsonl");
    writeFileSync(path, `${lines.join("\n")}\n`);
    const r = lastLineWith(path, '"name":"request"', () => true);
    assert.match(r.line ?? "", /"context_window":10000/);
    assert.ok(r.bytesRead <= 2 * (1 << 20), `${r.bytesRead} bytes read`);
    assert.deepEqual(lastRequestWindow(path), { model: "m", contextWindow: 10_000 });
    assert.ok(Math.abs(costInTranscript(path) - 100) < 1e-6);
    // A line far longer than a chunk (a hostile or huge message) on either side of the request line.
    const long = join(dir, "long.jsonl");
    writeFileSync(long, `${JSON.stringify({ type: "message", x: "a".repeat(3_000_000) })}\n${req(7)}\n${JSON.stringify({ type: "message", y: "b".repeat(3_000_000) })}`);
    assert.deepEqual(lastRequestWindow(long), { model: "m", contextWindow: 7 });
    assert.ok(Math.abs(costInTranscript(long) - 0.01) < 1e-9);
    let seen = 0;
    linesWith(long, '"cost_usd"', () => seen++, 4096);
    assert.equal(seen, 1);
    assert.equal(lastRequestWindow(join(dir, "none.jsonl")), undefined);
    assert.equal(costInTranscript(join(dir, "none.jsonl")), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
