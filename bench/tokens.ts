// bench:tokens — error and speed of the token counters against exact o200k.
// Usage: tsx bench/tokens.ts [--corpus FILE] [--out FILE]
// Writes bench/results/tokens.json (atomically) and prints a table.
//
// Errors are per document: |estimate − exact| / exact. Per category: the mean of that, the worst
// document, and the error of the category total (Σestimate − Σexact) / Σexact. Top level:
// mean_abs_err_pct is the mean over all documents, worst_category_err_pct the largest |category
// total error|. Throughput is UTF-8 megabytes (10^6 bytes) of input per second, the median of
// several passes over the material repeated to a fixed volume, one call per document.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CAP_BYTES, MIN_DOC_CHARS, loadAll, type Category } from "./tokens-material.ts";
import { countTokens } from "../src/tokens/exact.ts";
import { estimateTokens } from "../src/tokens/estimate.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const arg = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? resolve(argv[i + 1]!) : dflt;
};
const corpus = arg("--corpus", resolve(root, "../shared/corpus/real_sessions.jsonl"));
const out = arg("--out", resolve(root, "bench/results/tokens.json"));

type Counter = (text: string) => number;
const chars4: Counter = (text) => Math.ceil(text.length / 4);
const counters: Record<"estimator" | "chars4", Counter> = { estimator: estimateTokens, chars4 };

/** Timing volumes: the whole material to >= 10 MB for the headline figure; per category less. */
const TOTAL_MB = 10;
const PLAN = {
  estimator: { total: TOTAL_MB, perCategory: 4, reps: 7 },
  chars4: { total: TOTAL_MB, perCategory: 4, reps: 7 },
  exact: { total: TOTAL_MB, perCategory: 1, reps: 3 },
};

const bytesOf = (s: string): number => Buffer.byteLength(s, "utf8");
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 2): number => Number(x.toFixed(d));

/** MB/s of `count` over `docs` repeated to at least `mb` megabytes: median of `reps` passes. */
function throughput(count: Counter, docs: string[], mb: number, reps: number): number {
  const bytes = docs.reduce((n, d) => n + bytesOf(d), 0);
  const times = Math.max(1, Math.ceil((mb * 1e6) / bytes));
  let sink = 0;
  for (const d of docs) sink += count(d); // warm-up
  const rates: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < times; k++) for (const d of docs) sink += count(d);
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    rates.push((bytes * times) / 1e6 / s);
  }
  if (sink < 0) console.log(sink); // keep the work observable
  return median(rates);
}

interface ErrStats { mean_abs_err_pct: number; worst_doc_err_pct: number; sum_err_pct: number }
function errors(est: number[], exact: number[]): ErrStats & { abs: number[] } {
  const abs = est.map((e, i) => (100 * Math.abs(e - exact[i]!)) / exact[i]!);
  const se = est.reduce((a, b) => a + b, 0), sx = exact.reduce((a, b) => a + b, 0);
  return {
    abs,
    mean_abs_err_pct: abs.reduce((a, b) => a + b, 0) / abs.length,
    worst_doc_err_pct: Math.max(...abs),
    sum_err_pct: (100 * (se - sx)) / sx,
  };
}

const t0 = Date.now();
const cats: Category[] = loadAll({ corpus, seeds: resolve(root, "../shared/seeds"), nodeModules: resolve(root, "node_modules") });
const allDocs = cats.flatMap((c) => c.docs);

// Phase 1: errors. This also runs every counter over all material before any timing, so the
// timings below see compiled code that has met every kind of input.
const categories: Record<string, Record<string, unknown>> = {};
const pooled: Record<string, number[]> = { estimator: [], chars4: [] };
const worstCat: Record<string, number> = { estimator: 0, chars4: 0 };
const rows: string[][] = [];
for (const c of cats) {
  const exact = c.docs.map(countTokens);
  const bytes = c.docs.reduce((n, d) => n + bytesOf(d), 0);
  const total = exact.reduce((a, b) => a + b, 0);
  const entry: Record<string, unknown> = { docs: c.docs.length, bytes, exact_tokens: total, bytes_per_token: round(bytes / total, 3) };
  const row = [c.name, String(c.docs.length), (bytes / 1e6).toFixed(2)];
  for (const [name, count] of Object.entries(counters)) {
    const e = errors(c.docs.map(count), exact);
    pooled[name]!.push(...e.abs);
    worstCat[name] = Math.max(worstCat[name]!, Math.abs(e.sum_err_pct));
    entry[name] = { mean_abs_err_pct: round(e.mean_abs_err_pct), worst_doc_err_pct: round(e.worst_doc_err_pct, 1), sum_err_pct: round(e.sum_err_pct) };
    row.push(e.mean_abs_err_pct.toFixed(2), e.sum_err_pct.toFixed(1), e.worst_doc_err_pct.toFixed(1));
  }
  categories[c.name] = entry;
  rows.push(row);
}

// Phase 2: throughput per category.
for (const [ci, c] of cats.entries()) {
  const entry = categories[c.name]!;
  for (const [name, count] of Object.entries(counters)) {
    const p = PLAN[name as keyof typeof PLAN];
    (entry[name] as Record<string, number>).mb_per_s = round(throughput(count, c.docs, p.perCategory, p.reps), 1);
  }
  const exactMbps = throughput(countTokens, c.docs, PLAN.exact.perCategory, PLAN.exact.reps);
  entry.exact = { mb_per_s: round(exactMbps, 2) };
  rows[ci]!.push(String((entry.estimator as Record<string, number>).mb_per_s!.toFixed(0)), exactMbps.toFixed(2));
}

const headline = (name: "estimator" | "chars4") => {
  const p = PLAN[name];
  const abs = pooled[name]!;
  return {
    mean_abs_err_pct: round(abs.reduce((a, b) => a + b, 0) / abs.length),
    worst_category_err_pct: round(worstCat[name]!),
    mb_per_s: round(throughput(counters[name], allDocs, p.total, p.reps), 1),
  };
};
const estimator = headline("estimator");
const c4 = headline("chars4");
const exactAll = { mb_per_s: round(throughput(countTokens, allDocs, PLAN.exact.total, PLAN.exact.reps), 2) };

const result = {
  estimator,
  chars4: c4,
  exact: exactAll,
  categories,
  documents: {
    description:
      `Natural units only: one assistant text/thinking block, one tool input or result, one source-file slice, one group of paragraphs. ` +
      `Documents under ${MIN_DOC_CHARS} chars are skipped; each category is capped at ${CAP_BYTES / 1e6} MB (UTF-8), choosing documents in a fixed hash order when over the cap.`,
    count: allDocs.length,
    min_chars: MIN_DOC_CHARS,
    cap_bytes_per_category: CAP_BYTES,
    sources: Object.fromEntries(cats.map((c) => [c.name, c.source])),
    corpus,
  },
  method: {
    reference: "exact o200k (gpt-tokenizer 4, src/tokens/exact.ts)",
    error:
      "per document |estimate - exact| / exact, in %. Top level: mean_abs_err_pct is the mean over all documents, worst_category_err_pct the largest |category sum error|. Per category: sum_err_pct is signed (Σestimate - Σexact) / Σexact.",
    throughput: `UTF-8 MB (10^6 bytes) of input per second, one call per document; median of several passes over the material repeated to >= ${TOTAL_MB} MB (headline), >= 4 MB per category (>= 1 MB for exact). chars/4 is O(1) per call, so its rate only measures call overhead. Documents are flat strings, as JSON.parse gives them.`,
    node: process.version,
    seconds: 0,
  },
};
result.method.seconds = Math.round((Date.now() - t0) / 1000);

mkdirSync(dirname(out), { recursive: true });
const tmp = `${out}.${process.pid}.tmp`;
writeFileSync(tmp, JSON.stringify(result, null, 2) + "\n");
renameSync(tmp, out);

// Table.
const head = ["category", "docs", "MB", "est mae%", "est sum%", "est worst%", "c/4 mae%", "c/4 sum%", "c/4 worst%", "est MB/s", "exact MB/s"];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (r: string[]): string => r.map((x, i) => (i === 0 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join("  ");
console.log(line(head));
for (const r of rows) console.log(line(r));
console.log(
  `\nestimator: mean_abs_err_pct ${estimator.mean_abs_err_pct}  worst_category_err_pct ${estimator.worst_category_err_pct}  ${estimator.mb_per_s} MB/s\n` +
    `chars/4:   mean_abs_err_pct ${c4.mean_abs_err_pct}  worst_category_err_pct ${c4.worst_category_err_pct}\n` +
    `exact:     ${exactAll.mb_per_s} MB/s\n` +
    `wrote ${out} (${result.method.seconds} s)`,
);
