// One model call: streamed, retried on transient errors (backoff with jitter, retry-after
// honoured), and switched to the fallback model after `fallbackAfter` overloaded / 5xx errors
// in a row, or when the retries run out while the main model is overloaded.
import type { Message } from "../messages/types.ts";
import { ModelError, type ModelClient, type ModelResponse, type ToolDefinition } from "../model/types.ts";
import { type RetryOptions, withRetry } from "../model/retry.ts";
import type { AgentEvent } from "./types.ts";

export interface ModelCallerOptions {
  client: ModelClient;
  model: string;
  fallbackModel?: string;
  /** Default 3. */
  fallbackAfter?: number;
  system?: string;
  tools?: ToolDefinition[];
  maxOutputTokens: number;
  retry?: RetryOptions;
  signal?: AbortSignal;
  emit: (e: AgentEvent) => void;
}

export interface ModelCaller {
  call(messages: Message[]): Promise<ModelResponse>;
  /** The model calls go to now (the fallback after a switch). */
  model(): string;
}

const overloaded = (e: ModelError) => e.kind === "overloaded" || e.kind === "server";

export function createModelCaller(opts: ModelCallerOptions): ModelCaller {
  const { client, signal, emit } = opts;
  let model = opts.model;
  let overloadStreak = 0;
  const fallbackAfter = Math.max(1, opts.fallbackAfter ?? 3);

  const switchToFallback = (error: ModelError): boolean => {
    if (!opts.fallbackModel || model === opts.fallbackModel) return false;
    emit({ type: "fallback", from: model, to: opts.fallbackModel, error });
    model = opts.fallbackModel;
    overloadStreak = 0;
    return true;
  };

  const once = (messages: Message[]) =>
    withRetry(
      () =>
        client.stream({ model, system: opts.system, tools: opts.tools, messages, maxTokens: opts.maxOutputTokens, signal }, (e) => emit({ type: "stream", event: e })),
      {
        ...opts.retry,
        signal,
        onRetry: (info) => {
          emit({ type: "retry", error: info.error, attempt: info.attempt, delayMs: info.delayMs });
          opts.retry?.onRetry?.(info);
          if (overloaded(info.error)) {
            if (++overloadStreak >= fallbackAfter) switchToFallback(info.error);
          } else overloadStreak = 0;
        },
      },
    );

  return {
    model: () => model,
    async call(messages) {
      try {
        const r = await once(messages);
        overloadStreak = 0;
        return r;
      } catch (e) {
        // Retries ran out while the main model was overloaded: one more round on the fallback.
        if (e instanceof ModelError && overloaded(e) && switchToFallback(e)) return once(messages);
        throw e;
      }
    },
  };
}
