import { test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {
  fromErrorText,
  fromHttpError,
  isPromptTooLongText,
  parsePromptTooLong,
  parseRetryAfter,
  toModelError,
} from "../../src/model/errors.ts";
import { ModelError } from "../../src/model/types.ts";

const anthropicBody = (type: string, message: string) => ({ type: "error", error: { type, message }, request_id: "req_1" });
const openaiBody = (message: string, type: string, code: string | number | null, param: string | null = null) => ({
  error: { message, type, param, code },
});

// ── prompt too long: literal bodies from every provider ──

const tooLong: { name: string; status: number; body: unknown; actual?: number; limit?: number }[] = [
  {
    name: "Anthropic prompt is too long",
    status: 400,
    body: anthropicBody("invalid_request_error", "prompt is too long: 210473 tokens > 200000 maximum"),
    actual: 210473,
    limit: 200000,
  },
  {
    name: "Anthropic input + max_tokens",
    status: 400,
    body: anthropicBody(
      "invalid_request_error",
      "input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000, decrease input length or `max_tokens` and try again",
    ),
    actual: 203192,
    limit: 200000,
  },
  {
    name: "OpenAI context_length_exceeded",
    status: 400,
    body: openaiBody(
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
      "invalid_request_error",
      "context_length_exceeded",
      "messages",
    ),
    actual: 131072,
    limit: 128000,
  },
  {
    name: "OpenAI with functions",
    status: 400,
    body: openaiBody(
      "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens (500 in the functions). Please reduce the length of the messages or functions.",
      "invalid_request_error",
      "context_length_exceeded",
    ),
    actual: 9000,
    limit: 8192,
  },
  {
    name: "OpenAI / vLLM / DeepSeek: requested with completion",
    status: 400,
    body: {
      object: "error",
      message:
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
      type: "BadRequestError",
      param: null,
      code: 400,
    },
    actual: 5000,
    limit: 4096,
  },
  {
    name: "vLLM input tokens",
    status: 400,
    body: {
      object: "error",
      message: "This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages.",
      type: "BadRequestError",
      param: null,
      code: 400,
    },
    actual: 40000,
    limit: 32768,
  },
  {
    name: "vLLM max_tokens too large",
    status: 400,
    body: {
      error: {
        message:
          "'max_tokens' is too large: 2000. This model's maximum context length is 4096 tokens and your request has 3000 input tokens (2000 > 4096 - 3000).",
        type: "BadRequestError",
        param: null,
        code: 400,
      },
    },
    actual: 5000,
    limit: 4096,
  },
  {
    name: "llama.cpp with counts",
    status: 400,
    body: {
      error: {
        code: 400,
        message: "the request exceeds the available context size, try increasing it",
        type: "exceed_context_size_error",
        n_prompt_tokens: 5210,
        n_ctx: 4096,
      },
    },
    actual: 5210,
    limit: 4096,
  },
  {
    name: "llama.cpp older wording",
    status: 400,
    body: { error: { code: 400, message: "the request exceeds the available context size. try increasing the context size or enable context shift", type: "invalid_request_error" } },
  },
  {
    name: "llama.cpp context shift disabled",
    status: 500,
    body: { error: { code: 500, message: "Context size has been exceeded.", type: "server_error" } },
  },
  {
    name: "Ollama native",
    status: 400,
    body: { error: "the input length exceeds the context length" },
  },
  {
    name: "Ollama OpenAI-compat",
    status: 500,
    body: openaiBody("input length exceeds maximum context length", "api_error", null),
  },
  {
    name: "LM Studio",
    status: 400,
    body: {
      error:
        "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input",
    },
    actual: 5000,
    limit: 4096,
  },
  {
    name: "LM Studio keep tokens",
    status: 400,
    body: { error: "The number of tokens to keep from the initial prompt is greater than the context length." },
  },
  {
    name: "Mistral",
    status: 400,
    body: { object: "error", message: "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length", type: "invalid_request_message_error", param: null, code: "3051" },
    actual: 40000,
    limit: 32768,
  },
  {
    name: "Gemini OpenAI-compat",
    status: 400,
    body: [{ error: { code: 400, message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", status: "INVALID_ARGUMENT" } }][0],
    actual: 1200000,
    limit: 1048576,
  },
  { name: "Bedrock", status: 400, body: { message: "Input is too long for requested model." } },
  { name: "TGI", status: 422, body: { error: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 500 `max_new_tokens`. Too many tokens.", error_type: "validation" } },
  { name: "413 request_too_large", status: 413, body: anthropicBody("request_too_large", "Request exceeds the maximum allowed number of bytes.") },
  { name: "413 plain", status: 413, body: "Payload Too Large" },
];

for (const c of tooLong) {
  test(`prompt_too_long: ${c.name}`, () => {
    const e = fromHttpError(c.status, c.body);
    assert.equal(e.kind, "prompt_too_long", e.message);
    assert.equal(e.status, c.status);
    assert.equal(e.retryable, false);
    if (c.actual !== undefined) assert.equal(e.actualTokens, c.actual);
    if (c.limit !== undefined) assert.equal(e.limitTokens, c.limit);
  });
}

test("parsePromptTooLong reads thousands separators and nothing from unrelated text", () => {
  assert.deepEqual(parsePromptTooLong("prompt is too long: 1,234,567 tokens > 1,000,000 maximum"), { actualTokens: 1234567, limitTokens: 1000000 });
  assert.deepEqual(parsePromptTooLong("something else"), {});
});

test("too many tokens: overflow unless it is a throttle", () => {
  assert.equal(isPromptTooLongText("Too many tokens in the prompt"), true);
  assert.equal(isPromptTooLongText("Too many tokens, please wait before trying again."), false);
  assert.equal(fromHttpError(429, { message: "Too many tokens, please wait before trying again." }).kind, "rate_limited");
  assert.equal(fromHttpError(400, { message: "Too many tokens, please wait before trying again." }).kind, "invalid_request");
  // OpenAI's TPM 429 mentions "Request too large" but is a rate limit
  const tpm = openaiBody(
    "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000.",
    "tokens",
    "rate_limit_exceeded",
  );
  assert.equal(fromHttpError(429, tpm).kind, "rate_limited");
  assert.equal(isPromptTooLongText(tpm.error.message), false);
});

test("a max_tokens-too-large 400 is not an overflow", () => {
  const e = fromHttpError(400, anthropicBody("invalid_request_error", "max_tokens: 200000 > 64000, which is the maximum allowed number of output tokens for claude-haiku-4-5"));
  assert.equal(e.kind, "invalid_request");
});

// ── rate limits, overload, server, auth ──

test("429 with retry-after seconds, fractional seconds, ms and an HTTP date", () => {
  const body = anthropicBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit");
  assert.equal(fromHttpError(429, body, { "retry-after": "7" }).retryAfterMs, 7000);
  assert.equal(fromHttpError(429, body, new Headers({ "retry-after": "1.5" })).retryAfterMs, 1500);
  assert.equal(fromHttpError(429, body, { "Retry-After-Ms": "250", "retry-after": "9" }).retryAfterMs, 250);
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(fromHttpError(429, body, { "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" }, { now }).retryAfterMs, 30_000);
  assert.equal(parseRetryAfter({ "retry-after": "Thu, 01 Jan 2025 00:00:30 GMT" }, now), 0, "a past date: no wait");
  assert.equal(parseRetryAfter({ "retry-after": "soon" }), undefined);
  assert.equal(parseRetryAfter(undefined), undefined);
  const e = fromHttpError(429, body);
  assert.equal(e.kind, "rate_limited");
  assert.equal(e.retryAfterMs, undefined);
  assert.equal(e.retryable, true);
});

test("overloaded: 529, overloaded_error mid-stream, OpenAI 503 wording", () => {
  assert.equal(fromHttpError(529, anthropicBody("overloaded_error", "Overloaded")).kind, "overloaded");
  const mid = fromHttpError(undefined, anthropicBody("overloaded_error", "Overloaded"));
  assert.equal(mid.kind, "overloaded");
  assert.equal(mid.status, undefined);
  assert.equal(fromHttpError(503, openaiBody("The server is overloaded or not ready yet.", "server_error", null)).kind, "overloaded");
  assert.equal(fromHttpError(529, "", { "retry-after": "2" }).retryAfterMs, 2000);
});

test("server errors: 5xx and api_error", () => {
  for (const status of [500, 502, 503, 504]) {
    const e = fromHttpError(status, "<html>Bad Gateway</html>");
    assert.equal(e.kind, "server", `status ${status}`);
    assert.equal(e.retryable, true);
  }
  assert.equal(fromHttpError(500, anthropicBody("api_error", "Internal server error")).kind, "server");
  assert.equal(fromHttpError(undefined, anthropicBody("api_error", "Internal server error")).kind, "server");
  assert.equal(fromHttpError(undefined, { message: "The server had an error", type: "server_error", param: null, code: null }).kind, "server");
});

test("auth and invalid requests are not retryable", () => {
  assert.equal(fromHttpError(401, anthropicBody("authentication_error", "invalid x-api-key")).kind, "auth");
  assert.equal(fromHttpError(403, anthropicBody("permission_error", "no access")).kind, "auth");
  assert.equal(fromHttpError(401, openaiBody("Incorrect API key provided", "invalid_request_error", "invalid_api_key")).kind, "auth");
  const bad = fromHttpError(400, anthropicBody("invalid_request_error", "messages: roles must alternate"));
  assert.equal(bad.kind, "invalid_request");
  assert.equal(bad.retryable, false);
  assert.equal(fromHttpError(404, openaiBody("The model `nope` does not exist", "invalid_request_error", "model_not_found")).kind, "invalid_request");
  assert.match(bad.message, /HTTP 400 invalid_request_error: messages: roles must alternate/);
});

// ── the SDKs' own error objects ──

test("Anthropic SDK APIError (whole body) and OpenAI SDK APIError (inner error)", () => {
  const a = Anthropic.APIError.generate(
    400,
    anthropicBody("invalid_request_error", "prompt is too long: 300000 tokens > 200000 maximum"),
    undefined,
    new Headers({ "request-id": "req_1" }),
  );
  const ea = toModelError(a, { provider: "anthropic" });
  assert.equal(ea.kind, "prompt_too_long");
  assert.equal(ea.actualTokens, 300000);
  assert.equal(ea.limitTokens, 200000);
  assert.equal(ea.cause, a);
  assert.match(ea.message, /^anthropic HTTP 400 invalid_request_error: prompt is too long/);

  const o = OpenAI.APIError.generate(
    400,
    openaiBody(
      "This model's maximum context length is 16385 tokens. However, your messages resulted in 20000 tokens. Please reduce the length of the messages.",
      "invalid_request_error",
      "context_length_exceeded",
      "messages",
    ),
    undefined,
    new Headers(),
  );
  const eo = toModelError(o);
  assert.equal(eo.kind, "prompt_too_long");
  assert.equal(eo.actualTokens, 20000);
  assert.equal(eo.limitTokens, 16385);

  const rl = toModelError(OpenAI.APIError.generate(429, openaiBody("slow down", "requests", "rate_limit_exceeded"), undefined, new Headers({ "retry-after": "3" })));
  assert.equal(rl.kind, "rate_limited");
  assert.equal(rl.retryAfterMs, 3000);
  const ov = toModelError(Anthropic.APIError.generate(529, anthropicBody("overloaded_error", "Overloaded"), undefined, new Headers({ "retry-after": "1" })));
  assert.equal(ov.kind, "overloaded");
  assert.equal(ov.retryAfterMs, 1000);
  // a non-JSON error body reaches the SDK error as its message only
  const txt = toModelError(OpenAI.APIError.generate(500, undefined, "the request exceeds the available context size", new Headers()));
  assert.equal(txt.kind, "prompt_too_long");
});

test("connection errors, stream cuts and aborts", () => {
  const socket = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
  const cut = new TypeError("terminated", { cause: socket });
  const e = toModelError(cut);
  assert.equal(e.kind, "network");
  assert.match(e.message, /terminated: other side closed/);
  assert.equal(e.retryable, true);
  assert.equal(toModelError(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })).kind, "network");
  assert.equal(toModelError(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" })).kind, "network");
  assert.equal(toModelError(new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) })).kind, "network");
  assert.equal(toModelError(new Anthropic.APIConnectionError({ message: "Connection error.", cause: cut })).kind, "network");
  assert.equal(toModelError(new OpenAI.APIConnectionTimeoutError()).kind, "network");
  // the Anthropic MessageStream wraps a cut as AnthropicError("terminated")
  assert.equal(toModelError(new Anthropic.AnthropicError("terminated")).kind, "network");

  assert.equal(toModelError(new Anthropic.APIUserAbortError()).kind, "aborted");
  assert.equal(toModelError(new OpenAI.APIUserAbortError()).kind, "aborted");
  assert.equal(toModelError(new DOMException("This operation was aborted", "AbortError")).kind, "aborted");
  const ac = new AbortController();
  ac.abort();
  assert.equal(toModelError(cut, { signal: ac.signal }).kind, "aborted", "the caller's abort wins");
  const already = new ModelError("network", "x");
  assert.equal(toModelError(already), already, "a ModelError passes through");
});

test("malformed stream data is a clear server error", () => {
  let err: unknown;
  try {
    JSON.parse('{"type":"content_block_delta","delta":{"text":"brok');
  } catch (e) {
    err = e;
  }
  const e = toModelError(err, { provider: "anthropic" });
  assert.equal(e.kind, "server");
  assert.match(e.message, /malformed response/);
});

test("fromErrorText: statuses, overflow and transport wordings in plain text", () => {
  assert.equal(fromErrorText("HTTP 429 Too Many Requests").kind, "rate_limited");
  assert.equal(fromErrorText("503 Service Unavailable").kind, "server");
  const t = fromErrorText("Error: prompt is too long: 5000 tokens > 4096 maximum");
  assert.equal(t.kind, "prompt_too_long");
  assert.equal(t.actualTokens, 5000);
  assert.equal(t.limitTokens, 4096);
  assert.equal(fromErrorText("connect ECONNREFUSED 127.0.0.1:11434").kind, "network");
  assert.equal(fromErrorText("socket hang up").kind, "network");
  assert.equal(fromErrorText("401 Unauthorized").kind, "auth");
  assert.equal(fromErrorText('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}').kind, "overloaded");
  assert.equal(fromErrorText("the request exceeds the available context size", 400).kind, "prompt_too_long");
  assert.equal(fromErrorText("something odd").kind, "server");
});

test("context-error wordings from real servers' issue threads: each is prompt_too_long, with the count and the limit it states", () => {
  const cases: [string, number, number][] = [
    ["The decoder prompt (length 66501) is longer than the maximum model length of 65536. Make sure that `max_model_len` is no smaller than the number of text tokens.", 66_501, 65_536], // vLLM V1
    ["Prompt length of 5016 is longer than the maximum model length of 4096.", 5_016, 4_096], // vLLM
    ["The input (61709 tokens) is longer than the model's context length (40960 tokens).", 61_709, 40_960], // SGLang
    ["Input validation error: `inputs` must have less than 2048 tokens. Given: 2222", 2_222, 2_048], // TGI, older
    ["This model's maximum prompt length is 500000 but the request contains 907154 tokens.", 907_154, 500_000], // xAI
    ["This endpoint's maximum context length is 200000 tokens. However, you requested about 5028244 tokens (5028244 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.", 5_028_244, 200_000], // OpenRouter
  ];
  for (const [text, actual, limit] of cases) {
    const e = fromErrorText(text, 400);
    assert.equal(e.kind, "prompt_too_long", text);
    assert.deepEqual([e.actualTokens, e.limitTokens], [actual, limit], text);
  }
});
