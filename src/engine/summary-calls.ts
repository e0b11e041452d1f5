// Every summary model call the engine makes gets a `request` line in the transcript, as the agent
// loop's calls do, so what a session cost adds up the same in its result, `lethe sessions` and the
// viewer (a stale background summary is paid for too).
import type { SummaryCallEvent } from "../compaction/types.ts";
import type { TranscriptWriter } from "../session/transcript.ts";
import { REQUEST_EVENT } from "../session/transcript-format.ts";
import { type Usage, usageInput } from "../tokens/meter.ts";

export interface SummaryCallLine {
  transcript: TranscriptWriter | undefined;
  /** The host's pricing (EngineOptions.requestCost). */
  requestCost?: (model: string, usage: Usage) => number | undefined;
  threshold: number;
  contextWindow: number;
}

/** Writes the request line of one summary call. */
export function logSummaryCall(l: SummaryCallLine, e: SummaryCallEvent): void {
  const t = l.transcript;
  // A host's own transcript may take boundaries only.
  if (typeof t?.append !== "function") return;
  let cost: number | undefined;
  try {
    cost = l.requestCost?.(e.model, e.usage);
  } catch {
    cost = undefined; // a host's pricing that throws prices nothing; the line is still written
  }
  t.append({
    type: "event",
    ts: new Date().toISOString(),
    name: REQUEST_EVENT,
    model: e.model,
    summary: true,
    input_tokens: usageInput(e.usage),
    input_tokens_estimated: e.tokens,
    cache_read_tokens: e.usage.cache_read_input_tokens ?? 0,
    cache_write_tokens: e.usage.cache_creation_input_tokens ?? 0,
    output_tokens: e.usage.output_tokens ?? 0,
    ...(cost !== undefined && Number.isFinite(cost) ? { cost_usd: cost } : {}),
    threshold: l.threshold,
    context_window: l.contextWindow,
  });
}
