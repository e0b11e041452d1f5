// `lethe`: the product. One engine per session with a real file store (tool results are written
// to <dir>/tool-results/ and fsynced, as in production), prepare before each request with the
// exact tokens of the system prompt as fixedTokens, observe with the reported usage after it.
// overThreshold (the engine's anchored measure above its threshold) → the shared stand-in summary.
import { InvariantError, createEngine } from "../../../src/engine.ts";
import type { Policy, PolicySession } from "../types.ts";

export { InvariantError };

export const lethePolicy: Policy = {
  name: "lethe",
  describe:
    "createEngine({contextWindow, maxOutputTokens, sessionDir}) per session (file store under os.tmpdir(), fsync per saved result), " +
    "engine.prepare(history, {fixedTokens: exact system tokens}) timed; engine.observe(sent, reply, usage) untimed",
  start({ window, dir, clock, systemTokens }): PolicySession {
    const engine = createEngine({
      contextWindow: window.contextWindow,
      maxOutputTokens: window.maxOutputTokens,
      sessionDir: dir,
      now: clock,
    });
    const call = { fixedTokens: systemTokens };
    return {
      threshold: engine.threshold,
      prepare(live) {
        const r = engine.prepare(live, call);
        return { history: r.history, overThreshold: r.overThreshold, acted: r.events.map((e) => e.kind) };
      },
      observe(sent, reply, usage) {
        engine.observe(sent, reply, usage, call);
      },
    };
  },
};
