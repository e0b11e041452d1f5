// Property-based tests of the zero-API-call layers over random valid histories
// (parallel tool calls, error results, thinking, images, empty and huge results).
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { budget } from "../../src/compaction/layers/budget.ts";
import { micro } from "../../src/compaction/layers/micro.ts";
import { snip } from "../../src/compaction/layers/snip.ts";
import { prepare } from "../../src/compaction/pipeline.ts";
import { resolveConfig } from "../../src/compaction/config/config.ts";
import type { Layer, LayerContext } from "../../src/compaction/types.ts";
import { persistedPath } from "../../src/compaction/layers/markers.ts";
import { resultText, toolResultsOf, toolUsesOf } from "../../src/messages/blocks.ts";
import type { Message, ToolResultBlock } from "../../src/messages/types.ts";
import { validate } from "../../src/messages/invariants.ts";
import { createMemoryStore } from "../../src/session/tool-results.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { arbHistory } from "../support/arbitraries.ts";

const RUNS = 1_000;

/** Contexts from the defaults down to aggressive settings, so every layer acts often. */
const arbContext = fc
  .record({
    window: fc.constantFrom(2_000, 8_000, 32_000, 200_000),
    perResultChars: fc.constantFrom(40, 2_000, 50_000),
    perMessageChars: fc.constantFrom(100, 200_000),
    previewChars: fc.constantFrom(0, 20, 2_000),
    snipGate: fc.constantFrom(0, 0.5),
    trigger: fc.constantFrom(6, 20, 50),
    keepHead: fc.constantFrom(1, 3),
    keepRecent: fc.constantFrom(0, 1, 3),
    minResultTokens: fc.constantFrom(0, 5, 1_000),
    minSavings: fc.constantFrom(0, 40, 20_000),
    idle: fc.boolean(),
  })
  .map((o): LayerContext & { store: ReturnType<typeof createMemoryStore> } => ({
    window: { contextWindow: o.window, maxOutputTokens: Math.floor(o.window / 4) },
    config: resolveConfig({
      budget: { perResultChars: o.perResultChars, perToolChars: { bash: o.perResultChars }, perMessageChars: o.perMessageChars, previewChars: o.previewChars },
      snip: { triggerMessages: o.trigger, targetMessages: Math.floor(o.trigger * 0.6) + 2, keepHead: o.keepHead, minThresholdShare: o.snipGate },
      micro: { keepRecent: o.keepRecent, minResultTokens: o.minResultTokens, minSavingsTokens: o.minSavings },
    }),
    tokens: createTokenCounter(),
    store: createMemoryStore(),
    now: 1_000_000_000,
    lastResponseAt: o.idle ? 0 : 1_000_000_000 - 1_000,
  }));

const layers: [string, Layer][] = [
  ["budget", budget],
  ["snip", snip],
  ["micro", micro],
  ["pipeline", (h, ctx) => {
    const r = prepare(h, ctx);
    return { history: r.history, freedTokens: r.reports.reduce((s, x) => s + x.freedTokens, 0), event: r.events[0] ?? null };
  }],
];

const sample = fc.tuple(arbHistory(), arbContext);

function results(h: readonly Message[]): Map<string, ToolResultBlock> {
  const m = new Map<string, ToolResultBlock>();
  for (const msg of h) for (const r of toolResultsOf(msg)) m.set(r.tool_use_id, r);
  return m;
}

for (const [name, layer] of layers) {
  test(`${name}: output always valid (pairs whole, roles alternate, nothing empty)`, () => {
    fc.assert(
      fc.property(sample, ([h, ctx]) => {
        const out = layer(h, ctx).history;
        assert.deepEqual(validate(out), []);
      }),
      { numRuns: RUNS },
    );
  });

  test(`${name}: token count never grows, and freedTokens is what it freed`, () => {
    fc.assert(
      fc.property(sample, ([h, ctx]) => {
        const r = layer(h, ctx);
        const before = ctx.tokens.messages(h);
        const after = ctx.tokens.messages(r.history);
        assert.ok(after <= before, `${after} > ${before}`);
        assert.equal(before - after, r.freedTokens);
      }),
      { numRuns: RUNS },
    );
  });

  test(`${name}: every replaced result is on disk, byte-identical`, () => {
    fc.assert(
      fc.property(sample, ([h, ctx]) => {
        const before = results(h);
        const after = results(layer(h, ctx).history);
        for (const [id, r] of after) {
          const orig = before.get(id)!;
          if (r === orig || r.content === orig.content) continue;
          const path = persistedPath(String(r.content)) ?? /saved copy at (\S+) \(recall/.exec(String(r.content))?.[1];
          assert.ok(path, `no path in ${String(r.content).slice(0, 200)}`);
          // A result cleared after being persisted points at the first save.
          const origPath = typeof orig.content === "string" ? persistedPath(orig.content) : undefined;
          assert.equal(ctx.store.files.get(path), origPath ? ctx.store.files.get(origPath) : resultText(orig.content));
          assert.equal(r.is_error, orig.is_error);
        }
      }),
      { numRuns: RUNS },
    );
  });

  test(`${name}: running it twice changes nothing the second time`, () => {
    fc.assert(
      fc.property(sample, ([h, ctx]) => {
        const once = layer(h, ctx).history;
        const twice = layer(once, ctx);
        assert.equal(twice.freedTokens, 0);
        assert.deepEqual(twice.history, once);
      }),
      { numRuns: RUNS },
    );
  });
}

test("micro and snip never touch results the model has not seen", () => {
  fc.assert(
    fc.property(sample, ([h, ctx]) => {
      let lastAssistant = -1;
      h.forEach((m, i) => m.role === "assistant" && (lastAssistant = i));
      const unseen = h.slice(lastAssistant + 1).flatMap(toolResultsOf);
      for (const layer of [micro, snip]) {
        const out = results(layer(h, ctx).history);
        for (const r of unseen) assert.equal(out.get(r.tool_use_id), r);
      }
    }),
    { numRuns: RUNS },
  );
});

test("snip never splits a tool_use from its tool_result", () => {
  fc.assert(
    fc.property(sample, ([h, ctx]) => {
      const out = snip(h, ctx).history;
      out.forEach((m, i) => {
        const answered = new Set(toolResultsOf(out[i + 1] ?? { role: "user", content: [] }).map((r) => r.tool_use_id));
        for (const u of toolUsesOf(m)) assert.ok(answered.has(u.id), `tool_use ${u.id} lost its result`);
        const asked = new Set(toolUsesOf(out[i - 1] ?? { role: "assistant", content: [] }).map((u) => u.id));
        for (const r of toolResultsOf(m)) assert.ok(asked.has(r.tool_use_id), `tool_result ${r.tool_use_id} lost its tool_use`);
      });
    }),
    { numRuns: RUNS },
  );
});
