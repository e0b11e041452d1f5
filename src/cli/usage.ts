// Token usage as the CLI adds it up: per run, per model and for the session (the /cost report
// and the JSON result's usage).
import type { Usage } from "../tokens/meter.ts";

export type FullUsage = { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };

export const zeroUsage = (): FullUsage => ({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });

/** Adds a provider's usage report into a running total. */
export function addUsage(a: FullUsage, u: Usage): void {
  a.input_tokens += u.input_tokens ?? 0;
  a.output_tokens += u.output_tokens ?? 0;
  a.cache_creation_input_tokens += u.cache_creation_input_tokens ?? 0;
  a.cache_read_input_tokens += u.cache_read_input_tokens ?? 0;
}

/** Adds a usage report into a per-model total. */
export function addModelUsage(byModel: Map<string, FullUsage>, model: string, u: Usage): void {
  let m = byModel.get(model);
  if (!m) byModel.set(model, (m = zeroUsage()));
  addUsage(m, u);
}
