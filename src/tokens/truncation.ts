// Silent truncation: a server that cuts the prompt to its own context and reports only what it
// kept (Ollama's OpenAI endpoint drops the oldest messages until the prompt fits num_ctx). The
// sign is not "reported is below the estimate" — the estimator can be several times off on odd
// text (runs of the alphabet, say) — but "the reported input stopped growing while what was sent
// kept growing": an estimator error scales with the content, a cap does not. So the detector
// compares growth against the last request the server counted in full, scaled by the ratio of
// reported to estimated growth the session's own steps showed (growth, not totals: what a request
// carries besides the messages — tool schemas, a chat template — is unknown and cancels out), and
// decides on near-zero growth at once, or on two under-grown requests in a row.

export interface Truncation {
  /** The context the server evidently has (what it kept + what it wrote). */
  window: number;
  reason: string;
}

export type TruncationVerdict =
  /** Counted in full: the figure may anchor the meter. */
  | { kind: "counted" }
  /** Grew too little once: do not anchor on it; one more such request confirms. */
  | { kind: "suspect" }
  | ({ kind: "truncated" } & Truncation);

interface Point {
  input: number;
  visible: number;
}

/** Below this estimated growth a request says nothing either way. */
const MIN_GROWTH = 500;
/** Growth under this share of the expected, on a big enough step, is a cap, not an estimator error. */
const NEAR_ZERO = 0.1;
/** Growth under this share, twice in a row, is a cap (the estimator is not 5× off on two steps running). */
const UNDER = 0.2;

export function createTruncationDetector() {
  let anchor: Point | undefined;
  let suspect: (Point & { output: number }) | undefined;
  /** Reported tokens per estimated token of growth, learnt from this session's own steps. */
  let ratio: number | undefined;
  const clamp = (r: number) => Math.min(10, Math.max(0.1, r));

  const fmt = (n: number) => n.toLocaleString("en-US");
  const verdict = (reported: number, expected: number, window: number): TruncationVerdict => {
    anchor = undefined;
    suspect = undefined;
    return {
      kind: "truncated",
      window,
      reason: `the server reported ${fmt(reported)} input tokens for a request of about ${fmt(Math.round(expected))}: it truncated the prompt to its own context (Ollama's num_ctx?) and dropped the oldest part`,
    };
  };

  return {
    /**
     * The history was rewritten (compacted) before this request: growth against the last one
     * means nothing (the estimate of the rewritten part may be off either way), so the figure
     * only anchors the next comparison. A cap shows again on the requests that follow.
     */
    reanchor(reported: number, visible: number): void {
      suspect = undefined;
      anchor = reported > 0 && visible > 0 ? { input: reported, visible } : undefined;
    },
    /**
     * One request: `reported` input tokens for a request estimated at `visible` (without
     * thinking), and the reply's output tokens.
     */
    observe(reported: number, visible: number, output: number): TruncationVerdict {
      if (!(reported > 0) || !(visible > 0)) return { kind: "counted" };
      if (!anchor) {
        anchor = { input: reported, visible };
        return { kind: "counted" };
      }
      // Growth is measured from the last request counted in full, never from a suspicious one: a
      // drop-oldest cap moves by a whole message either way, as much as a small step adds.
      const base = anchor;
      const step = visible - base.visible;
      const growth = reported - base.input;
      if (step < MIN_GROWTH) {
        // The history shrank (compacted): a capped server counts a smaller request in full again,
        // so a shrink re-anchors. Too small a step to judge keeps the anchor where it was: the
        // next requests are measured from it, so a session of small steps adds up to one that can
        // be judged (re-anchored on each, a capped figure would become the new base, and a cap
        // would never show).
        if (step < 0) {
          anchor = { input: reported, visible };
          suspect = undefined;
        }
        return suspect ? { kind: "suspect" } : { kind: "counted" };
      }
      if (ratio === undefined) {
        // The first real step teaches the ratio (reported growth per estimated token: what the
        // request carries besides the messages — tool schemas, a template — cancels out).
        if (growth > 0) {
          ratio = clamp(growth / step);
          anchor = { input: reported, visible };
          return { kind: "counted" };
        }
        if (suspect) return verdict(reported, base.input + step, Math.max(reported + output, suspect.input + suspect.output));
        suspect = { input: reported, visible, output };
        return { kind: "suspect" };
      }
      const expectedGrowth = step * ratio;
      const expected = base.input + expectedGrowth;
      const shortfall = expected - reported;
      if (growth < expectedGrowth * NEAR_ZERO && shortfall >= 1_000) return verdict(reported, expected, reported + output);
      if (growth < expectedGrowth * UNDER) {
        if (suspect) return verdict(reported, expected, Math.max(reported + output, suspect.input + suspect.output));
        suspect = { input: reported, visible, output };
        return { kind: "suspect" };
      }
      ratio = clamp(0.7 * ratio + 0.3 * (growth / step));
      anchor = { input: reported, visible };
      suspect = undefined;
      return { kind: "counted" };
    },
  };
}
