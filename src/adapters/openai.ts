// lethe/openai: lethe's pipeline for a hand-written loop on the `openai` package's Chat Completions.
// Your loop keeps its own `messages` list; before each call, `compact(messages)` gives the list to
// send; `create(client, params)` does that, calls `client.chat.completions.create`, reports the
// usage, and on a context-length error compacts harder and retries once. One adapter per
// conversation. Messages go to the server in the strict wire format (no lethe extension fields);
// `reasoning: "tool-turns"` sends reasoning back as DeepSeek's thinking mode requires.
// createResponsesAdapter (./openai-responses.ts) does the same for `client.responses.create`.
import type OpenAI from "openai";
import { fromOpenAI, toOpenAI } from "../messages/openai.ts";
import type { OpenAIMessage } from "../messages/openai-types.ts";
import { LetheInputError, readSafely } from "../messages/input.ts";
import { toModelError } from "../model/errors.ts";
import { fixedTokensOf, toolShape } from "./fixed-tokens.ts";
import { type TrackerOptions, createTracker } from "./tracker.ts";

export { createResponsesAdapter, type ResponseLike, type ResponsesAdapterOptions, type ResponsesClientLike, type ResponsesParams } from "./openai-responses.ts";

/** Whether a message is a leading system/developer one (a message whose role cannot be read is not). */
function isSystem(m: unknown): boolean {
  try {
    const role = (m as { role?: unknown } | null)?.role;
    return role === "system" || role === "developer";
  } catch {
    return false;
  }
}

/** Options of createOpenAIAdapter. */
export interface OpenAIAdapterOptions extends TrackerOptions {
  /** Which assistant turns carry their reasoning back as reasoning_content (default "none"). */
  reasoning?: "none" | "tool-turns" | "all";
}

/** The part of a ChatCompletion the adapter reads. */
export interface CompletionLike {
  choices: { message: unknown }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/** An `openai` client, as far as the adapter uses it. */
export interface ChatClientLike {
  chat: { completions: { create(params: never, options?: never): PromiseLike<unknown> } };
}

/** lethe for one Chat Completions conversation on the `openai` package: `compact`, `observe` and `create` (the reactive path). */
export function createOpenAIAdapter(opts: OpenAIAdapterOptions) {
  const tracker = createTracker(opts);
  /** fixedTokens from the leading system messages and the tools create is handed. */
  const measure = (messages: readonly unknown[], tools: unknown): void => {
    let system: string[];
    let list: unknown[];
    try {
      system = [];
      for (const m of messages) {
        if (!isSystem(m)) break;
        const c = (m as { content?: unknown }).content;
        system.push(typeof c === "string" ? c : JSON.stringify(c ?? ""));
      }
      list = Array.isArray(tools) ? [...tools] : [];
    } catch {
      return; // a list that cannot be read: compact says why, in one line
    }
    if (system.length === 0 && list.length === 0) return;
    tracker.measureFixed(fixedTokensOf(opts.engine.counter, system.join("\n"), list.map(toolShape)));
  };
  let system: OpenAIMessage[] = [];
  let total = 0;
  const out = (history: Parameters<typeof toOpenAI>[0]) => [...system, ...toOpenAI(history, { strict: true, reasoning: opts.reasoning ?? "none" })];

  const adapter = {
    get history() {
      return tracker.history;
    },
    /** The tokens each request carries besides the messages: the fixedTokens option, else what create measured. */
    get fixedTokens(): number {
      return tracker.fixedTokens;
    },
    /** The compacted list to send, for your whole list so far (the SDK's message type in and out). */
    async compact(messages: readonly (OpenAIMessage | OpenAI.Chat.ChatCompletionMessageParam)[]): Promise<OpenAI.Chat.ChatCompletionMessageParam[]> {
      // A list whose reading throws (a Proxy) is refused here; a message that does is named by fromOpenAI.
      const rest = readSafely("messages", () => {
        if (!Array.isArray(messages)) throw new LetheInputError("messages", `must be an array of Chat Completions messages, got ${messages === null ? "null" : typeof messages}`);
        let lead = 0;
        while (lead < messages.length && isSystem(messages[lead])) lead++;
        system = messages.slice(0, lead) as OpenAIMessage[];
        return messages.slice(lead) as OpenAIMessage[];
      });
      total = rest.length;
      const sent = await tracker.prepare(rest.length, (start) => fromOpenAI(rest.slice(start)).messages);
      // The strict wire format is the SDK's own: lethe writes no field it does not define.
      return out(sent) as OpenAI.Chat.ChatCompletionMessageParam[];
    },
    /** Report a completion (its first choice and its usage). */
    observe(completion: CompletionLike): void {
      const [message, usage] = readSafely("observe: completion", () => {
        if (completion === null || typeof completion !== "object" || !Array.isArray(completion.choices)) throw new LetheInputError("observe: completion", "must be a ChatCompletion (with a choices list)");
        const u = completion.usage;
        const prompt = u?.prompt_tokens;
        return [completion.choices[0]?.message, typeof prompt === "number" ? { input_tokens: prompt, output_tokens: u?.completion_tokens ?? 0 } : undefined] as const;
      });
      if (!message) return;
      const reply = fromOpenAI([message as OpenAIMessage]).messages[0];
      if (reply) tracker.observe(reply, usage);
    },
    /**
     * compact → client.chat.completions.create({ ...params, messages }) → observe. A context-length
     * error is compacted (engine.recover) and the call retried once. Non-streaming.
     */
    async create<R extends CompletionLike = OpenAI.Chat.ChatCompletion>(
      client: ChatClientLike,
      params: Omit<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, "messages"> & { messages: readonly (OpenAIMessage | OpenAI.Chat.ChatCompletionMessageParam)[] },
    ): Promise<R> {
      const send = (messages: readonly unknown[]) => client.chat.completions.create({ ...params, messages, stream: false } as never) as PromiseLike<R>;
      const messages = readSafely("create: params", () => params.messages);
      measure(messages, params.tools);
      let completion: R;
      try {
        completion = await send(await adapter.compact(messages));
      } catch (e) {
        const overflow = toModelError(e);
        if (overflow.kind !== "prompt_too_long") throw e;
        const history = await tracker.recover(overflow, () => total);
        completion = await send(out(history));
      }
      adapter.observe(completion);
      return completion;
    },
  };
  return adapter;
}
