// The model client the CLI talks to, from its configuration, and the wrapper a session puts around it.
import type { ModelClient } from "../model/types.ts";
import type { Usage } from "../tokens/meter.ts";
import type { RunConfig } from "./config.ts";

/** The provider's client; only that provider's SDK is loaded (each takes a few hundred ms to import). */
export async function createClient(cfg: RunConfig): Promise<ModelClient> {
  const base = { ...(cfg.baseUrl ? { baseURL: cfg.baseUrl } : {}), ...(cfg.idleTimeoutMs !== undefined ? { idleTimeoutMs: cfg.idleTimeoutMs } : {}) };
  if (cfg.provider === "anthropic") {
    const { createAnthropicClient } = await import("../model/anthropic.ts");
    return createAnthropicClient({ apiKey: cfg.apiKey, ...(cfg.authToken ? { authToken: cfg.authToken } : {}), ...base });
  }
  if (cfg.provider === "openai-responses") {
    const { createOpenAIResponsesClient } = await import("../model/openai-responses.ts");
    return createOpenAIResponsesClient({ apiKey: cfg.apiKey, ...base });
  }
  const { createOpenAIClient } = await import("../model/openai.ts");
  return createOpenAIClient({ apiKey: cfg.apiKey, ...base, ...(cfg.reasoningContent ? { reasoningContent: cfg.reasoningContent } : {}) });
}

/** `client` with what a session does around each call: `before` awaited first, the time taken and the usage reported. */
export function wrapClient(client: ModelClient, hooks: { before?: () => Promise<void>; took?: (ms: number) => void; used?: (model: string, u: Usage) => void }): ModelClient {
  return {
    provider: client.provider,
    ...(client.serverCompaction ? { serverCompaction: true } : {}),
    stream: async (req, onEvent) => {
      await hooks.before?.();
      const t0 = Date.now();
      try {
        const r = await client.stream(req, onEvent);
        hooks.used?.(r.model || req.model, r.usage);
        return r;
      } finally {
        hooks.took?.(Date.now() - t0);
      }
    },
  };
}
