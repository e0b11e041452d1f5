// Diagnostics for prepare_ms (not part of bench:replay's output): where do the slow requests come
// from? Replays like bench/replay.ts, records every timed request, observes V8 garbage
// collections (perf_hooks "gc" entries) and attributes GC pauses that overlap a timed section.
//
//   tsx bench/replay/diagnose.ts [--corpus FILE] [--window N]… [--policy NAME]… [--session ID]…
//
// For a function-level view, run the replay under the V8 profiler:
//   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/replay.ts --policy lethe --out /tmp/r.json
import { PerformanceObserver } from "node:perf_hooks";
import { loadCorpus, parseArgs } from "../replay.ts";
import { type RequestRecord, percentile, runReplay } from "./harness.ts";

interface Gc {
  start: number;
  duration: number;
  kind: number;
}

const args = parseArgs(process.argv.slice(2).filter((a) => a !== "--"));
let sessions = loadCorpus(args.corpus);
if (args.sessions.length > 0) sessions = sessions.filter((s) => args.sessions.includes(s.id));

const gcs: Gc[] = [];
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push({ start: e.startTime, duration: e.duration, kind: (e as { detail?: { kind?: number } }).detail?.kind ?? 0 });
});
obs.observe({ entryTypes: ["gc"] });

const records: RequestRecord[] = [];
// One pass: this script looks at single-pass timings and what lands inside them.
await runReplay(sessions, { windows: args.windows, policies: args.policies, warmup: args.warmup, repeat: 1, onRequest: (r) => records.push(r) });
await new Promise((r) => setTimeout(r, 200));
obs.disconnect();
gcs.sort((a, b) => a.start - b.start);

/** GC milliseconds inside [t0, t0 + ms]. */
function gcInside(r: RequestRecord): number {
  let n = 0;
  for (const g of gcs) {
    if (g.start > r.t0 + r.ms) break;
    const lo = Math.max(g.start, r.t0);
    const hi = Math.min(g.start + g.duration, r.t0 + r.ms);
    if (hi > lo) n += hi - lo;
  }
  return n;
}

const GC_KIND: Record<number, string> = { 1: "scavenge", 2: "mark-compact", 4: "incremental", 8: "weak-callbacks" };
const fmt = (x: number) => x.toFixed(3);
console.log(`${gcs.length} GC pauses observed, ${fmt(gcs.reduce((a, g) => a + g.duration, 0))} ms in total`);

for (const window of args.windows) {
  for (const policy of args.policies) {
    const rs = records.filter((r) => r.window === window && r.policy === policy.name);
    if (rs.length === 0) continue;
    const withGc = rs.map((r) => ({ r, gc: gcInside(r) }));
    const raw = Float64Array.from(rs.map((r) => r.ms)).sort();
    const net = Float64Array.from(withGc.map((x) => x.r.ms - x.gc)).sort();
    const slow = withGc.filter((x) => x.r.ms > 1);
    console.log(`\n== window ${window} ${policy.name}: ${rs.length} requests`);
    console.log(`p50 ${fmt(percentile(raw, 50))} ms, p99 ${fmt(percentile(raw, 99))} ms; without GC pauses: p50 ${fmt(percentile(net, 50))}, p99 ${fmt(percentile(net, 99))}`);
    console.log(`requests > 1 ms: ${slow.length} (with a GC pause inside: ${slow.filter((x) => x.gc > 0).length}; a layer acted: ${slow.filter((x) => x.r.acted.length > 0).length})`);
    const buckets: [number, number][] = [[0, 50], [50, 100], [100, 200], [200, 1e9]];
    for (const [lo, hi] of buckets) {
      const b = withGc.filter((x) => x.r.messages >= lo && x.r.messages < hi);
      if (b.length === 0) continue;
      const s = Float64Array.from(b.map((x) => x.r.ms - x.gc)).sort();
      console.log(`  history ${lo}–${hi < 1e9 ? hi - 1 : "…"} messages: ${b.length} requests, mean ${fmt(s.reduce((a, v) => a + v, 0) / s.length)} ms, p99 ${fmt(percentile(s, 99))} ms (GC excluded)`);
    }
    const acted = new Map<string, number[]>();
    for (const x of withGc) {
      const k = x.r.acted.length ? x.r.acted.join("+") : "(none)";
      acted.set(k, [...(acted.get(k) ?? []), x.r.ms - x.gc]);
    }
    for (const [k, v] of acted) {
      const s = Float64Array.from(v).sort();
      console.log(`  layers acted ${k}: ${v.length} requests, mean ${fmt(s.reduce((a, b) => a + b, 0) / s.length)} ms, max ${fmt(s[s.length - 1]!)} ms`);
    }
    console.log("  slowest:");
    for (const x of withGc.sort((a, b) => b.r.ms - a.r.ms).slice(0, 12)) {
      const kinds = gcs.filter((g) => g.start < x.r.t0 + x.r.ms && g.start + g.duration > x.r.t0).map((g) => GC_KIND[g.kind] ?? g.kind);
      console.log(`    ${fmt(x.r.ms)} ms  gc ${fmt(x.gc)} ${kinds.join(",")}  ${x.r.session} #${x.r.request} (${x.r.messages} msgs) ${x.r.acted.join("+")}`);
    }
  }
}
