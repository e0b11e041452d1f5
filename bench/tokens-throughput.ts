// Throughput of a token counter, for bench/tokens.ts and bench/tokens-host.ts: UTF-8 megabytes
// (10^6 bytes) of input per second, one call per document, the median of several passes.

export type Counter = (text: string) => number;

export const bytesOf = (s: string): number => Buffer.byteLength(s, "utf8");
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** MB/s of `count` over `docs` repeated to at least `mb` megabytes: median of `reps` passes. */
export function throughput(count: Counter, docs: string[], mb: number, reps: number): number {
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
