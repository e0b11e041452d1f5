// bench:scale — does a call cost the same at 100k messages as at 1k? (issue 13, part 4)
//
// One long session is built from the shared corpus's real rounds (each assistant turn with the
// user message that answers it, cycled with fresh tool ids), and driven both ways an engine is
// driven:
//   host  a host that keeps its own full history and passes all of it to prepare() every call;
//   copy  the same, but every call passes new objects with the same content, as a host that
//         deserialises its history each time (a route handler given JSON, a checkpointer, a
//         store) does: each message is cloned twice up front, its first call gets the message
//         itself and later calls alternate between the clones, so no object is ever passed
//         twice in a row and the engine never sees the one it first saw again;
//   loop  lethe's own loop: the history prepare returned, plus what is new.
// And the baseline a stateless host would write without lethe, a naive trim: measure the whole
// history as JSON.stringify length / 4 and drop the oldest messages until it fits (timed on 20
// calls at each mark; the bar for copy is ≤ 0.05× its p50 at 10k).
// At each window the time of every prepare() call is taken; the report gives p50 and p99 of the
// calls whose input reached about 1k, 10k and 100k messages (the 1,000 messages before each mark),
// and the ratio 100k / 1k (bar: ≤ 2). Also: what budget wrote to disk (each huge result once,
// not once per call), and the memory after the run (RSS, heap after a full collection).
//
//   npm run bench:scale [-- --messages N --window N… --out FILE]
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createEngine } from "../src/engine/index.ts";
import type { Message } from "../src/messages/types.ts";
import { writeJsonAtomic } from "./replay.ts";
import { corpusRounds, freshRound } from "./rounds.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const flag = (name: string): string[] => argv.flatMap((a, i) => (a === name && argv[i + 1] ? [argv[i + 1]!] : []));
const TOTAL = Number(flag("--messages")[0] ?? 100_000);
const WINDOWS = flag("--window").map(Number);
if (WINDOWS.length === 0) WINDOWS.push(32_000, 200_000);
const OUT = flag("--out")[0] ?? resolve(ROOT, "bench/results/scale.json");
const MARKS = [1_000, 10_000, 100_000].filter((m) => m <= TOTAL);
const SPAN = 1_000; // messages before each mark whose calls are counted

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const r3 = (x: number) => Number(x.toFixed(3));

interface ModeResult {
  marks: Record<string, { calls: number; p50_ms: number; p99_ms: number; naive_trim_p50_ms?: number }>;
  ratio_p50: number;
  ratio_p99: number;
  files_written: number;
  mb_written: number;
  huge_results: number;
  rss_mb: number;
  heap_mb: number;
  seconds: number;
}

const { first, rounds } = corpusRounds(ROOT);
const BASE = mkdtempSync(join(tmpdir(), "lethe-scale-"));
process.on("exit", () => rmSync(BASE, { recursive: true, force: true }));

type Mode = "host" | "copy" | "loop";

/** The naive stateless trim: JSON length / 4 as the measure, the oldest messages dropped until it fits. */
function naiveTrim(history: readonly Message[], budget: number): Message[] {
  const sizes = history.map((m) => JSON.stringify(m).length / 4);
  let total = sizes.reduce((a, b) => a + b, 0);
  let from = 0;
  while (total > budget && from < history.length - 1) total -= sizes[from++]!;
  return history.slice(from);
}

function run(mode: Mode, contextWindow: number, total = TOTAL): ModeResult {
  // The same path every run: the markers name it, and a different name would tokenize differently
  // and tip borderline decisions, so the two ways of driving would not see the same session.
  const dir = join(BASE, "session");
  rmSync(dir, { recursive: true, force: true });
  const engine = createEngine({ contextWindow, maxOutputTokens: Math.min(32_000, contextWindow / 4), sessionDir: dir });
  const host: Message[] = [first];
  // copy: two clones of every message; the call that adds a message passes the message itself.
  const clones: [Message[], Message[]] = [[structuredClone(first)], [structuredClone(first)]];
  let loop: Message[] = [first];
  const times = new Map<number, number[]>(MARKS.map((m) => [m, []]));
  const naive = new Map<number, number[]>();
  let huge = 0;
  const t0 = Date.now();
  for (let k = 0; host.length < total; k++) {
    const [a, u] = freshRound(rounds[k % rounds.length]!, k);
    if (JSON.stringify(u).length > 40_000) huge++;
    let input: Message[];
    if (mode === "copy") {
      input = clones[k % 2]!.concat(a, u);
      for (const c of clones) c.push(structuredClone(a), structuredClone(u));
    } else input = mode === "host" ? host.concat(a, u) : [...loop, a, u];
    host.push(a, u);
    const s = performance.now();
    const r = engine.prepare(input);
    const ms = performance.now() - s;
    loop = r.history;
    for (const m of MARKS) if (host.length > m - SPAN && host.length <= m) times.get(m)!.push(ms);
    // The naive trim, on the same history, 20 times just before each mark (host only: it keeps no state).
    if (mode === "host" && MARKS.some((m) => host.length > m - 40 && host.length <= m)) {
      const mark = MARKS.find((m) => host.length > m - 40 && host.length <= m)!;
      const t = performance.now();
      naiveTrim(host, contextWindow - Math.min(32_000, contextWindow / 4));
      (naive.get(mark) ?? naive.set(mark, []).get(mark)!).push(performance.now() - t);
    }
  }
  const seconds = (Date.now() - t0) / 1000;
  const files = readdirSync(join(dir, "tool-results"), { withFileTypes: true }).filter((f) => f.isFile());
  const bytes = files.reduce((n, f) => n + statSync(join(dir, "tool-results", f.name)).size, 0);
  (globalThis as { gc?: () => void }).gc?.();
  const mem = process.memoryUsage();
  rmSync(dir, { recursive: true, force: true });
  const marks: ModeResult["marks"] = {};
  for (const [m, xs] of times) if (xs.length > 0) marks[`${m / 1000}k`] = { calls: xs.length, p50_ms: r3(pct(xs, 50)), p99_ms: r3(pct(xs, 99)) };
  for (const [m, xs] of naive) marks[`${m / 1000}k`]!.naive_trim_p50_ms = r3(pct(xs, 50));
  const measured = Object.values(marks);
  const lo = measured[0]!, hi = measured.at(-1)!;
  return {
    marks,
    ratio_p50: Number((hi.p50_ms / lo.p50_ms).toFixed(2)),
    ratio_p99: Number((hi.p99_ms / lo.p99_ms).toFixed(2)),
    files_written: files.length,
    mb_written: Number((bytes / 1e6).toFixed(1)),
    huge_results: huge,
    rss_mb: Math.round(mem.rss / 1e6),
    heap_mb: Math.round(mem.heapUsed / 1e6),
    seconds: Number(seconds.toFixed(1)),
  };
}

const results: Record<string, Record<string, ModeResult>> = {};
// Warm-up: the first calls of a process meet unoptimised code; the 1k mark must not measure the JIT.
const MODES: readonly Mode[] = ["loop", "host", "copy"];
for (const w of WINDOWS) for (const mode of MODES) run(mode, w, 3_000);
for (const w of WINDOWS) {
  for (const mode of MODES) {
    const r = run(mode, w);
    (results[`${w / 1000}k`] ??= {})[mode] = r;
    const cells = Object.entries(r.marks).map(([m, x]) => `${m}: p50 ${x.p50_ms.toFixed(3)} p99 ${x.p99_ms.toFixed(3)} ms`).join("   ");
    const naiveCells = Object.entries(r.marks).flatMap(([m, x]) => (x.naive_trim_p50_ms !== undefined ? [`${m} ${x.naive_trim_p50_ms.toFixed(1)} ms`] : [])).join(", ");
    if (naiveCells) console.log(`${String(w / 1000).padStart(3)}k naive trim p50: ${naiveCells}`);
    console.log(`${String(w / 1000).padStart(3)}k ${mode.padEnd(4)}  ${cells}   ratio p50 ${r.ratio_p50} p99 ${r.ratio_p99} (bar ≤ 2)   wrote ${r.files_written} files ${r.mb_written} MB   rss ${r.rss_mb} MB heap ${r.heap_mb} MB   ${r.seconds} s`);
  }
}
writeJsonAtomic(OUT, { messages: TOTAL, span: SPAN, node: process.version, results });
console.log(`wrote ${OUT}`);
