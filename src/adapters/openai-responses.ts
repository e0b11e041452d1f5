// lethe/openai on OpenAI's Responses API: lethe's pipeline for a hand-written loop on
// `client.responses.create`. Your loop keeps its whole input list (the user's messages, each
// response's output items, your function_call_output items); `create(client, params)` compacts
// it, sends it stateless (store: false unless you set store), reports the usage, and on a
// context-length refusal compacts harder and retries once. `stream` does the same for a streamed
// call. Reasoning items go back exactly as they came (their encrypted_content is the only copy
// with store: false), so the server can verify them.
//
// previous_response_id is refused: the server would hold history lethe cannot see or compact.
// truncation: "auto" passes through: the server may then drop items silently, which lethe's
// measure keeps from happening as a rule (requests stay under the window).
import type OpenAI from "openai";
import { blocksOf } from "../messages/blocks.ts";
import { LetheInputError, readSafely } from "../messages/input.ts";
import { fromResponses, toResponses } from "../messages/responses.ts";
import { toModelError } from "../model/errors.ts";
import { isEncryptedUnsupported, responsesUsage, streamFailure, wantsEncryptedReasoning } from "../model/responses-wire.ts";
import type { ModelError } from "../model/types.ts";
import { fixedTokensOf } from "./fixed-tokens.ts";
import { type TrackerOptions, createTracker } from "./tracker.ts";

type Item = OpenAI.Responses.ResponseInputItem;
type StreamEvent = OpenAI.Responses.ResponseStreamEvent;
type Input = string | readonly Item[];

/** Options of createResponsesAdapter. */
export type ResponsesAdapterOptions = TrackerOptions;

/** The part of a Response the adapter reads. */
export interface ResponseLike {
  output: readonly unknown[];
  usage?: unknown;
  status?: string | null;
}

/** An `openai` client, as far as the Responses adapter uses it. */
export interface ResponsesClientLike {
  responses: { create(params: never, options?: never): PromiseLike<unknown> };
}

/** responses.create's parameters with the whole input list (a string is one user message). */
export type ResponsesParams<P> = Omit<P, "input" | "stream"> & { input: Input };

/** Events held until the stream shows whether the request was refused for its size. */
const PREAMBLE = new Set(["response.created", "response.in_progress", "response.queued"]);

const isSystem = (item: unknown): boolean => {
  const role = (item as { role?: unknown } | null)?.role;
  return role === "system" || role === "developer";
};

/** A tool as fixed-tokens.ts measures it: a function tool's name, description and parameters; another kind by its type. */
function toolShape(t: unknown) {
  const o = (t ?? {}) as { name?: unknown; type?: unknown; description?: unknown; parameters?: unknown };
  const name = typeof o.name === "string" ? o.name : typeof o.type === "string" ? o.type : "tool";
  return { name, ...(typeof o.description === "string" ? { description: o.description } : {}), schema: o.parameters ?? {} };
}

function refusePreviousResponse(params: { previous_response_id?: unknown }): void {
  if (readSafely("params", () => params.previous_response_id) == null) return;
  throw new LetheInputError("params.previous_response_id", "lethe cannot compact history the server holds: pass the whole input with store: false instead");
}

/** lethe for one Responses API conversation on the `openai` package: `compact`, `observe`, `create` and `stream` (with the reactive path). */
export function createResponsesAdapter(opts: ResponsesAdapterOptions) {
  const tracker = createTracker(opts);
  /** Leading system / developer items: sent as they are, counted as fixed tokens. */
  let system: Item[] = [];
  let total = 0;
  let encryptedRefused = false;

  /** fixedTokens from the instructions, the leading system / developer items and the tools a call is handed (before compacting: the engine needs it). */
  const measure = (params: { instructions?: unknown; tools?: unknown; input?: unknown }): void => {
    try {
      const { instructions, tools, input } = params;
      const items = Array.isArray(input) ? input : [];
      const lead: string[] = [];
      for (const m of items) {
        if (!isSystem(m)) break;
        lead.push(JSON.stringify((m as { content?: unknown }).content ?? ""));
      }
      const text = [typeof instructions === "string" ? instructions : "", ...lead].filter(Boolean).join("\n");
      const list = Array.isArray(tools) ? tools.map(toolShape) : [];
      if (text || list.length) tracker.measureFixed(fixedTokensOf(opts.engine.counter, text, list));
    } catch {
      // parameters that cannot be read: compact says why, in one line
    }
  };

  /** The request body: store false unless set; encrypted reasoning asked for when the caller did not choose (it is the only copy then). */
  const body = (params: object & { store?: boolean | null; include?: unknown; model?: unknown }, input: Item[], stream: boolean) => {
    const store = params.store ?? false;
    const ask = params.include === undefined && store === false && !encryptedRefused && wantsEncryptedReasoning(String(params.model ?? ""));
    return { ...params, input, store, ...(ask ? { include: ["reasoning.encrypted_content"] } : {}), stream };
  };
  const send = async (client: ResponsesClientLike, params: Parameters<typeof body>[0], input: Item[], stream: boolean): Promise<unknown> => {
    const b = body(params, input, stream);
    try {
      return await client.responses.create(b as never);
    } catch (e) {
      // A model without reasoning refuses the include lethe added: send without, and from now on.
      if (!("include" in b) || params.include !== undefined || !isEncryptedUnsupported(toModelError(e).message)) throw e;
      encryptedRefused = true;
      return client.responses.create(body(params, input, stream) as never);
    }
  };
  const recover = async (error: ModelError): Promise<Item[]> => [...system, ...toResponses(await tracker.recover(error, () => total))];

  const adapter = {
    get history() {
      return tracker.history;
    },
    /** The tokens each request carries besides the input: the fixedTokens option, else what create / stream measured. */
    get fixedTokens(): number {
      return tracker.fixedTokens;
    },
    /** The compacted input to send, for your whole input list so far (leading system / developer items kept as they are). */
    async compact(input: Input): Promise<Item[]> {
      const rest = readSafely("input", () => {
        const items = typeof input === "string" ? [{ role: "user", content: input } as Item] : input;
        if (!Array.isArray(items)) throw new LetheInputError("input", `must be a string or an array of Responses input items, got ${items === null ? "null" : typeof items}`);
        let lead = 0;
        while (lead < items.length && isSystem(items[lead])) lead++;
        system = items.slice(0, lead) as Item[];
        return items.slice(lead) as Item[];
      });
      total = rest.length;
      return [...system, ...toResponses(await tracker.prepare(rest.length, (start) => fromResponses(rest.slice(start))))];
    },
    /** Report a response (its output items and usage). */
    observe(response: ResponseLike): void {
      const [output, usage] = readSafely("observe: response", () => {
        if (response === null || typeof response !== "object" || !Array.isArray(response.output)) throw new LetheInputError("observe: response", "must be a Response (with an output list)");
        return [response.output, responsesUsage(response.usage)] as const;
      });
      const content = fromResponses(output).flatMap(blocksOf);
      if (content.length > 0) tracker.observe({ role: "assistant", content }, usage);
    },
    /**
     * compact → client.responses.create({ ...params, input, store: false }) → observe. A
     * context-length refusal is compacted (engine.recover) and the call sent again, once. Not streamed.
     */
    async create<R extends ResponseLike = OpenAI.Responses.Response>(client: ResponsesClientLike, params: ResponsesParams<OpenAI.Responses.ResponseCreateParamsNonStreaming>): Promise<R> {
      refusePreviousResponse(params);
      const input = readSafely("params", () => params.input);
      measure(params);
      let response: R;
      try {
        const items = await adapter.compact(input);
        response = (await send(client, params, items, false)) as R;
        const failure = response?.status === "failed" ? streamFailure({ type: "response.failed", response }) : undefined;
        if (failure?.kind === "prompt_too_long") throw failure;
      } catch (e) {
        if (e instanceof LetheInputError) throw e;
        const overflow = toModelError(e);
        if (overflow.kind !== "prompt_too_long") throw e;
        response = (await send(client, params, await recover(overflow), false)) as R;
      }
      adapter.observe(response);
      return response;
    },
    /**
     * The streamed create: the SDK's own events, in order, from `client.responses.create({ ...params,
     * stream: true })`; the final response (response.completed / response.incomplete) is observed.
     * A context-length refusal before any output (a 400, or a response.failed / error event) is
     * compacted and sent again, once, without the refused attempt's events reaching you.
     */
    async *stream(client: ResponsesClientLike, params: ResponsesParams<OpenAI.Responses.ResponseCreateParamsStreaming>): AsyncGenerator<StreamEvent> {
      refusePreviousResponse(params);
      measure(params);
      let input = await adapter.compact(readSafely("params", () => params.input));
      for (let attempt = 0; ; attempt++) {
        let overflow: ModelError | undefined;
        let open = false;
        const held: StreamEvent[] = [];
        try {
          for await (const event of (await send(client, params, input, true)) as AsyncIterable<StreamEvent>) {
            if (!open) {
              const failure = attempt === 0 ? streamFailure(event) : undefined;
              if (failure?.kind === "prompt_too_long") {
                overflow = failure;
                break;
              }
              if (PREAMBLE.has(event.type)) {
                held.push(event);
                continue;
              }
              open = true;
              yield* held;
            }
            if (event.type === "response.completed" || event.type === "response.incomplete") adapter.observe(event.response);
            yield event;
          }
          if (!overflow) {
            if (!open) yield* held;
            return;
          }
        } catch (e) {
          const error = toModelError(e);
          if (open || attempt > 0 || error.kind !== "prompt_too_long") throw e;
          overflow = error;
        }
        input = await recover(overflow);
      }
    },
  };
  return adapter;
}
