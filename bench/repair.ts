// repair and prepare at scale (issue 9): the time for 10k and 100k messages with the shapes that
// used to be quadratic — many tool_use blocks sharing one id, and long runs of same-role messages.
// Linear means the 100k figure is about 10× the 10k one (bar: at most 15×).
//
// Two figures per case. `single`: one call on a collected heap. `steady`: the per-call time over
// calls whose messages add up to 500k at both sizes (fifty 10k calls, five 100k calls), every output
// kept alive as a host keeps its history. The single 10k call allocates less than V8's young
// generation holds, so it is timed without any collection and leaves the collection of everything
// it made to whoever allocates next; the 100k call pays for its own (5 scavenges, ~10 ms each, most
// of its time). `steady` charges each call for the collections its allocation causes, at both sizes
// alike, so its ratio is the one that says whether the work grows linearly; `single` is kept beside
// it (its ratio is 19-21× on this machine, all of the excess being young-generation collection).
//   npm run bench:repair  → bench/results/repair.json
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createEngine } from "../src/engine/index.ts";
import { repair } from "../src/messages/repair.ts";
import type { Message } from "../src/messages/types.ts";

function duplicateIds(n: number): Message[] {
  const h: Message[] = [{ role: "user", content: [{ type: "text", text: "go" }] }];
  for (let i = 0; h.length < n; i++) {
    h.push({ role: "assistant", content: [{ type: "tool_use", id: "toolu_same", name: "bash", input: { command: `echo ${i}` } }] });
    h.push({ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_same", content: `out ${i}` }] });
  }
  return h;
}

function sameRole(n: number): Message[] {
  const h: Message[] = [];
  for (let i = 0; i < n; i++) h.push({ role: "user", content: [{ type: "text", text: `line ${i}` }] });
  return h;
}

/**
 * Median of 11, each on a freshly built history (no memo carried over), after 10 warm-up runs: with
 * one, the 10k runs were timed before the optimising compiler had finished with repair, while a
 * single 100k run lasts long enough to be optimised midway — the ratio then measured the JIT.
 * (Eleven, not seven: on a shared 2-core machine the median of seven moved by ±30% between runs.)
 */
function time(make: () => Message[], run: (h: Message[]) => void): number {
  for (let w = 0; w < 10; w++) run(make());
  const runs: number[] = [];
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let r = 0; r < 11; r++) {
    const h = make();
    gc?.(); // each run starts from a collected heap, at both sizes alike
    const t0 = performance.now();
    run(h);
    runs.push(performance.now() - t0);
  }
  return runs.sort((a, b) => a - b)[5]!;
}

/** Messages per steady sample, at both sizes: 50 calls of 10k, 5 of 100k. */
const STEADY_MESSAGES = 500_000;

/**
 * Per-call time over calls that add up to 500k messages, outputs kept alive; the least of 11 after
 * the same warm-up as `time`. The least, not the median: the work and the collections it causes
 * are the same in every sample, so what varies is only what other processes take from this
 * 2-core machine (same_role at 10k is 0.7 ms a call: its median ratio ranged 11-15.3 over three
 * runs). bench:replay takes the least of its repetitions for the same reason.
 */
function timeSteady(n: number, make: () => Message[], run: (h: Message[]) => unknown): number {
  for (let w = 0; w < 10; w++) run(make());
  const calls = Math.max(1, Math.round(STEADY_MESSAGES / n));
  const runs: number[] = [];
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let r = 0; r < 11; r++) {
    const inputs = Array.from({ length: calls }, make);
    const kept: unknown[] = [];
    gc?.();
    const t0 = performance.now();
    for (const h of inputs) kept.push(run(h));
    runs.push((performance.now() - t0) / calls);
  }
  return Math.min(...runs);
}

type Figure = { ms10k: number; ms100k: number; ratio: number };
const figure = (ms10k: number, ms100k: number): Figure => ({
  ms10k: Number(ms10k.toFixed(1)),
  ms100k: Number(ms100k.toFixed(1)),
  ratio: Number((ms100k / ms10k).toFixed(2)),
});
const results: Record<string, { single: Figure; steady: Figure }> = {};
for (const [name, make] of [["duplicate_ids", duplicateIds], ["same_role", sameRole]] as const) {
  for (const [what, run] of [
    ["repair", (h: Message[]) => repair(h)],
    ["prepare", (h: Message[]) => createEngine({ contextWindow: 1_000_000, maxOutputTokens: 32_000 }).prepare(h)],
  ] as const) {
    const single = figure(time(() => make(10_000), run), time(() => make(100_000), run));
    const steady = figure(timeSteady(10_000, () => make(10_000), run), timeSteady(100_000, () => make(100_000), run));
    results[`${what}/${name}`] = { single, steady };
    for (const [how, f] of [["steady", steady], ["single", single]] as const) {
      console.log(`${what.padEnd(8)} ${name.padEnd(14)} ${how}  10k ${f.ms10k.toFixed(1).padStart(7)} ms   100k ${f.ms100k.toFixed(1).padStart(8)} ms   ratio ${f.ratio.toFixed(2)}${how === "steady" ? " (bar ≤ 15)" : ""}`);
    }
  }
}
const out = join(dirname(fileURLToPath(import.meta.url)), "results", "repair.json");
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ node: process.version, results }, null, 2)}\n`);
