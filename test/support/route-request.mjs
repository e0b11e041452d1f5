// One request of a stateless host, as its own process: the whole history arrives as JSON on
// stdin, a fresh engine on the conversation store prepares it, and the result goes to stdout.
// Uses the built package (dist/), as a deployed route handler would.
import { createEngine, connectStore, validate } from "../../dist/index.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { store: where, conversationId, history, window, config } = JSON.parse(input);
const store = await connectStore(where);
const engine = createEngine({ ...window, summarizerMode: "digest", config, now: () => 1, store, conversationId });
const r = await engine.beforeRequest(history);
await store.close();
process.stdout.write(JSON.stringify({ summaries: r.events.filter((e) => e.kind === "summarize").length, tokens: r.tokens, threshold: engine.threshold, violations: validate(r.history).length, messages: r.history.length }));
