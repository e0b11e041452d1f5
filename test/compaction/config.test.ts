import { test } from "node:test";
import assert from "node:assert/strict";
import { inspect } from "node:util";
import fc from "fast-check";
import { autoCompactThreshold, microMinSavings, resolveConfig, DEFAULT_CONFIG } from "../../src/compaction/config/config.ts";
import { configProblem, QUICK_RULES, quickCheck } from "../../src/compaction/config/rules.ts";
import { compactionConfigSchema, describeIssue } from "../../src/compaction/config/schema.ts";

test("threshold: 167k on a 200k model, buffer scaled on small windows", () => {
  assert.equal(autoCompactThreshold({ contextWindow: 200_000, maxOutputTokens: 32_000 }), 167_000);
  assert.equal(autoCompactThreshold({ contextWindow: 200_000, maxOutputTokens: 8_000 }), 179_000);
  // 32k window, 8k output: buffer is a tenth of the window (3.2k), not 13k.
  assert.equal(autoCompactThreshold({ contextWindow: 32_000, maxOutputTokens: 8_000 }), 20_800);
  // Never below half the window.
  assert.equal(autoCompactThreshold({ contextWindow: 8_000, maxOutputTokens: 8_000 }), 4_000);
});

test("micro's savings gate scales down on small windows", () => {
  assert.equal(microMinSavings({ contextWindow: 200_000, maxOutputTokens: 1 }, DEFAULT_CONFIG.micro), 5_000);
  assert.equal(microMinSavings({ contextWindow: 32_000, maxOutputTokens: 1 }, DEFAULT_CONFIG.micro), 3_200);
});

test("every threshold is configurable; bad values get a clear error", () => {
  const c = resolveConfig({ micro: { keepRecent: 5 }, budget: { perToolChars: { grep: 5 } } });
  assert.equal(c.micro.keepRecent, 5);
  assert.equal(c.budget.perToolChars.grep, 5);
  assert.equal(c.budget.perToolChars.bash, 30_000);
  assert.throws(() => resolveConfig({ snip: { targetMessages: 70 } }), /targetMessages \(70\) must be below snip\.triggerMessages \(60\)/);
  assert.throws(() => resolveConfig({ budget: { perResultChars: -1 } }), /budget\.perResultChars: Too small/);
});

// resolveConfig checks with hand-written rules and loads zod only for a config they refuse
// (test/package/startup.test.ts): the two must stay the same rules, with zod's message.

/** What the zod schema the CLI uses says of `c`: undefined when it accepts it, else the one line. */
function zodSays(c: unknown): string | undefined {
  const r = compactionConfigSchema.safeParse(c);
  return r.success ? undefined : describeIssue(compactionConfigSchema, r.error);
}

test("the quick check has the schema's sections and keys, in its order", () => {
  const shape = (s: unknown) => Object.keys((s as { shape: Record<string, unknown> }).shape);
  const sections = compactionConfigSchema.shape;
  assert.deepEqual(Object.keys(QUICK_RULES), shape(compactionConfigSchema));
  for (const name of Object.keys(QUICK_RULES) as (keyof typeof QUICK_RULES)[]) {
    assert.deepEqual(Object.keys(QUICK_RULES[name]), shape(sections[name].unwrap()), name);
  }
});

/** Values near every rule's edges, of every type zod tells apart: plain ones (what JSON and literals give)… */
const PLAIN: unknown[] = [
  0, -0, 1, 2, -1, 0.5, 1.5, 1e-9, 1 + 1e-9, 60, 2 ** 53 - 1, 2 ** 53, 2 ** 60, NaN, Infinity, -Infinity,
  true, false, "on", "off", "ask", "auto", "", "5", null, undefined,
  [], ["bash"], ["bash", 3], [undefined], {}, { bash: 1 }, { bash: 0 }, { bash: 1.5 }, { bash: "1" },
];
/** …and others, which the quick check may refuse where zod allows them (zod then decides), never the reverse. */
const EXOTIC: unknown[] = [1n, Symbol("v"), () => 1, new Date(0), new Map(), new Array(2), Object.assign(["bash"], { extra: 1 }), Object.create({ bash: 0 }) as object, Object.assign(Object.create(null), { bash: 1 }) as object];
const EDGES = [...PLAIN, ...EXOTIC];
const SECTIONS = Object.keys(QUICK_RULES) as (keyof typeof QUICK_RULES)[];

/** Valid configs: any keys of any section, each with a value its rule accepts. */
const arbValid = fc.record(
  {
    budget: fc.record({ perResultChars: fc.integer({ min: 1 }), perToolChars: fc.dictionary(fc.string(), fc.integer({ min: 1 })), perMessageChars: fc.integer({ min: 1 }), previewChars: fc.nat(), maxWindowShare: fc.double({ min: 1e-9, max: 1, noNaN: true }) }, { requiredKeys: [] }),
    snip: fc.record({ enabled: fc.boolean(), triggerMessages: fc.integer({ min: 1 }), targetMessages: fc.integer({ min: 1 }), keepHead: fc.integer({ min: 1 }), minThresholdShare: fc.double({ min: 0, max: 1, noNaN: true }), cacheAware: fc.boolean() }, { requiredKeys: [] }),
    micro: fc.record({ enabled: fc.boolean(), keepRecent: fc.nat(), minResultTokens: fc.nat(), minSavingsTokens: fc.nat(), compactableTools: fc.array(fc.string()), idleClearMs: fc.nat(), cacheAware: fc.boolean() }, { requiredKeys: [] }),
    threshold: fc.record({ bufferTokens: fc.nat(), bufferWindowShare: fc.double({ min: 0, max: 1, noNaN: true }), maxOutputReserve: fc.nat(), tokens: fc.integer({ min: 1 }) }, { requiredKeys: [] }),
    summary: fc.record({ auto: fc.constantFrom("on", "off", "ask"), maxOutputTokens: fc.integer({ min: 1 }), breakerFailures: fc.integer({ min: 1 }), presummaryShare: fc.double({ min: 0, max: 1, noNaN: true }), thrashRepeats: fc.integer({ min: 1 }), noProgressRepeats: fc.nat() }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);

/**
 * The quick check never accepts what zod refuses (and, for a plain config, refuses nothing zod
 * accepts); configProblem (zod's CommonJS build) words it as the CLI's schema (the ES module's) does.
 */
function assertSame(c: unknown, label: string, plain: boolean): void {
  const zod = zodSays(c);
  if (plain || quickCheck(c)) assert.equal(quickCheck(c), zod === undefined, `quick check vs zod (${zod}) on ${label}`);
  assert.equal(configProblem(c), zod, label);
}

test("the quick check accepts what zod accepts and nothing else, key by key; a refused config gets zod's message", () => {
  for (const name of SECTIONS) {
    for (const key of [...Object.keys(QUICK_RULES[name]), "enabeld"]) {
      EDGES.forEach((v, i) => assertSame({ [name]: { [key]: v } }, `${name}.${key} = EDGES[${i}]`, i < PLAIN.length));
    }
  }
  EDGES.forEach((v, i) => assertSame({ budget: v }, `budget = EDGES[${i}]`, i < PLAIN.length));
  assertSame({ summry: {} }, "summry", true);
  // Random valid configs, with now and then one value (or key) from the edges.
  const arbEdge = fc.record({ section: fc.constantFrom(...SECTIONS), key: fc.constantFrom("perResultChars", "keepHead", "keepRecent", "compactableTools", "tokens", "auto", "enabled", "x"), value: fc.integer({ min: 0, max: EDGES.length - 1 }) });
  fc.assert(
    fc.property(arbValid, fc.option(arbEdge), (valid, edge) => {
      const c: Record<string, Record<string, unknown>> = { ...valid };
      if (edge) c[edge.section] = { ...c[edge.section], [edge.key]: EDGES[edge.value] };
      assertSame(c, inspect(c), !edge || edge.value < PLAIN.length);
    }),
    { numRuns: 1_000 },
  );
});

test("a config the quick check refuses goes to zod: allowed when zod allows it, zod's message when not", () => {
  class Budget {
    perResultChars = 5;
  }
  for (const c of [{ budget: new Budget() }, { [Symbol("s")]: 1 }]) {
    assert.ok(!quickCheck(c));
    assert.equal(zodSays(c), undefined);
    assert.equal(configProblem(c), undefined);
  }
  // A value zod reads through the prototype is checked as zod checks it.
  const inherited = { budget: Object.create({ perResultChars: 0 }) as object };
  assert.ok(!quickCheck(inherited));
  assert.equal(configProblem(inherited), "budget.perResultChars: Too small: expected number to be >0");
  // zod sees keys a polluted Object.prototype enumerates (for…in): so does the quick check.
  const proto = Object.prototype as Record<string, unknown>;
  proto.pollutedKey = 1;
  try {
    assert.ok(!quickCheck({ budget: {} }));
    assert.equal(configProblem({ budget: {} }), zodSays({ budget: {} }));
    assert.notEqual(zodSays({ budget: {} }), undefined);
  } finally {
    delete proto.pollutedKey;
  }
});
