// createLetheMiddleware: lethe inside langchain v1's createAgent, where summarizationMiddleware
// and contextEditingMiddleware live. Three hooks:
//   wrapModelCall  the request's messages through lethe's pipeline (budget, snip, micro, a summary
//                  over the threshold, made with the agent's own model unless one is given); a
//                  context-length refusal is compacted harder (engine.recover) and retried once;
//                  the reply's usage_metadata anchors the count;
//   afterModel     when lethe rewrote the history, the agent's state holds the rewritten one (as
//                  summarizationMiddleware does): a checkpointer (MemorySaver, PostgresSaver)
//                  saves what lethe made, so a restored thread goes on from it, without a second
//                  summary of what was summarised.
// One engine per thread (runtime.configurable.thread_id), kept in memory; a thread restored in
// another process starts a fresh engine from its compacted state.
//
// The middleware is the plain object createMiddleware() returns (its brand is a global symbol),
// so lethe/langchain needs only @langchain/core, not the langchain package.
import { type AIMessage, type BaseMessage, RemoveMessage, SystemMessage } from "@langchain/core/messages";
import { createEngine } from "../engine/index.ts";
import type { Engine, EngineOptions } from "../engine/contract.ts";
import type { ConversationStore } from "../store/types.ts";
import type { Message } from "../messages/types.ts";
import { toModelError } from "../model/errors.ts";
import { ModelError, type ModelClient } from "../model/types.ts";
import type { Usage } from "../tokens/meter.ts";
import { fixedTokensOf, toolShape } from "./fixed-tokens.ts";
import { fromLangChain, toLangChain } from "./langchain-messages.ts";

/** A chat model, as far as lethe uses it. */
export interface InvokableModel {
  invoke(messages: BaseMessage[], options?: unknown): Promise<BaseMessage>;
}

/** LangGraph's REMOVE_ALL_MESSAGES: a RemoveMessage with this id clears the list before what follows. */
const REMOVE_ALL = "__remove_all__";
/** createMiddleware()'s brand (langchain/dist/agents/middleware/types.js). */
const BRAND = Symbol.for("AgentMiddleware");
/** Events after which the agent's state should hold lethe's history, not its own. */
const REWRITES = new Set(["budget", "snip", "micro", "summarize", "reactive", "manual"]);
/** Threads whose engines are kept in one process (the oldest is dropped past this). */
const THREADS = 1_000;

/** Options of createLetheMiddleware: the engine's (window, compaction settings, onEvent, …), and: */
export interface LetheMiddlewareOptions extends Omit<EngineOptions, "summarizer" | "store" | "conversationId" | "transcript" | "transcriptHoldsHistory"> {
  /**
   * A conversation store (connectStore: a folder, or PostgreSQL): each thread is a conversation
   * (its thread_id the id), with every message recorded once, the boundaries, the tool results
   * and lethe's state, whichever process runs the thread next.
   */
  store?: ConversationStore;
  /** The model summaries are made with; the agent's own model by default. */
  summaryModel?: InvokableModel;
  /** Tokens of the system prompt and tool schemas; measured from each request when not given. */
  fixedTokens?: number;
}

interface Thread {
  engine: Engine;
  /** The agent's model, as the last request named it (summaries use it). */
  model: InvokableModel | undefined;
  /** lethe's history after a rewrite (and the leading system messages), for afterModel to put in the agent's state. */
  pending: { system: BaseMessage[]; history: Message[] } | undefined;
}

/** What the middleware reads of a model request (langchain's ModelRequest, structurally). */
export interface LetheModelRequest {
  model?: unknown;
  messages: BaseMessage[];
  systemPrompt?: string;
  tools?: readonly unknown[];
  runtime?: { configurable?: { thread_id?: unknown } };
}
type Request = LetheModelRequest;

const usageOf = (reply: unknown): Usage | undefined => {
  const u = (reply as { usage_metadata?: { input_tokens?: number; output_tokens?: number } } | null)?.usage_metadata;
  return u && typeof u.input_tokens === "number" ? { input_tokens: u.input_tokens, output_tokens: u.output_tokens ?? 0 } : undefined;
};

const isInvokable = (m: unknown): m is InvokableModel => typeof (m as { invoke?: unknown } | null)?.invoke === "function";

/** A LangChain chat model as lethe's summarizer client. */
function summaryClient(model: () => InvokableModel | undefined): ModelClient {
  return {
    provider: "openai",
    async stream(req) {
      const m = model();
      if (!m) throw new ModelError("invalid_request", "lethe: no model to summarise with yet (pass summaryModel to createLetheMiddleware)");
      let reply: BaseMessage;
      try {
        reply = await m.invoke([...(req.system ? [new SystemMessage(req.system)] : []), ...toLangChain(req.messages)], req.signal ? { signal: req.signal } : undefined);
      } catch (e) {
        throw toModelError(e);
      }
      const message = fromLangChain([reply]).history[0] ?? { role: "assistant", content: [{ type: "text", text: "" }] };
      return { message, usage: usageOf(reply) ?? { input_tokens: 0, output_tokens: 0 }, stopReason: "end_turn", model: req.model };
    },
  };
}

/**
 * lethe as langchain v1 agent middleware: `createAgent({ model, tools, middleware: [createLetheMiddleware({ contextWindow, maxOutputTokens })] })`.
 * See docs/library.md.
 */
export function createLetheMiddleware(options: LetheMiddlewareOptions) {
  const { summaryModel, fixedTokens, store, ...engineOptions } = options;
  const threads = new Map<string, Thread>();

  const threadOf = (runtime: Request["runtime"]): Thread => {
    const raw = runtime?.configurable?.thread_id;
    const id = typeof raw === "string" || typeof raw === "number" ? String(raw) : "";
    let t = threads.get(id);
    if (t) {
      // Most recently used last: the oldest is the first to go.
      threads.delete(id);
      threads.set(id, t);
      return t;
    }
    const thread: Thread = { engine: undefined as unknown as Engine, model: undefined, pending: undefined };
    thread.engine = createEngine({
      ...engineOptions,
      summarizer: { client: summaryClient(() => summaryModel ?? thread.model), model: "agent" },
      ...(store ? { store, conversationId: id || "default" } : {}),
    });
    threads.set(id, thread);
    if (threads.size > THREADS) threads.delete(threads.keys().next().value!);
    return thread;
  };

  return {
    [BRAND]: true as const,
    name: "LetheMiddleware",

    // The handler is langchain's: it takes the request it was given with other messages, and answers with the model's AIMessage.
    wrapModelCall: async (request: Request, handler: (request: never) => unknown): Promise<AIMessage> => {
      const t = threadOf(request.runtime);
      if (isInvokable(request.model)) t.model = request.model;
      const call = { fixedTokens: fixedTokens ?? fixedTokensOf(t.engine.counter, request.systemPrompt, (request.tools ?? []).map(toolShape)) };
      const { system, history } = fromLangChain(request.messages);
      let ready = await t.engine.beforeRequest(history, call);
      let rewrote = ready.events.some((e) => REWRITES.has(e.kind));
      const send = async (messages: BaseMessage[]) => (await handler({ ...request, messages } as never)) as AIMessage;
      let reply: AIMessage;
      try {
        reply = await send([...system, ...toLangChain(ready.history)]);
      } catch (e) {
        const overflow = toModelError(e);
        if (overflow.kind !== "prompt_too_long") throw e;
        ready = await t.engine.recover(ready.history, overflow, call);
        rewrote = true;
        reply = await send([...system, ...toLangChain(ready.history)]);
      }
      const usage = usageOf(reply);
      const answer = fromLangChain([reply]).history[0];
      if (usage && answer) t.engine.observe(ready.history, answer, usage, call);
      if (rewrote) t.pending = { system, history: ready.history };
      return reply;
    },

    afterModel: async (state: { messages: BaseMessage[] }, runtime: Request["runtime"]) => {
      const t = threadOf(runtime);
      const pending = t.pending;
      if (!pending) return undefined;
      t.pending = undefined;
      const reply = state.messages.at(-1);
      // The agent's state becomes what lethe made of it (the reply after it), as summarizationMiddleware does.
      return { messages: [new RemoveMessage({ id: REMOVE_ALL }), ...pending.system, ...toLangChain(pending.history), ...(reply ? [reply] : [])] };
    },
  };
}
