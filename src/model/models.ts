// Known models: context window and maximum output tokens.
//
// Lookup: configuration overrides first, then the exact name, then the longest known prefix
// (so dated snapshots and quantisation tags resolve: "claude-opus-4-1-20250805",
// "qwen2.5-coder:32b-instruct-q4_K_M"), then a conservative default.
//
// Names are normalised first: lower case, provider routes dropped ("anthropic/…",
// "openrouter/…/", "models/…"), Bedrock's "anthropic." / "us.anthropic." prefixes and
// "-v1:0" suffixes, Vertex's "@date", and a "[1m]" suffix.
//
// Windows of local models are the model's native window; the server's configured context
// (llama.cpp -c, Ollama num_ctx, LM Studio's load setting) is often smaller. Set
// contextWindow in configuration (--context-window) when it is.
import type { ModelInfo } from "./types.ts";

/** One entry of the known-model table. */
export interface ModelEntry extends ModelInfo {
  /** Where the numbers come from, for readers of the table. */
  note?: string;
}

const K = 1024;

/** Exact names and prefixes alike; the longest matching key wins. */
export const KNOWN_MODELS: Readonly<Record<string, ModelEntry>> = {
  // ── Anthropic (platform.claude.com model pages) ──
  "claude-opus-4": { contextWindow: 200_000, maxOutputTokens: 32_000 },
  "claude-opus-4-0": { contextWindow: 200_000, maxOutputTokens: 32_000 },
  "claude-opus-4-20250514": { contextWindow: 200_000, maxOutputTokens: 32_000 },
  "claude-opus-4-1": { contextWindow: 200_000, maxOutputTokens: 32_000 },
  "claude-opus-4-5": { contextWindow: 200_000, maxOutputTokens: 64_000 },
  "claude-opus-4-6": { contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  "claude-opus-4-7": { contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  "claude-opus-4-8": { contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  "claude-sonnet-4": { contextWindow: 200_000, maxOutputTokens: 64_000, note: "1M with the context-1m beta" },
  "claude-sonnet-4-0": { contextWindow: 200_000, maxOutputTokens: 64_000 },
  "claude-sonnet-4-20250514": { contextWindow: 200_000, maxOutputTokens: 64_000 },
  "claude-sonnet-4-5": { contextWindow: 200_000, maxOutputTokens: 64_000, note: "1M with the context-1m beta" },
  "claude-sonnet-4-6": { contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  "claude-haiku-4-5": { contextWindow: 200_000, maxOutputTokens: 64_000 },
  "claude-opus-5": { contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  "claude-sonnet-5": { contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  "claude-fable-5": { contextWindow: 1_000_000, maxOutputTokens: 128_000 },
  "claude-3-7-sonnet": { contextWindow: 200_000, maxOutputTokens: 64_000 },
  "claude-3-5-sonnet": { contextWindow: 200_000, maxOutputTokens: 8_192 },
  "claude-3-5-haiku": { contextWindow: 200_000, maxOutputTokens: 8_192 },
  "claude-3": { contextWindow: 200_000, maxOutputTokens: 4_096 },
  /** Any other Claude: every Claude since 3 has at least 200k; output kept modest. */
  "claude-": { contextWindow: 200_000, maxOutputTokens: 32_000, note: "unlisted Claude model" },

  // ── OpenAI ──
  "gpt-4o": { contextWindow: 128_000, maxOutputTokens: 16_384 },
  "gpt-4o-mini": { contextWindow: 128_000, maxOutputTokens: 16_384 },
  "chatgpt-4o": { contextWindow: 128_000, maxOutputTokens: 16_384 },
  "gpt-4.1": { contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  "gpt-4-turbo": { contextWindow: 128_000, maxOutputTokens: 4_096 },
  "gpt-4": { contextWindow: 8_192, maxOutputTokens: 4_096 },
  "gpt-3.5-turbo": { contextWindow: 16_385, maxOutputTokens: 4_096 },
  "gpt-5": { contextWindow: 272_000, maxOutputTokens: 128_000, note: "400k total; input is capped at 272k" },
  "o1": { contextWindow: 200_000, maxOutputTokens: 100_000 },
  "o1-mini": { contextWindow: 128_000, maxOutputTokens: 65_536 },
  "o3": { contextWindow: 200_000, maxOutputTokens: 100_000 },
  "o3-mini": { contextWindow: 200_000, maxOutputTokens: 100_000 },
  "o4-mini": { contextWindow: 200_000, maxOutputTokens: 100_000 },
  "gpt-oss": { contextWindow: 131_072, maxOutputTokens: 32_768 },

  // ── open-weight families (native windows) ──
  "qwen2": { contextWindow: 32_768, maxOutputTokens: 8_192 },
  "qwen2.5": { contextWindow: 32_768, maxOutputTokens: 8_192, note: "128k with YaRN" },
  "qwen2.5-coder": { contextWindow: 32_768, maxOutputTokens: 8_192, note: "128k with YaRN" },
  "qwen3": { contextWindow: 32_768, maxOutputTokens: 8_192, note: "128k with YaRN" },
  "qwen3-coder": { contextWindow: 262_144, maxOutputTokens: 65_536 },
  "qwq": { contextWindow: 131_072, maxOutputTokens: 32_768 },
  "llama3": { contextWindow: 8_192, maxOutputTokens: 4_096 },
  "llama-3": { contextWindow: 8_192, maxOutputTokens: 4_096 },
  "llama3.1": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "llama-3.1": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "llama3.2": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "llama-3.2": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "llama3.3": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "llama-3.3": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "codellama": { contextWindow: 16_384, maxOutputTokens: 4_096 },
  "deepseek-chat": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "deepseek-reasoner": { contextWindow: 131_072, maxOutputTokens: 65_536 },
  "deepseek-v3": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "deepseek-r1": { contextWindow: 131_072, maxOutputTokens: 32_768 },
  "deepseek-coder": { contextWindow: 16_384, maxOutputTokens: 4_096 },
  "deepseek-coder-v2": { contextWindow: 163_840, maxOutputTokens: 8_192 },
  "mistral": { contextWindow: 32_768, maxOutputTokens: 8_192 },
  "mistral-large": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "mistral-medium": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "mistral-small": { contextWindow: 32_768, maxOutputTokens: 8_192 },
  "mistral-nemo": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "mixtral": { contextWindow: 32_768, maxOutputTokens: 8_192 },
  "codestral": { contextWindow: 262_144, maxOutputTokens: 8_192 },
  "devstral": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "ministral": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "gemma2": { contextWindow: 8_192, maxOutputTokens: 4_096 },
  "gemma-2": { contextWindow: 8_192, maxOutputTokens: 4_096 },
  "gemma3": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "gemma-3": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "phi4": { contextWindow: 16_384, maxOutputTokens: 4_096 },
  "phi-4": { contextWindow: 16_384, maxOutputTokens: 4_096 },
  "granite3": { contextWindow: 131_072, maxOutputTokens: 8_192 },
  "starcoder2": { contextWindow: 16_384, maxOutputTokens: 4_096 },
};

/** For an unknown model: small enough that a local server's default context is not far off. */
export const DEFAULT_MODEL_INFO: Readonly<ModelInfo> = { contextWindow: 32 * K, maxOutputTokens: 4 * K };

export interface ModelOverrides {
  contextWindow?: number;
  maxOutputTokens?: number;
}

/** A model's window and reply limit, and where they came from. */
export interface ResolvedModelInfo extends ModelInfo {
  /** "exact" / "prefix": from the table (`matched` names the key); "default": unknown model. */
  source: "exact" | "prefix" | "default";
  matched?: string;
  /** Whether configuration set either number. */
  overridden: boolean;
}

/** Lower case, no provider route, no Bedrock/Vertex decorations. */
export function normalizeModelName(model: string): string {
  let m = model.trim().toLowerCase();
  m = m.replace(/\[1m\]$/, "");
  m = m.slice(m.lastIndexOf("/") + 1); // "anthropic/claude-…", "openrouter/qwen/…", "models/…"
  m = m.replace(/^(?:[a-z]{2,4}\.)?anthropic\./, ""); // Bedrock "anthropic." / "us.anthropic."
  m = m.replace(/-v\d+:\d+$/, ""); // Bedrock "-v1:0"
  m = m.replace(/@[\w.-]+$/, ""); // Vertex "@20250514"
  return m;
}

/** The table's entry for a model: exact name, else the longest key the name starts with. */
export function lookupModel(model: string): { key: string; entry: ModelEntry; exact: boolean } | undefined {
  const name = normalizeModelName(model);
  const exact = KNOWN_MODELS[name];
  if (exact) return { key: name, entry: exact, exact: true };
  let best: string | undefined;
  for (const key of Object.keys(KNOWN_MODELS)) {
    if (!name.startsWith(key)) continue;
    // a prefix must end at a separator unless the key itself does ("claude-"), so "o1" is not "o10x"
    const next = name.charAt(key.length);
    if (!/[-:_\s]$/.test(key) && next !== "" && !/[-:_\s]/.test(next)) continue;
    if (best === undefined || key.length > best.length) best = key;
  }
  return best === undefined ? undefined : { key: best, entry: KNOWN_MODELS[best]!, exact: false };
}

const positive = (n: number | undefined): n is number => typeof n === "number" && Number.isFinite(n) && n > 0;

/**
 * Context window and max output for `model`, configuration first. Unless configuration set
 * it, max output is capped at half the window, so a small configured window still leaves
 * room for a prompt.
 */
export function resolveModelInfo(model: string, overrides: ModelOverrides = {}): ResolvedModelInfo {
  const hit = lookupModel(model);
  const base: ModelInfo = hit?.entry ?? DEFAULT_MODEL_INFO;
  const contextWindow = Math.floor(positive(overrides.contextWindow) ? overrides.contextWindow : base.contextWindow);
  let maxOutputTokens = Math.floor(positive(overrides.maxOutputTokens) ? overrides.maxOutputTokens : base.maxOutputTokens);
  if (!positive(overrides.maxOutputTokens)) maxOutputTokens = Math.min(maxOutputTokens, Math.floor(contextWindow / 2));
  return {
    contextWindow,
    maxOutputTokens,
    source: hit ? (hit.exact ? "exact" : "prefix") : "default",
    ...(hit ? { matched: hit.key } : {}),
    overridden: positive(overrides.contextWindow) || positive(overrides.maxOutputTokens),
  };
}
