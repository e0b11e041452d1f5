// lethe/ai-sdk: lethe's whole pipeline inside the Vercel AI SDK's multi-step tool runs
// (generateText / streamText, ai@5 and ai@6), on the SDK's own extension points:
//   prepareStep({ messages })  → the compacted messages for this step (budget, snip, micro, and a
//                                summary over the threshold);
//   onStepFinish(step)         → the provider's usage, so counting anchors on its numbers;
//   generate(generateText, o)  → the reactive path: a context-length error ends generateText; the
//                                history is compacted and the run goes on once from there.
//
// The SDK hands prepareStep its own, ever-growing list (the input and every step's response). The
// adapter keeps the compacted history between steps and adds only the messages that are new, so a
// summary is made once, not again at every step.
import type { Engine } from "../engine/index.ts";
import type { Message } from "../messages/types.ts";
import { toModelError } from "../model/errors.ts";
import type { ModelError } from "../model/types.ts";
import type { TranscriptWriter } from "../session/transcript.ts";
import { fixedTokensOf } from "./fixed-tokens.ts";
import { WRAPPED, guardModel, isProviderModel } from "./ai-sdk-model.ts";
import { createTracker } from "./tracker.ts";
import type { Usage } from "../tokens/meter.ts";
import { type AIModelMessage, type AIPart, fromModelMessages, toModelMessages } from "./ai-sdk-messages.ts";

export { fromModelMessages, toModelMessages, type AIModelMessage, type AIPart } from "./ai-sdk-messages.ts";

/** Options of createAISDKAdapter. */
export interface AISDKAdapterOptions {
  /** The engine for this conversation (one per conversation: it keeps state between steps). */
  engine: Engine;
  /** Every message is written here before it is compacted (what `recall` reads). */
  transcript?: TranscriptWriter;
  /**
   * Where images a tool returned go: "inline" in the tool result, or "user", in a user message
   * after it, for providers that send a tool's content output as JSON text (a screenshot would be
   * hundreds of thousands of tokens of base64). Default: "user" for chat-completions models
   * (@ai-sdk/openai-compatible, @ai-sdk/openai's chat model), "inline" for the others.
   */
  toolImages?: "inline" | "user";
  /**
   * Tokens of what the request carries besides the messages (system prompt, tool definitions).
   * Measured from the `system` (or `instructions`) and `tools` that generate, hooks and agent are
   * handed when not given; a value here wins.
   */
  fixedTokens?: number;
}

/** The parts of a StepResult the adapter reads (ai@5 and ai@6 alike). */
export interface AIStep {
  content?: readonly AIPart[];
  text?: string;
  toolCalls?: readonly { toolCallId: string; toolName: string; input?: unknown; args?: unknown }[];
  usage?: { inputTokens?: number; outputTokens?: number; cachedInputTokens?: number; inputTokenDetails?: { cacheReadTokens?: number; cacheWriteTokens?: number } };
}

/** The provider's usage as lethe counts it (input = everything the provider read). */
export function usageOf(usage: AIStep["usage"]): Usage {
  return { input_tokens: usage?.inputTokens ?? 0, output_tokens: usage?.outputTokens ?? 0 };
}

/** The step's reply as one assistant message. */
function replyOf(step: AIStep): Message {
  if (Array.isArray(step.content)) {
    const parts = step.content.filter((p) => p.type === "text" || p.type === "reasoning" || p.type === "tool-call");
    const { history } = fromModelMessages([{ role: "assistant", content: parts.length > 0 ? (parts as AIPart[]) : [{ type: "text", text: "" }] }]);
    return history[0]!;
  }
  const content: AIPart[] = [{ type: "text", text: step.text ?? "" }];
  for (const c of step.toolCalls ?? []) content.push({ type: "tool-call", toolCallId: c.toolCallId, toolName: c.toolName, input: c.input ?? c.args ?? {} });
  return fromModelMessages([{ role: "assistant", content }]).history[0]!;
}

/** A context-length refusal, from the SDK's APICallError (or a RetryError around one), as lethe reads it. */
export function contextErrorOf(e: unknown): ModelError | undefined {
  let err = e as { lastError?: unknown; errors?: unknown[]; statusCode?: unknown; responseBody?: unknown; message?: unknown } | undefined;
  if (err && typeof err === "object" && err.lastError) err = err.lastError as typeof err;
  if (!err || typeof err !== "object") return undefined;
  const status = typeof err.statusCode === "number" ? err.statusCode : undefined;
  let body: unknown = typeof err.responseBody === "string" ? err.responseBody : undefined;
  if (typeof body === "string") {
    try {
      const parsed = JSON.parse(body) as { error?: unknown };
      body = parsed.error ?? parsed;
    } catch {
      // text body: read as it is
    }
  }
  const m = toModelError(status !== undefined || body !== undefined ? { status, error: body ?? err.message, message: err.message } : err);
  return m.kind === "prompt_too_long" ? m : undefined;
}

/**
 * The SDK's step (and what prepareStep returns) differ between ai 5 and 6 and with the tools: the
 * hooks take and give them untyped, so they fit generateText, streamText and ToolLoopAgent of
 * either version without a cast.
 */
// biome-ignore lint/suspicious/noExplicitAny: typed by the SDK the hooks are handed to
type SDKStep = any;

/** The step hooks of generateText / streamText / ToolLoopAgent settings, as far as lethe composes them. */
export interface HookOptions {
  prepareStep?: (step: SDKStep) => unknown;
  onStepFinish?: (step: SDKStep) => unknown;
}

/** lethe's hooks composed with the caller's (see hooks()). */
export interface LetheHooks {
  prepareStep: (step: SDKStep) => Promise<SDKStep>;
  onStepFinish: (step: SDKStep) => Promise<void>;
}

/** What a prepareStep may return (the SDK's PrepareStepResult, loosely: model, toolChoice, activeTools, system, messages, …). */
export interface PrepareStepResult {
  messages?: AIModelMessage[];
  [setting: string]: unknown;
}

/**
 * Where a model's provider can take a tool's images: chat-completions models send a tool's content
 * output as JSON text, so its images go in a user message after it.
 */
function imagesFor(model: unknown): "inline" | "user" {
  const inner = model !== null && typeof model === "object" && WRAPPED in model ? (model as Record<symbol, unknown>)[WRAPPED] : model;
  const m = inner as { constructor?: { name?: unknown }; provider?: unknown } | null;
  const name = m?.constructor?.name;
  if (typeof name === "string" && /OpenAI\w*ChatLanguageModel$/.test(name)) return "user";
  // A bundler may rename classes: the provider id says it too ("openai.chat", "<name>.chat").
  return typeof m?.provider === "string" && /\.chat$/.test(m.provider) ? "user" : "inline";
}

/** The text of a `system` option: a string, a system message, or a list of them. */
function systemText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  const list = Array.isArray(v) ? v : v && typeof v === "object" ? [v] : [];
  const texts = list.map((m) => (typeof (m as { content?: unknown }).content === "string" ? (m as { content: string }).content : "")).filter(Boolean);
  return texts.length ? texts.join("\n") : undefined;
}

/** generateText (or a function of the same shape) as `generate` calls it. */
export interface GenerateLike<O, R> {
  (options: O): PromiseLike<R>;
}

/** lethe for one AI SDK conversation: `prepareStep`, `onStepFinish` and `generate` (the reactive path). See docs/library.md. */
export function createAISDKAdapter(opts: AISDKAdapterOptions) {
  const tracker = createTracker(opts);
  /** fixedTokens from the system prompt (or an agent's instructions) and the tools the run is given. */
  const measure = (o: Record<string, unknown>): void => {
    try {
      const system = systemText(o.system ?? o.instructions);
      const tools = o.tools && typeof o.tools === "object" ? Object.entries(o.tools as Record<string, { description?: unknown; inputSchema?: unknown; parameters?: unknown }>) : [];
      if (system === undefined && tools.length === 0) return;
      tracker.measureFixed(fixedTokensOf(opts.engine.counter, system, tools.map(([name, t]) => ({ name, ...(typeof t?.description === "string" ? { description: t.description } : {}), schema: t?.inputSchema ?? t?.parameters }))));
    } catch {
      // Options that cannot be read are counted as nothing; the SDK says what is wrong with them.
    }
  };

  let system: AIModelMessage[] = [];
  /** The hooks are in an agent's settings (adapter.agent): generate must not put its own over them. */
  let inSettings = false;
  /** Where the last step's model takes a tool's images (see toolImages). */
  let images: "inline" | "user" = opts.toolImages ?? "inline";
  /** How many of the SDK's messages (after its leading system ones) the last step stood for. */
  let lastTotal = 0;
  /** A refused step, compacted harder: the SDK's own list is unchanged, so it still stands for lastTotal of them. */
  const recovered = async (error: unknown): Promise<AIModelMessage[]> => toModelMessages(await tracker.recover(error as ModelError, () => lastTotal), { toolImages: images });
  /** A model with the reactive path inside each step (./ai-sdk-model.ts); a model id string is left as it is. */
  const guard = <M>(model: M): M => (isProviderModel(model) && !(WRAPPED in model) ? (guardModel(model, contextErrorOf, recovered) as M) : model);

  const adapter = {
    /** The tokens each request carries besides the messages: the fixedTokens option, else what was measured. */
    get fixedTokens(): number {
      return tracker.fixedTokens;
    },

    /** The history as lethe holds it now (compacted). */
    get history(): readonly Message[] {
      return tracker.history;
    },

    /** For generateText / streamText's `prepareStep`: returns `{ messages }` compacted for this step. */
    prepareStep: async (step: { messages: AIModelMessage[]; model?: unknown }): Promise<{ messages: AIModelMessage[] } & PrepareStepResult> => {
      const all = step.messages;
      if (!Array.isArray(all)) fromModelMessages(all); // throws the one-line input error
      // Only the leading system messages and what is new are converted, not the whole list each step.
      let lead = 0;
      while (lead < all.length && (all[lead] as { role?: unknown } | null)?.role === "system") lead++;
      system = all.slice(0, lead);
      const rest = all.slice(lead);
      lastTotal = rest.length;
      const sent = await tracker.prepare(rest.length, (start) => fromModelMessages(rest.slice(start)).history);
      images = opts.toolImages ?? imagesFor(step.model);
      return { messages: [...system, ...toModelMessages(sent, { toolImages: images })] };
    },

    /**
     * lethe's hooks composed with the caller's own (`options.prepareStep`, `options.onStepFinish`):
     * lethe's step first, then theirs, given lethe's messages; whatever theirs returns (another
     * model, active tools, tool choice, messages of its own) is respected. Spread the result into
     * generateText, streamText or a ToolLoopAgent's settings: `{ ...options, ...lethe.hooks(options) }`.
     */
    hooks(options: HookOptions = {}): LetheHooks {
      measure(options as Record<string, unknown>);
      const theirPrepare = options.prepareStep;
      const theirFinish = options.onStepFinish;
      return {
        prepareStep: async (step: { messages: AIModelMessage[]; model?: unknown }) => {
          const ours = await adapter.prepareStep(step);
          if (!theirPrepare) return ours;
          const theirs = (await theirPrepare({ ...step, messages: ours.messages })) as PrepareStepResult | undefined | void;
          return theirs ? { ...ours, ...theirs, messages: theirs.messages ?? ours.messages } : ours;
        },
        onStepFinish: async (step: AIStep) => {
          adapter.onStepFinish(step);
          await theirFinish?.(step);
        },
      };
    },

    /**
     * A ToolLoopAgent's settings with lethe's hooks composed with the agent's own:
     * `new ToolLoopAgent(lethe.agent({ model, tools, instructions, prepareStep }))`, then
     * `lethe.generate((o) => agent.generate(o), { prompt })` for the reactive path (call-time
     * options would replace the settings' hooks: generate leaves them out for such an agent).
     */
    agent<S extends Record<string, unknown>>(settings: S): S {
      inSettings = true;
      return { ...settings, ...adapter.hooks(settings as HookOptions), ...(settings.model !== undefined ? { model: guard(settings.model) } : {}) };
    },

    /**
     * `model` with lethe's reactive path inside each step: a refusal of the prompt as too long is
     * compacted harder (engine.recover) and the step sent again, before anything of it streamed.
     * generate, stream and agent use it; for your own generateText / streamText call, pass
     * `model: lethe.model(model)` with `...lethe.hooks(options)`.
     */
    model<M>(model: M): M {
      return guard(model);
    },

    /**
     * streamText with lethe: the hooks composed with yours, and the reactive path inside each step,
     * so a context refusal (before the step's first token) is compacted from and the step retried
     * without the stream seeing it. Returns streamText's own result.
     */
    stream<O extends Record<string, unknown>, R>(streamText: (options: O) => R, options: O): R {
      return streamText({ ...options, ...adapter.hooks(options as HookOptions), ...(options.model !== undefined ? { model: guard(options.model) } : {}) } as O);
    },

    /** For `onStepFinish`: anchors lethe's count on the provider's usage. */
    onStepFinish: (step: AIStep): void => {
      tracker.observe(replyOf(step), step.usage ? usageOf(step.usage) : undefined);
    },

    /**
     * Runs `generate` (generateText or streamText's consumer) with the adapter's hooks; on a
     * context-length refusal, compacts harder (engine.recover) and goes on once from the compacted
     * history. Other errors pass through.
     */
    async generate<O extends Record<string, unknown>, R>(generate: GenerateLike<O, R>, options: O): Promise<R> {
      const hooked = (o: O): O => (inSettings ? o : ({ ...o, ...adapter.hooks(o as HookOptions), ...(o.model !== undefined ? { model: guard(o.model) } : {}) } as O));
      try {
        return await generate(hooked(options));
      } catch (e) {
        const overflow = contextErrorOf(e);
        if (!overflow) throw e;
        // The run goes on from the compacted history: that becomes the SDK's whole list.
        const history = await tracker.recover(overflow, (h) => toModelMessages(h, { toolImages: images }).length);
        const { prompt: _prompt, ...rest } = options as O & { prompt?: unknown };
        return generate(hooked({ ...rest, messages: [...system, ...toModelMessages(history, { toolImages: images })] } as unknown as O));
      }
    },
  };
  return adapter;
}
