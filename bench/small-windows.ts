// bench:small — the read-heavy session of test/support/read-heavy.ts at 8k and 16k windows: whether
// it finishes, its summaries, micro clearings, snips, requests and cost (issue 25, item 3).
import { readHeavySession } from "../test/support/read-heavy.ts";

for (const w of [8_000, 16_000]) console.log(JSON.stringify(await readHeavySession(w)));
