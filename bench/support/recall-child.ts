// One process's recall queries on a session folder, for bench:resume: `tsx recall-child.ts <dir>
// <query>...` prints {"ms":[…]} (each query's time, the first one paying whatever loading costs).
import { recall } from "../../src/session/recall.ts";

const [dir, ...queries] = process.argv.slice(2);
const ms: number[] = [];
for (const q of queries) {
  const t = performance.now();
  const r = recall(dir!, { query: q });
  ms.push(performance.now() - t);
  if (r.kind === "error") throw new Error(r.text);
}
process.stdout.write(`${JSON.stringify({ ms })}\n`);
