// "The prompt does not fit": every server's wording of it, the numbers it states (tokens counted
// and the limit), and whether the limit is on bytes (HTTP 413). Pure text reading; errors.ts
// turns a response into a ModelError with these.

// ── prompt too long ───────────────────────────────────────────────────────────────

/** The token counts a context-length error states. */
export interface TooLong {
  actualTokens?: number;
  limitTokens?: number;
}

const num = (s: string | undefined): number | undefined => {
  if (s === undefined) return undefined;
  const n = Number(s.replace(/[,_\s]/g, ""));
  return Number.isFinite(n) ? n : undefined;
};

/** Wordings that say the prompt does not fit the model's context, from every server we know. */
const TOO_LONG_PATTERNS: RegExp[] = [
  /prompt is too long/i, // Anthropic
  /input length and `?max_tokens`? exceed context limit/i, // Anthropic, input + max_tokens
  /context_length_exceeded/i, // OpenAI code, sometimes only in the text
  /maximum context length/i, // OpenAI, vLLM, DeepSeek, Groq, Together, …
  /exceeds? the available context size/i, // llama.cpp server
  /context size has been exceeded/i, // llama.cpp (context shift disabled)
  /exceed_context_size/i, // llama.cpp error type
  /(?:exceeds?|exceeded|larger than|greater than) (?:the |its )?(?:model'?s? )?(?:maximum )?context (?:length|window|size)/i, // Ollama, LM Studio, generic
  /context (?:length|window|size) (?:exceeded|overflow)/i,
  /context (?:the )?overflows?/i, // LM Studio "when context the overflows"
  /loaded with context length of only/i, // LM Studio
  /not enough (?:context|space in the context)/i,
  /input is too long/i, // Bedrock, TGI
  /input (?:is )?too large/i,
  /prompt (?:is )?too large/i,
  /(?:prompt|input) (?:length|tokens?) (?:\(\d+\) )?exceeds?/i,
  /too large for model with \d+ maximum context length/i, // Mistral
  /input token count.*exceeds the maximum/i, // Gemini OpenAI-compat
  /reduce the length of the (?:messages|prompt|input)/i,
  /request too large/i, // Anthropic 413 request_too_large
  /`?inputs`? tokens \+ `?max_new_tokens`? must be <=/i, // TGI 422 validation
  /longer than the maximum model length/i, // vLLM: "The decoder prompt (length 66501) …", "Prompt length of 5016 …"
  /longer than the model'?s context length/i, // SGLang: "The input (61709 tokens) is longer than …"
  /`?inputs`? must have less than \d+ tokens/i, // TGI, older: "`inputs` must have less than 2048 tokens. Given: 2222"
  /maximum prompt length is \d/i, // xAI: "This model's maximum prompt length is 500000 but the request contains 907154 tokens."
];

/** "too many tokens" is overflow, except when it is a throttle ("…please wait", "per minute"). */
const TOO_MANY_TOKENS = /too many (?:input )?tokens/i;
const THROTTLE_WORDING = /please wait|try again later|per (?:minute|min|day|hour)|rate.?limit|\bTPM\b|\bRPM\b|quota/i;

/** Whether `text` says the prompt overflowed the context window. */
export function isPromptTooLongText(text: string): boolean {
  if (TOO_LONG_PATTERNS.some((p) => p.test(text))) {
    // OpenAI's TPM errors mention neither of our phrases, but guard against "request too large … per min".
    return !(/request too large/i.test(text) && THROTTLE_WORDING.test(text));
  }
  return TOO_MANY_TOKENS.test(text) && !THROTTLE_WORDING.test(text);
}

/**
 * The token counts an overflow message states: what the provider counted (`actualTokens`)
 * and its limit (`limitTokens`). When the provider counts input and max_tokens together,
 * `actualTokens` is their sum, so that `actualTokens − limitTokens` is how much to shrink.
 */
export function parsePromptTooLong(text: string): TooLong {
  let m: RegExpExecArray | null;
  const N = "(\\d[\\d,_]*)";
  // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
  if ((m = new RegExp(`${N}\\s*tokens?\\s*>\\s*${N}\\s*(?:tokens?\\s*)?maximum`, "i").exec(text))) {
    return { actualTokens: num(m[1]), limitTokens: num(m[2]) };
  }
  // Anthropic: "input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000"
  if ((m = new RegExp(`${N}\\s*\\+\\s*${N}\\s*>\\s*${N}`).exec(text))) {
    return { actualTokens: num(m[1])! + num(m[2])!, limitTokens: num(m[3]) };
  }
  // TGI: "`inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`"
  if ((m = new RegExp(`must be <= ${N}\\.? Given: ${N} \`?inputs\`? tokens and ${N} \`?max_new_tokens`, "i").exec(text))) {
    return { actualTokens: num(m[2])! + num(m[3])!, limitTokens: num(m[1]) };
  }
  // vLLM V1: "The decoder prompt (length 66501) is longer than the maximum model length of 65536."
  // vLLM: "Prompt length of 5016 is longer than the maximum model length of 4096."
  if ((m = new RegExp(`(?:\\(length ${N}\\)|length of ${N}) is longer than the maximum model length of ${N}`, "i").exec(text))) {
    return { actualTokens: num(m[1] ?? m[2]), limitTokens: num(m[3]) };
  }
  // SGLang: "The input (61709 tokens) is longer than the model's context length (40960 tokens)."
  if ((m = new RegExp(`\\(${N} tokens?\\) is longer than the model'?s context length \\(${N}`, "i").exec(text))) {
    return { actualTokens: num(m[1]), limitTokens: num(m[2]) };
  }
  // TGI, older: "`inputs` must have less than 2048 tokens. Given: 2222"
  if ((m = new RegExp(`must have less than ${N} tokens\\.? Given: ${N}`, "i").exec(text))) {
    return { actualTokens: num(m[2]), limitTokens: num(m[1]) };
  }
  // xAI: "This model's maximum prompt length is 500000 but the request contains 907154 tokens."
  if ((m = new RegExp(`maximum prompt length is ${N} but the request contains ${N}`, "i").exec(text))) {
    return { actualTokens: num(m[2]), limitTokens: num(m[1]) };
  }
  // OpenRouter: "This endpoint's maximum context length is 200000 tokens. However, you requested about 5028244 tokens (…)"
  if ((m = new RegExp(`maximum context length is ${N} tokens?\\. However, you requested about ${N}`, "i").exec(text))) {
    return { actualTokens: num(m[2]), limitTokens: num(m[1]) };
  }
  // vLLM: "… your request has 3000 input tokens (2000 > 4096 - 3000)" (max_tokens too large)
  if ((m = new RegExp(`\\(${N}\\s*>\\s*${N}\\s*-\\s*${N}\\)`).exec(text))) {
    return { actualTokens: num(m[1])! + num(m[3])!, limitTokens: num(m[2]) };
  }
  const out: TooLong = {};
  const limitPatterns = [
    new RegExp(`maximum context length (?:is|of) ${N}`, "i"), // OpenAI, vLLM
    new RegExp(`context length of (?:only )?${N}`, "i"), // LM Studio
    new RegExp(`${N}\\s*(?:tokens? )?maximum context length`, "i"), // Mistral
    new RegExp(`(?:configured |context )?limit of ${N}`, "i"),
    new RegExp(`maximum number of tokens allowed \\(${N}\\)`, "i"), // Gemini
    new RegExp(`(?:context size|n_ctx|context window)(?: is|:| of)? ${N}`, "i"),
    new RegExp(`model maximum context length:? ${N}`, "i"),
  ];
  const actualPatterns = [
    new RegExp(`(?:resulted in|you requested|your request has|requested) ${N}`, "i"), // OpenAI, vLLM
    new RegExp(`prompt contains ${N}`, "i"), // Mistral
    new RegExp(`keep the first ${N}`, "i"), // LM Studio
    new RegExp(`input token count \\(${N}\\)`, "i"), // Gemini
    new RegExp(`(?:prompt|input) (?:has|of|is) ${N} tokens`, "i"),
    new RegExp(`(?:n_prompt_tokens|prompt tokens)(?: is|:|=)? ${N}`, "i"),
    new RegExp(`prompt is too long:? ${N}`, "i"), // Fireworks-style "The prompt is too long: 5000, model maximum …"
  ];
  for (const p of limitPatterns) if (out.limitTokens === undefined && (m = p.exec(text))) out.limitTokens = num(m[1]);
  for (const p of actualPatterns) if (out.actualTokens === undefined && (m = p.exec(text))) out.actualTokens = num(m[1]);
  return out;
}

/**
 * A limit on the request's bytes, not its tokens: HTTP 413 (Anthropic's request_too_large, a
 * proxy's "Request Entity Too Large"), or wording about bytes / payload size. Its value when
 * stated ("… 32 MB", "maximum allowed size of 1048576 bytes").
 */
export function parseByteLimit(status: number | undefined, type: string | undefined, text: string): { overBytes: boolean; limitBytes?: number } {
  const overBytes =
    status === 413 ||
    type === "request_too_large" ||
    /entity too large|payload too large|(?:body|request) (?:size )?(?:is )?too (?:large|big)|number of bytes|exceeds? the maximum (?:allowed )?(?:request )?size/i.test(text);
  if (!overBytes) return { overBytes };
  const m = /(\d[\d,_.]*)\s*(bytes?|[KMG]i?B)\b/i.exec(text);
  if (!m) return { overBytes };
  const value = Number(m[1]!.replace(/[,_]/g, ""));
  const unit = m[2]!.toUpperCase();
  const scale = unit.startsWith("K") ? 1024 : unit.startsWith("M") ? 1024 ** 2 : unit.startsWith("G") ? 1024 ** 3 : 1;
  return Number.isFinite(value) && value > 0 ? { overBytes, limitBytes: Math.floor(value * scale) } : { overBytes };
}
