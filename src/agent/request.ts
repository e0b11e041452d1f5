// One model request of the loop, after the compaction gate: the call (with the reactive path:
// "prompt too long" from the provider → engine.recover, then one retry), then what every reply
// is accounted for: the transcript's request line, the usage, the "response" event and
// engine.observe (which anchors the engine's measure on the provider's count).
import type { Engine } from "../engine/index.ts";
import type { CompactionEvent } from "../compaction/types.ts";
import type { Message } from "../messages/types.ts";
import { ModelError, type ModelResponse } from "../model/types.ts";
import type { TranscriptWriter } from "../session/transcript.ts";
import type { Usage } from "../tokens/meter.ts";
import type { RunShape } from "./compaction-gate.ts";
import type { Conversation } from "./conversation.ts";
import type { ModelCaller } from "./model-call.ts";
import { logRequest } from "./request-log.ts";
import type { Spend } from "./spend.ts";
import type { AgentEvent } from "./types.ts";

export interface RequestDeps {
  engine: Engine;
  conversation: Conversation;
  shape: RunShape;
  caller: ModelCaller;
  emit: (e: AgentEvent) => void;
  note: (events: readonly CompactionEvent[], tokensAfter: number) => void;
}

/** A request that was answered. */
export interface SentRequest {
  reply: ModelResponse;
  /** The history that was sent (after a recovery, the recovered one). */
  sent: Message[];
  /** The engine's estimate of its tokens. */
  estimated: number;
  /** When it went out (ms). */
  began: number;
}

/** Sends the run's history (estimated at `estimated` tokens); on "prompt too long", shrinks harder (engine.recover) and retries once. */
export async function sendRequest(d: RequestDeps, estimated: number): Promise<SentRequest> {
  const sent = d.conversation.history;
  const began = Date.now();
  try {
    return { reply: await d.caller.call(sent), sent, estimated, began };
  } catch (e) {
    if (!(e instanceof ModelError) || e.kind !== "prompt_too_long") throw e;
    return recoverAndResend(d, e);
  }
}

async function recoverAndResend(d: RequestDeps, error: ModelError): Promise<SentRequest> {
  d.emit({ type: "compacting", kind: "reactive" });
  const recovered = await d.engine.recover(d.conversation.history, error, d.shape);
  d.note(recovered.events, recovered.tokens);
  d.conversation.history = recovered.history;
  const sent = d.conversation.history;
  const began = Date.now();
  return { reply: await d.caller.call(sent), sent, estimated: recovered.tokens, began };
}

export interface AccountDeps extends RequestDeps {
  transcript?: TranscriptWriter;
  /** What the run spends (requestCost, maxBudgetUsd). */
  spend: Spend;
  /** The run's usage so far; the reply's is added. */
  usage: Required<Omit<Usage, "cleared_input_tokens">>;
}

/** After a reply: the transcript's request line, the run's usage, the "response" event, engine.observe. */
export function accountReply(d: AccountDeps, r: SentRequest): void {
  const model = d.caller.model();
  const cost = d.spend.add(model, r.reply.usage);
  if (d.transcript) logRequest(d.transcript, d.engine, { model, reply: r.reply, estimated: r.estimated, began: r.began, cost });
  for (const k of Object.keys(d.usage) as (keyof typeof d.usage)[]) d.usage[k] += r.reply.usage[k] ?? 0;
  d.emit({ type: "response", usage: r.reply.usage, stopReason: r.reply.stopReason, model: d.caller.model() });
  d.engine.observe(r.sent, r.reply.message, r.reply.usage, d.shape);
}

/**
 * The summary calls the engine made (summary_call events): each is a model call the run paid for,
 * so its usage joins the run's, its price the spend, and it gets a "response" event (summary:
 * true). Its request line the engine wrote when the call was answered.
 */
export function accountSummaries(d: Pick<AccountDeps, "spend" | "usage" | "emit">, events: readonly CompactionEvent[]): void {
  for (const e of events) {
    if (e.kind !== "summary_call") continue;
    d.spend.add(e.model, e.usage);
    for (const k of Object.keys(d.usage) as (keyof typeof d.usage)[]) d.usage[k] += e.usage[k] ?? 0;
    d.emit({ type: "response", usage: e.usage, stopReason: "end_turn", model: e.model, summary: true });
  }
}
