// A fake OpenAI Chat Completions API on 127.0.0.1: POST /v1/chat/completions, streaming
// (chat.completion.chunk events, tool_calls deltas, a usage chunk when
// stream_options.include_usage, then data: [DONE]) or one JSON completion. Test support.
//
// Tokens: o200k over a stable serialisation, unit by unit: unit 0 is the tools, then one unit
// per message. Caching is automatic as on OpenAI: prompt_tokens_details.cached_tokens is the
// longest prefix of units an earlier request sent (prompt_tokens includes it).
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  argumentsOf,
  authorized,
  closer,
  frame,
  isFault,
  latency,
  listen,
  outputTokens,
  pieces,
  playSse,
  PrefixCache,
  readJson,
  retryAfterHeaders,
  scriptOf,
  sendJson,
  unitTokens,
  type FakeOptions,
  type FakeServer,
  type Fault,
  type RecordedRequest,
  type Turn,
} from "./common.ts";

export type { FakeOptions, FakeServer, Fault, Turn } from "./common.ts";

const errorBody = (message: string, type: string, code: string | null, param: string | null = null) => ({
  error: { message, type, param, code },
});

export const openaiTooLongMessage = (n: number, m: number) =>
  `This model's maximum context length is ${m} tokens. However, your messages resulted in ${n} tokens. Please reduce the length of the messages.`;

export function openaiUnits(body: any): unknown[] {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  return [{ tools: body?.tools ?? [] }, ...messages];
}

/** Exact prompt tokens the fake counts for a /v1/chat/completions body. */
export function openaiInputTokens(body: any): number {
  return openaiUnits(body).reduce<number>((s, u) => s + unitTokens(u), 0);
}

function usageOf(body: any, turn: Turn, cache: PrefixCache | undefined) {
  const units = openaiUnits(body);
  const tokens = units.map(unitTokens);
  const prompt = tokens.reduce((a, b) => a + b, 0);
  const cached = cache ? cache.readAndStore(String(body?.model), units, tokens, units.length) : 0;
  const completion = turn.usage?.output_tokens ?? outputTokens(turn);
  const promptTokens = turn.usage?.input_tokens !== undefined ? turn.usage.input_tokens + (turn.usage.cache_read_input_tokens ?? 0) : prompt;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
    prompt_tokens_details: { cached_tokens: turn.usage?.cache_read_input_tokens ?? cached, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: turn.thinking ? outputTokens({ text: turn.thinking }) : 0, audio_tokens: 0 },
  };
}

const finishOf = (turn: Turn) => turn.stopReason ?? (turn.toolUses?.length ? "tool_calls" : "stop");
const callId = (n: number, i: number, t: { id?: string }) => t.id ?? `call_fake_${n}_${i}`;

function streamFrames(body: any, turn: Turn, usage: ReturnType<typeof usageOf>, n: number): string[] {
  const withUsage = body?.stream_options?.include_usage === true;
  const base = { id: `chatcmpl-fake-${n}`, object: "chat.completion.chunk", created: 1_700_000_000 + n, model: body.model, system_fingerprint: "fp_fake" };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    frame({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) });
  const frames = [chunk({ role: "assistant", content: "", refusal: null })];
  if (turn.thinking) for (const p of pieces(turn.thinking)) frames.push(chunk({ reasoning_content: p }));
  if (turn.text) for (const p of pieces(turn.text)) frames.push(chunk({ content: p }));
  (turn.toolUses ?? []).forEach((t, i) => {
    frames.push(chunk({ tool_calls: [{ index: i, id: callId(n, i, t), type: "function", function: { name: t.name, arguments: "" } }] }));
    for (const p of pieces(argumentsOf(t), 4)) frames.push(chunk({ tool_calls: [{ index: i, function: { arguments: p } }] }));
  });
  frames.push(chunk({}, finishOf(turn)));
  if (withUsage) frames.push(frame({ ...base, choices: [], usage }));
  frames.push("data: [DONE]\n\n");
  return frames;
}

function completion(body: any, turn: Turn, usage: ReturnType<typeof usageOf>, n: number) {
  const calls = (turn.toolUses ?? []).map((t, i) => ({ id: callId(n, i, t), type: "function", function: { name: t.name, arguments: argumentsOf(t) } }));
  return {
    id: `chatcmpl-fake-${n}`,
    object: "chat.completion",
    created: 1_700_000_000 + n,
    model: body.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: turn.text ?? null,
          refusal: null,
          ...(turn.thinking ? { reasoning_content: turn.thinking } : {}),
          ...(calls.length ? { tool_calls: calls } : {}),
        },
        logprobs: null,
        finish_reason: finishOf(turn),
      },
    ],
    usage,
  };
}

function httpFault(res: ServerResponse, f: Fault): boolean {
  switch (f.fault) {
    case "rate_limit":
      sendJson(
        res,
        429,
        errorBody("Rate limit reached for requests. Please try again later.", "requests", "rate_limit_exceeded"),
        retryAfterHeaders(f),
      );
      return true;
    case "overloaded":
      sendJson(res, 503, errorBody("The server is overloaded or not ready yet.", "server_error", null), retryAfterHeaders(f));
      return true;
    case "server_error":
      sendJson(res, 500, errorBody("The server had an error while processing your request. Sorry about that!", "server_error", null));
      return true;
    case "status":
      sendJson(res, f.status, f.body, f.headers);
      return true;
    default:
      return false;
  }
}

/** Ollama's native endpoints beside the OpenAI one (only what lethe reads). */
function ollamaNative(req: IncomingMessage, res: ServerResponse, path: string, body: any, opts: FakeOptions, numCtx: number): boolean {
  if (req.method === "GET" && path === "/api/version") return sendJson(res, 200, { version: "0.12.6" }), true;
  if (req.method === "GET" && path === "/api/ps") {
    const models = opts.ollamaLoaded === false ? [] : [{ name: "qwen2.5-coder:7b", model: "qwen2.5-coder:7b", size: 6_000_000_000, digest: "fake", details: { family: "qwen2" }, expires_at: "2026-11-24T21:00:00Z", size_vram: 6_000_000_000, context_length: numCtx }];
    return sendJson(res, 200, { models }), true;
  }
  if (req.method === "POST" && path === "/api/show") {
    const parameters = `${opts.ollamaNumCtxParam ? `num_ctx                        ${numCtx}\n` : ""}stop                           "<|im_end|>"`;
    return sendJson(res, 200, { modelfile: "FROM qwen2.5-coder", parameters, model_info: { "general.architecture": "qwen2", "qwen2.context_length": 32_768 }, details: { family: "qwen2" }, _model: body?.model }), true;
  }
  return false;
}

/** Ollama's truncation: drop the oldest non-system messages until the prompt fits numCtx. */
function ollamaTruncate(body: any, numCtx: number): { body: any; dropped: number } {
  const messages: any[] = [...(body.messages ?? [])];
  let dropped = 0;
  const total = () => openaiInputTokens({ ...body, messages });
  while (total() > numCtx && messages.length > 1) {
    const i = messages.findIndex((m) => m.role !== "system");
    if (i < 0 || i === messages.length - 1) break;
    messages.splice(i, 1);
    dropped++;
  }
  return { body: { ...body, messages }, dropped };
}

const DEEPSEEK_MISSING = (i: number) =>
  `Missing \`reasoning_content\` field in the assistant message at message index ${i}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls`;

export async function startFakeOpenAI(opts: FakeOptions = {}): Promise<FakeServer> {
  const script = scriptOf(opts.script);
  const window = opts.contextWindow ?? 128_000;
  const flavor = opts.flavor ?? "openai";
  const numCtx = opts.numCtx ?? window;
  const served: number[] = [];
  const stats = { truncated: 0 };
  let contextErrors = 0;
  const cache = opts.promptCache === false ? undefined : new PrefixCache();
  const requests: any[] = [];
  const log: RecordedRequest[] = [];

  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "").split("?")[0]!;
    const parsed = await readJson(req);
    log.push({ method: req.method ?? "", path, headers: req.headers, body: parsed.ok ? parsed.body : parsed.text });
    if (flavor === "ollama" && opts.ollamaApi !== false && ollamaNative(req, res, path, parsed.ok ? parsed.body : undefined, opts, numCtx)) return;
    if (req.method !== "POST" || (path !== "/v1/chat/completions" && path !== "/chat/completions")) {
      return sendJson(res, 404, errorBody(`Unknown request URL: ${req.method} ${path}`, "invalid_request_error", "unknown_url"));
    }
    if (opts.maxBodyBytes !== undefined && parsed.bytes > opts.maxBodyBytes) {
      // nginx's client_max_body_size, in front of the server: the body never reaches it.
      const page = "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n";
      res.writeHead(413, { "content-type": "text/html", "content-length": Buffer.byteLength(page) });
      return void res.end(page);
    }
    if (!authorized(req, opts.apiKey)) {
      return sendJson(res, 401, errorBody("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"));
    }
    if (!parsed.ok) return sendJson(res, 400, errorBody("We could not parse the JSON body of your request.", "invalid_request_error", null));
    const body = parsed.body;

    const index = requests.length;
    requests.push(body);
    const step = await script(body, index);
    const fault = isFault(step) ? step : undefined;
    let turn: Turn = fault ? (("turn" in fault && fault.turn) || { text: "partial reply that never finishes" }) : (step as Turn);
    await latency(opts, body, index, turn);
    if (fault && httpFault(res, fault)) return;

    if (flavor === "deepseek") {
      const i = (body.messages ?? []).findIndex((m: any) => m?.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length > 0 && typeof m.reasoning_content !== "string");
      if (i >= 0) return sendJson(res, 400, errorBody(DEEPSEEK_MISSING(i), "invalid_request_error", "invalid_request_error"));
    }
    let total = openaiInputTokens(body);
    const maxTokens = Number(body.max_completion_tokens ?? body.max_tokens ?? 0);
    let counted = body;
    if (flavor === "ollama") {
      // Never an error: the prompt is cut to num_ctx and the usage reports what was kept.
      if (total > numCtx) {
        const cut = ollamaTruncate(body, numCtx);
        counted = cut.body;
        total = openaiInputTokens(counted);
        stats.truncated++;
      }
    } else if (flavor === "vllm" && total + maxTokens > window) {
      const message = `This model's maximum context length is ${window} tokens. However, you requested ${total + maxTokens} tokens (${total} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`;
      const inner = { message, type: "BadRequestError", param: null, code: 400 };
      return sendJson(res, 400, contextErrors++ % 2 === 0 ? { object: "error", ...inner } : { error: inner });
    } else if (flavor === "llamacpp" && total > window) {
      return sendJson(res, 400, { error: { code: 400, message: "the request exceeds the available context size, try increasing it", type: "exceed_context_size_error", n_prompt_tokens: total, n_ctx: window } });
    } else if (flavor === "tgi" && total + maxTokens > window) {
      return sendJson(res, 422, { error: `Input validation error: \`inputs\` tokens + \`max_new_tokens\` must be <= ${window}. Given: ${total} \`inputs\` tokens and ${maxTokens} \`max_new_tokens\``, error_type: "validation" });
    } else if (total > window) {
      return sendJson(res, 400, errorBody(openaiTooLongMessage(total, window), "invalid_request_error", "context_length_exceeded", "messages"));
    } else if (opts.checkMaxTokens && total + maxTokens > window) {
      const msg = `This model's maximum context length is ${window} tokens. However, you requested ${total + maxTokens} tokens (${total} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`;
      return sendJson(res, 400, errorBody(msg, "invalid_request_error", "context_length_exceeded", "messages"));
    }
    served.push(total);
    if (flavor === "deepseek" && !turn.thinking) turn = { ...turn, thinking: `Request ${index + 1}: working out the next step.` };
    const usage = usageOf(counted, turn, cache);
    const n = index + 1;
    if (!body.stream) {
      if (fault) return void res.socket?.destroy();
      return sendJson(res, 200, completion(body, turn, usage, n), { "x-request-id": `req_fake_${n}` });
    }
    await playSse(
      res,
      {
        frames: streamFrames(body, turn, usage, n),
        malformed: `data: {"id":"chatcmpl-fake-${n}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"brok\n\n`,
        streamError: (type = "server_error", message = "The server had an error while processing your request.") =>
          frame(errorBody(message, type, null)),
      },
      fault,
      opts.eventDelayMs,
    );
  };

  const { server, port } = await listen(handler);
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    log,
    served,
    get truncated() {
      return stats.truncated;
    },
    close: closer(server),
  };
}
