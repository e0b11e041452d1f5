// One worker of bench:fleet: a stateless host. For each job (conversation c, turn t) it builds the
// host's whole history (as a route handler receives it), makes a fresh engine on the shared store,
// prepares the request, and reports. It keeps nothing between jobs but the store connection.
import { createEngine } from "../src/engine/index.ts";
import { validate } from "../src/messages/invariants.ts";
import { connectStore } from "../src/store/connect.ts";
import { fleetHistory, fleetWindow } from "./fleet-history.ts";

const store = await connectStore(process.env.LETHE_FLEET_STORE!);

// The parent may kill this worker at any moment: a reply it can no longer take is dropped.
const send = (m: object) => process.send?.(m, undefined, undefined, () => undefined);

process.on("message", async (job: { c: number; t: number }) => {
  const history = fleetHistory(job.c, job.t);
  const t0 = performance.now();
  const engine = createEngine({ ...fleetWindow(), summarizerMode: "digest", now: () => 1, store, conversationId: `conversation-${job.c}` });
  try {
    const r = await engine.beforeRequest(history);
    const ms = performance.now() - t0;
    send({ ...job, ok: true, ms, summaries: r.events.filter((e) => e.kind === "summarize").length, tokens: r.tokens, threshold: engine.threshold, limit: fleetWindow().contextWindow - fleetWindow().maxOutputTokens, violations: validate(r.history).length });
  } catch (e) {
    send({ ...job, ok: false, error: (e as Error).message.split("\n")[0] });
  }
});
// Warm up before taking jobs (the first call of a process compiles the engine): the figures are
// per turn of a running worker; a restarted one reports ready only after this.
await createEngine({ ...fleetWindow(), summarizerMode: "digest", now: () => 1, store, conversationId: `warm-up-${process.pid}` }).beforeRequest(fleetHistory(0, 3));
send({ ready: true });
