// The pipeline, in SPEC order: cheap first, expensive last.
//
//   history ─▶ budget ─▶ snip ─▶ micro ─▶ measure ─▶ (over threshold? summarize: issue #3)
//
// budget must run before micro: it saves the full text of a huge result before
// anything could replace it with a placeholder.
import type { Message } from "../messages/types.ts";
import { budget } from "./layers/budget.ts";
import { thresholdOf } from "./config/config.ts";
import { micro } from "./layers/micro.ts";
import { snip } from "./layers/snip.ts";
import type { Layer, LayerContext, LayerEvent } from "./types.ts";

/** The cheap layers, in the order they run. */
export const LAYERS: readonly { name: LayerEvent["kind"]; run: Layer }[] = [
  { name: "budget", run: budget },
  { name: "snip", run: snip },
  { name: "micro", run: micro },
];

/** What one layer did in a prepare. */
export interface LayerReport {
  layer: LayerEvent["kind"];
  freedTokens: number;
  event: LayerEvent | null;
  /** The history it left (its input is the previous layer's, or the pipeline's). */
  history: Message[];
}

/** The result of the cheap layers: the history, what each layer did, tokens and threshold. */
export interface PrepareResult {
  history: Message[];
  /** What each layer did, in order (one entry per layer, event null when it did nothing). */
  reports: LayerReport[];
  /** The events that fired, in order. */
  events: LayerEvent[];
  /** Estimated tokens of the prepared request: fixed part + history. */
  tokens: number;
  /** Auto-compact threshold for this window. */
  threshold: number;
  /** The cheap layers were not enough: the summary layer should run. */
  overThreshold: boolean;
}

/** Runs the cheap layers (budget, snip, micro) and measures the result. Pure: side effects go through the context. */
export function prepare(history: readonly Message[], ctx: LayerContext): PrepareResult {
  let current = history as Message[];
  const reports: LayerReport[] = [];
  const events: LayerEvent[] = [];
  for (const layer of LAYERS) {
    const r = layer.run(current, ctx);
    current = r.history;
    reports.push({ layer: layer.name, freedTokens: r.freedTokens, event: r.event, history: r.history });
    if (r.event) events.push(r.event);
  }
  const tokens = ctx.measure ? ctx.measure(current) : (ctx.fixedTokens ?? 0) + ctx.tokens.messages(current);
  const threshold = thresholdOf(ctx);
  return { history: current, reports, events, tokens, threshold, overThreshold: tokens > threshold };
}
