// bench:tokens's estimator rate as a host meets it (run by bench/tokens.ts in a process of its
// own, whose estimator has seen nothing else): a host hands over strings of every kind V8 has, not
// only the flat ones JSON.parse gives — slices (a line of a record), concatenations (a template),
// internalized short strings, two-byte ones — from its first call. A scan that looked charCodeAt
// up on the string compiled that lookup as megamorphic then, and ran at half its speed on
// everything after. Then the headline's material and volume, flat as there.
// Usage: tsx bench/tokens-host.ts CORPUS SEEDS NODE_MODULES MB REPS (prints the rate, MB/s)
import { loadAll } from "./tokens-material.ts";
import { throughput } from "./tokens-throughput.ts";
import { estimateTokens } from "../src/tokens/estimate.ts";

const [corpus, seeds, nodeModules, mb, reps] = process.argv.slice(2);
const docs = loadAll({ corpus: corpus!, seeds: seeds!, nodeModules: nodeModules! }).flatMap((c) => c.docs);
let sink = 0;
for (const d of docs.slice(0, 800)) {
  sink += estimateTokens(d.slice(1, 200));
  sink += estimateTokens(`${d.slice(0, 50)}\n${d.slice(50, 120)}`);
  sink += estimateTokens((JSON.parse(JSON.stringify({ k: d.slice(0, 30) })) as { k: string }).k);
  sink += estimateTokens(`${d}\u2028`.slice(3, 100));
}
if (sink < 0) console.log(sink);
console.log(throughput(estimateTokens, docs, Number(mb), Number(reps)).toFixed(1));
