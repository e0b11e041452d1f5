// Test helper (not a test): one new process's recall calls on a session folder, as a CLI run or the
// viewer makes them. Prints {"answers":[…],"stats":{…}}: each answer's text, and what recall's
// index did in this process (loaded from disk, transcript bytes parsed, written).
//
//   node --import tsx test/session/recall-child.ts <session dir> '<JSON list of recall options>'
import { recall } from "../../src/session/recall.ts";
import { recallIndexStats } from "../../src/session/recall-index.ts";
import type { RecallOptions } from "../../src/session/recall-types.ts";

const [dir, calls] = process.argv.slice(2);
const answers = (JSON.parse(calls!) as RecallOptions[]).map((o) => recall(dir!, o).text);
process.stdout.write(`${JSON.stringify({ answers, stats: recallIndexStats() })}\n`);
