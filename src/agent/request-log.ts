// The transcript's request lines: one per model call, what the viewer and `lethe sessions` draw
// from (tokens sent and estimated, cache reads and writes, cost, latency, and the lines a chart
// draws against: the threshold and the window).
import type { Engine } from "../engine/index.ts";
import type { ModelResponse } from "../model/types.ts";
import { REQUEST_EVENT, type TranscriptWriter } from "../session/transcript.ts";
import { usageInput } from "../tokens/meter.ts";

/** One answered model call, as the loop saw it. */
export interface LoggedRequest {
  model: string;
  reply: ModelResponse;
  /** The engine's estimate of the input tokens sent. */
  estimated: number;
  /** When the request went out (ms). */
  began: number;
  cost: number | undefined;
}

/** Appends the request line of one model call. */
export function logRequest(transcript: TranscriptWriter, engine: Engine, r: LoggedRequest): void {
  const u = r.reply.usage;
  transcript.append({
    type: "event",
    ts: new Date().toISOString(),
    name: REQUEST_EVENT,
    model: r.model,
    input_tokens: usageInput(u),
    input_tokens_estimated: r.estimated,
    cache_read_tokens: u.cache_read_input_tokens ?? 0,
    cache_write_tokens: u.cache_creation_input_tokens ?? 0,
    output_tokens: u.output_tokens ?? 0,
    ...(r.cost !== undefined ? { cost_usd: r.cost } : {}),
    latency_ms: Date.now() - r.began,
    stop_reason: r.reply.stopReason,
    threshold: engine.threshold,
    context_window: engine.contextWindow,
  });
}
