// Ollama's real context. Its OpenAI endpoint silently cuts a prompt to the model's num_ctx (often
// 4–8k, far below what the model supports), so the window must come from Ollama itself:
//   GET /api/ps   → the loaded model's context_length (what the runner really uses), else
//   POST /api/show → num_ctx in the model's parameters (the Modelfile's setting).
// Neither says anything when the model is not loaded and sets no num_ctx: then lethe keeps its
// window and the engine's truncation check catches the server's (see engine.observe).

/** The context Ollama really runs a model with, and where that came from. */
export interface OllamaContext {
  contextWindow: number;
  /** Where it came from, for the banner ("ollama /api/ps", "ollama num_ctx"). */
  source: string;
}

/** http://host:11434/v1 → http://host:11434 (the native API sits beside the OpenAI one). */
export function ollamaOrigin(baseURL: string): string {
  return baseURL.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/** Worth probing: Ollama's port, or a server on this machine or the local network. */
export function mayBeOllama(baseURL: string | undefined): boolean {
  if (!baseURL) return false;
  try {
    const u = new URL(baseURL);
    if (u.port === "11434") return true;
    const h = u.hostname.replace(/^\[|\]$/g, "");
    return h === "localhost" || h === "::1" || /^127\./.test(h) || /^10\./.test(h) || /^192\.168\./.test(h) || /^172\.(1[6-9]|2\d|3[01])\./.test(h) || h.endsWith(".local");
  } catch {
    return false;
  }
}

const sameModel = (a: unknown, b: string) => typeof a === "string" && (a === b || a === `${b}:latest` || `${a}:latest` === b);

async function json(url: string, init: RequestInit, timeoutMs: number, fetchImpl: typeof fetch): Promise<unknown> {
  const res = await fetchImpl(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) return undefined;
  const text = await res.text();
  if (text.length > 4 << 20) return undefined;
  return JSON.parse(text) as unknown;
}

/** The context Ollama really uses for `model`, or undefined (not Ollama, not known, no answer). */
export async function discoverOllamaContext(
  baseURL: string,
  model: string,
  opts: { timeoutMs?: number; fetch?: typeof fetch } = {},
): Promise<OllamaContext | undefined> {
  const origin = ollamaOrigin(baseURL);
  const timeoutMs = opts.timeoutMs ?? 1_500;
  const f = opts.fetch ?? fetch;
  const positive = (n: unknown) => (typeof n === "number" && Number.isInteger(n) && n > 0 && n < 1e8 ? n : undefined);
  try {
    const ps = (await json(`${origin}/api/ps`, {}, timeoutMs, f)) as { models?: { name?: unknown; model?: unknown; context_length?: unknown }[] } | undefined;
    if (!ps || !Array.isArray(ps.models)) return undefined; // not Ollama
    const loaded = ps.models.find((m) => sameModel(m?.name, model) || sameModel(m?.model, model));
    const fromPs = positive(loaded?.context_length);
    if (fromPs) return { contextWindow: fromPs, source: "ollama /api/ps" };
    const show = (await json(`${origin}/api/show`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model }) }, timeoutMs, f)) as { parameters?: unknown } | undefined;
    const numCtx = typeof show?.parameters === "string" ? /(?:^|\n)\s*num_ctx\s+(\d+)/.exec(show.parameters)?.[1] : undefined;
    const n = positive(numCtx === undefined ? undefined : Number(numCtx));
    return n ? { contextWindow: n, source: "ollama num_ctx" } : undefined;
  } catch {
    return undefined;
  }
}
