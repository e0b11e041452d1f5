// lethe/langchain: lethe's whole pipeline for LangChain.js (@langchain/core messages: Human, AI with
// tool_calls, Tool, System). `compact(messages)` (or the Runnable from `runnable()`) returns the
// compacted list to send; `invoke(model, messages)` also reports the reply's usage_metadata, so
// counting anchors on the provider's numbers, and takes the reactive path on a context-length
// error (compact harder, retry once). Keep one adapter per conversation: it holds the compacted
// history between calls and adds only the messages that are new.
import type { BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import type { Message } from "../messages/types.ts";
import { toModelError } from "../model/errors.ts";
import { fromLangChain, isObj, toLangChain, typeOf } from "./langchain-messages.ts";
import type { Usage } from "../tokens/meter.ts";
import { fixedTokensOf, toolShape } from "./fixed-tokens.ts";
import { type TrackerOptions, createTracker } from "./tracker.ts";

export { fromLangChain, toLangChain } from "./langchain-messages.ts";
export { createLetheMiddleware, type LetheMiddlewareOptions, type LetheModelRequest } from "./langchain-middleware.ts";

/** usage_metadata → lethe's usage (input = everything the provider read). */
function usageOf(reply: BaseMessage): Usage | undefined {
  const u = (reply as { usage_metadata?: { input_tokens?: number; output_tokens?: number } }).usage_metadata;
  return u && typeof u.input_tokens === "number" ? { input_tokens: u.input_tokens, output_tokens: u.output_tokens ?? 0 } : undefined;
}

export type { InvokableModel } from "./langchain-middleware.ts";

/** lethe for one LangChain.js conversation: `compact`, `runnable`, `observe` and `invoke` (the reactive path). See docs/library.md. */
export function createLangChainAdapter(opts: TrackerOptions) {
  const tracker = createTracker(opts);
  /** The tools the last invoke's model was bound to (OpenAI-style definitions, or LangChain tools). */
  let tools: unknown[] = [];
  /** fixedTokens from the leading system messages and the bound tools (an explicit value wins). */
  const measure = (): void => {
    try {
      const text = system.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
      if (!text && tools.length === 0) return;
      tracker.measureFixed(fixedTokensOf(opts.engine.counter, text, tools.map(toolShape)));
    } catch {
      // A message or tool that cannot be read is counted as nothing; the conversion says what is wrong with it.
    }
  };
  let system: BaseMessage[] = [];
  let total = 0;

  const adapter = {
    get history(): readonly Message[] {
      return tracker.history;
    },
    /** The tokens each request carries besides the messages: the fixedTokens option, else what was measured. */
    get fixedTokens(): number {
      return tracker.fixedTokens;
    },
    /** The compacted list to send, for the whole conversation so far (the framework's own list). */
    async compact(messages: BaseMessage[]): Promise<BaseMessage[]> {
      if (!Array.isArray(messages)) fromLangChain(messages); // throws the one-line input error
      // Only the leading system messages and what is new are converted, not the whole list each call.
      let lead = 0;
      while (lead < messages.length && isObj(messages[lead]) && typeOf(messages[lead]!) === "system") lead++;
      system = messages.slice(0, lead);
      const rest = messages.slice(lead);
      total = rest.length;
      measure();
      const sent = await tracker.prepare(rest.length, (start) => fromLangChain(rest.slice(start)).history);
      return [...system, ...toLangChain(sent)];
    },
    /** Report the model's reply (its usage_metadata anchors lethe's count). */
    observe(reply: BaseMessage): void {
      const { history } = fromLangChain([reply]);
      if (history[0]) tracker.observe(history[0], usageOf(reply));
    },
    /** A Runnable that compacts a message list: `adapter.runnable().pipe(model)`. */
    runnable() {
      return RunnableLambda.from((messages: BaseMessage[]) => adapter.compact(messages));
    },
    /**
     * compact → model.invoke → observe; a context-length error is compacted (engine.recover) and
     * the call retried once. Your list stays yours: push the reply and the tool messages to it.
     */
    async invoke<R extends BaseMessage = BaseMessage>(model: { invoke(messages: BaseMessage[], options?: never): Promise<R> }, messages: BaseMessage[], options?: unknown): Promise<R> {
      // A model from bindTools carries its tool definitions (in defaultOptions in @langchain/core 1.x,
      // in a RunnableBinding's kwargs before): measured with the system prompt.
      const m = model as { defaultOptions?: { tools?: unknown }; kwargs?: { tools?: unknown } };
      const bound = m.defaultOptions?.tools ?? m.kwargs?.tools;
      tools = Array.isArray(bound) ? bound : [];
      const sent = await adapter.compact(messages);
      let reply: R;
      try {
        reply = await model.invoke(sent, options as never);
      } catch (e) {
        const overflow = toModelError(e);
        if (overflow.kind !== "prompt_too_long") throw e;
        // The framework's list is unchanged (still `total` messages): only what is sent shrinks.
        const history = await tracker.recover(overflow, () => total);
        reply = await model.invoke([...system, ...toLangChain(history)], options as never);
      }
      adapter.observe(reply);
      return reply;
    },
  };
  return adapter;
}
