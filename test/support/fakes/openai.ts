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

export async function startFakeOpenAI(opts: FakeOptions = {}): Promise<FakeServer> {
  const script = scriptOf(opts.script);
  const window = opts.contextWindow ?? 128_000;
  const cache = opts.promptCache === false ? undefined : new PrefixCache();
  const requests: any[] = [];
  const log: RecordedRequest[] = [];

  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "").split("?")[0]!;
    const parsed = await readJson(req);
    log.push({ method: req.method ?? "", path, headers: req.headers, body: parsed.ok ? parsed.body : parsed.text });
    if (req.method !== "POST" || (path !== "/v1/chat/completions" && path !== "/chat/completions")) {
      return sendJson(res, 404, errorBody(`Unknown request URL: ${req.method} ${path}`, "invalid_request_error", "unknown_url"));
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
    const turn: Turn = fault ? (("turn" in fault && fault.turn) || { text: "partial reply that never finishes" }) : (step as Turn);
    await latency(opts, body, index, turn);
    if (fault && httpFault(res, fault)) return;

    const total = openaiInputTokens(body);
    if (total > window) {
      return sendJson(res, 400, errorBody(openaiTooLongMessage(total, window), "invalid_request_error", "context_length_exceeded", "messages"));
    }
    const maxTokens = Number(body.max_completion_tokens ?? body.max_tokens ?? 0);
    if (opts.checkMaxTokens && total + maxTokens > window) {
      const msg = `This model's maximum context length is ${window} tokens. However, you requested ${total + maxTokens} tokens (${total} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`;
      return sendJson(res, 400, errorBody(msg, "invalid_request_error", "context_length_exceeded", "messages"));
    }
    const usage = usageOf(body, turn, cache);
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
  return { url: `http://127.0.0.1:${port}/v1`, port, requests, log, close: closer(server) };
}
