// The reactive path inside a step: the model generateText / streamText call is wrapped so that a
// context-length refusal (the server's limit is smaller than lethe was told) is compacted harder
// and the same step is sent again, before anything of it was streamed. The run never sees the
// refusal: no error part, no step lost, any step of a multi-step run.
//
// The wrapper speaks the provider level (LanguageModelV2/V3: doGenerate, doStream, a prompt of
// system/user/assistant/tool messages whose images are "file" parts) and forwards everything else.
import type { AIModelMessage, AIPart } from "./ai-sdk-messages.ts";

type Obj = Record<string, unknown>;

/** A language model as the SDK calls it (LanguageModelV2 or V3), loosely. */
export interface ProviderModel {
  specificationVersion?: string;
  provider?: string;
  modelId?: string;
  doGenerate(params: Obj): PromiseLike<unknown>;
  doStream(params: Obj): PromiseLike<unknown>;
  [more: string]: unknown;
}

/** The model the wrapper stands for (imagesFor reads its class). */
export const WRAPPED = Symbol("lethe.wrapped");

export const isProviderModel = (m: unknown): m is ProviderModel =>
  typeof m === "object" && m !== null && typeof (m as ProviderModel).doStream === "function" && typeof (m as ProviderModel).doGenerate === "function";

/** SDK messages → the provider-level prompt: images as file parts; the rest as it is. */
export function toProviderPrompt(messages: readonly AIModelMessage[]): Obj[] {
  return messages.map((m) => {
    if (typeof m.content === "string") return { ...m };
    const content = (m.content as AIPart[]).map((p): Obj => {
      if (p.type === "image") {
        const { image, mediaType, ...rest } = p as AIPart & { image?: unknown; mediaType?: unknown };
        return { ...rest, type: "file", mediaType: typeof mediaType === "string" ? mediaType : "image/*", data: image };
      }
      return p as Obj;
    });
    return { ...m, content };
  });
}

/**
 * `model` with its calls guarded: a refusal of the prompt as too long (`overflow` says whether an
 * error is one) gets `compacted()` (lethe's history after engine.recover, as SDK messages) as the
 * prompt, after the leading system messages, and is sent once more.
 */
export function guardModel(model: ProviderModel, overflow: (e: unknown) => unknown, compacted: (error: unknown) => Promise<AIModelMessage[]>): ProviderModel {
  const retry = async (call: (params: Obj) => PromiseLike<unknown>, params: Obj): Promise<unknown> => {
    try {
      return await call(params);
    } catch (e) {
      const error = overflow(e);
      if (!error) throw e;
      const prompt = Array.isArray(params.prompt) ? (params.prompt as Obj[]) : [];
      let lead = 0;
      while (lead < prompt.length && prompt[lead]!.role === "system") lead++;
      return call({ ...params, prompt: [...prompt.slice(0, lead), ...toProviderPrompt(await compacted(error))] });
    }
  };
  const wrapper: ProviderModel = {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    doGenerate: (params) => retry((p) => model.doGenerate(p), params),
    doStream: (params) => retry((p) => model.doStream(p), params),
  };
  Object.defineProperty(wrapper, WRAPPED, { value: model });
  return wrapper;
}
