// What lethe's Responses API client (./openai-responses.ts) and lethe/openai's Responses adapter
// share, without loading the `openai` package: reading a reply's usage, its stop reason and its
// in-stream failures, and when to ask for encrypted reasoning.
import { fromHttpError } from "./errors.ts";
import type { Usage } from "../tokens/meter.ts";
import type { ModelError, StopReason } from "./types.ts";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Models known to have no reasoning: OpenAI answers 400 "Encrypted content is not supported with this model." to them. */
const NO_REASONING = /^(?:gpt-4|gpt-3\.5|chatgpt-4o)/i;

/**
 * Whether to ask for `reasoning.encrypted_content`: with `store: false` a reasoning item can only
 * go back with it (without it: 404 "Items are not persisted when `store` is set to false").
 * Every model but the known non-reasoning ones; a 400 saying it is unsupported turns it off.
 */
export function wantsEncryptedReasoning(model: string): boolean {
  return !NO_REASONING.test(model);
}

/** The 400 a model without reasoning answers to include: ["reasoning.encrypted_content"]. */
export function isEncryptedUnsupported(message: string): boolean {
  return /encrypted content is not supported/i.test(message);
}

/** A Responses usage → lethe's (cached tokens moved out of input_tokens, as on Chat Completions). */
export function responsesUsage(u: unknown): Usage | undefined {
  if (!isObj(u) || typeof u.input_tokens !== "number") return undefined;
  const details = isObj(u.input_tokens_details) ? u.input_tokens_details : {};
  const cached = typeof details.cached_tokens === "number" ? details.cached_tokens : 0;
  const usage: Usage = { input_tokens: Math.max(0, u.input_tokens - cached), output_tokens: typeof u.output_tokens === "number" ? u.output_tokens : 0 };
  if (cached > 0) usage.cache_read_input_tokens = cached;
  return usage;
}

/** Why a response ended, from its status, incomplete_details and output items. */
export function responsesStopReason(response: unknown): StopReason {
  const r = isObj(response) ? response : {};
  const output = Array.isArray(r.output) ? (r.output as unknown[]) : [];
  if (r.status === "incomplete") {
    const reason = isObj(r.incomplete_details) ? r.incomplete_details.reason : undefined;
    return reason === "max_output_tokens" ? "max_tokens" : reason === "content_filter" ? "refusal" : "other";
  }
  if (output.some((i) => isObj(i) && i.type === "function_call")) return "tool_use";
  const refused = output.some((i) => isObj(i) && i.type === "message" && Array.isArray(i.content) && i.content.some((p) => isObj(p) && p.type === "refusal"));
  if (refused) return "refusal";
  return r.status === "completed" || r.status === undefined ? "end_turn" : "other";
}

/**
 * The failure an event of the stream reports, as a ModelError: `response.failed` (its
 * `response.error`) or an `error` event (`code`, `message`, `param` at the top, or under `error`).
 * undefined for every other event.
 */
export function streamFailure(event: unknown, provider = "openai"): ModelError | undefined {
  if (!isObj(event)) return undefined;
  let error: Obj;
  if (event.type === "response.failed") {
    const response = isObj(event.response) ? event.response : {};
    error = isObj(response.error) ? response.error : { message: "the response failed (no error given)" };
  } else if (event.type === "error") {
    error = isObj(event.error) ? event.error : { message: event.message, code: event.code, param: event.param };
  } else return undefined;
  // A failed response's code "server_error" is worth a retry, as a 500 would be.
  if (error.type === undefined && error.code === "server_error") error = { ...error, type: "server_error" };
  return fromHttpError(undefined, { error }, undefined, { provider });
}
