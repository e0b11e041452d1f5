// A fake OpenAI Responses API on 127.0.0.1: POST /v1/responses, streamed (SSE with `event:` names,
// `type` and `sequence_number` in every event, no [DONE]) or one JSON response. Test support.
//
// As the real API: input tokens are o200k of `instructions` + `tools` (unit 0) and each input item
// (a reasoning item counts its summary and the reasoning tokens it stands for, not its ciphertext);
// over the window, 400 context_length_exceeded before the stream (or, by option, a response.failed
// or an `error` event in it); a reply with thinking starts with a reasoning item whose
// encrypted_content comes only with include: ["reasoning.encrypted_content"]; the items sent back
// are checked as the real API checks them (./responses-items.ts checkInput); `store` defaults to
// true, and only a stored response can be a previous_response_id. Cached tokens: the longest
// prefix of units an earlier request sent.
import type { IncomingMessage, ServerResponse } from "node:http";
import { authorized, closer, isFault, latency, listen, outputTokens, playSse, PrefixCache, readJson, retryAfterHeaders, scriptOf, sendJson, unitTokens, type FakeOptions, type FakeServer, type Fault } from "./common.ts";
import { checkInput, errorFrame, failedFrames, newBook, outputItems, responseFrames, type ItemBook, type ResponsesTurn } from "./responses-items.ts";

export type { ResponsesTurn } from "./responses-items.ts";

export interface ResponsesFakeOptions extends FakeOptions {
  /**
   * How a streamed request over the window is refused: "status" (default: 400 before the stream,
   * as OpenAI refuses an oversized input), "response.failed" or "error" (an error event).
   */
  overflow?: "status" | "response.failed" | "error";
  /** false: a model without reasoning (include reasoning.encrypted_content is a 400, no reasoning items). Default true. */
  reasoning?: boolean;
}

export interface ResponsesFakeServer extends FakeServer {
  /** Every reasoning item the server emitted, by id, and what must follow it. */
  book: ItemBook;
  /** Ids of the responses the server kept (requests without store: false). */
  stored: string[];
  /** Requests refused for their items (status and message), in order. */
  itemErrors: { index: number; status: number; message: string }[];
}

export const RESPONSES_TOO_LONG = "Your input exceeds the context window of this model. Please adjust your input and try again.";

const errorBody = (message: string, code: string | null, param: string | null = "input", type = "invalid_request_error") => ({ error: { message, type, param, code } });

/** The input items of a request body (a string input is one user message). */
export function inputItems(body: any): any[] {
  if (typeof body?.input === "string") return [{ role: "user", content: body.input }];
  return Array.isArray(body?.input) ? body.input : [];
}

/** The units the fake counts: {instructions, tools}, then each input item. */
export function responsesUnits(body: any, book?: ItemBook): { units: unknown[]; tokens: number[] } {
  const units: unknown[] = [{ instructions: body?.instructions ?? null, tools: body?.tools ?? [] }, ...inputItems(body)];
  const tokens = units.map((u: any) => {
    if (u?.type !== "reasoning") return unitTokens(u);
    const { encrypted_content: _, ...rest } = u;
    return unitTokens(rest) + (book?.emitted.get(u.id)?.tokens ?? 0);
  });
  return { units, tokens };
}

/** Exact input tokens the fake counts for a /v1/responses body (`book`: the server's, for the reasoning behind each item). */
export function responsesInputTokens(body: any, book?: ItemBook): number {
  return responsesUnits(body, book).tokens.reduce((a, b) => a + b, 0);
}

function httpFault(res: ServerResponse, f: Fault): boolean {
  if (f.fault === "rate_limit") sendJson(res, 429, errorBody("Rate limit reached for requests. Please try again later.", "rate_limit_exceeded", null, "requests"), retryAfterHeaders(f));
  else if (f.fault === "overloaded") sendJson(res, 503, errorBody("The server is overloaded or not ready yet.", null, null, "server_error"), retryAfterHeaders(f));
  else if (f.fault === "server_error") sendJson(res, 500, errorBody("The server had an error while processing your request. Sorry about that!", null, null, "server_error"));
  else if (f.fault === "status") sendJson(res, f.status, f.body, f.headers);
  else return false;
  return true;
}

export async function startFakeResponses(opts: ResponsesFakeOptions = {}): Promise<ResponsesFakeServer> {
  const script = scriptOf(opts.script);
  const window = opts.contextWindow ?? 128_000;
  const cache = opts.promptCache === false ? undefined : new PrefixCache();
  const book = newBook();
  const responses = new Map<string, any>();
  const server: ResponsesFakeServer = { url: "", port: 0, requests: [], log: [], served: [], book, stored: [], itemErrors: [], close: async () => {} };

  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "").split("?")[0]!;
    const parsed = await readJson(req);
    server.log.push({ method: req.method ?? "", path, headers: req.headers, body: parsed.ok ? parsed.body : parsed.text });
    if (req.method !== "POST" || (path !== "/v1/responses" && path !== "/responses")) {
      return sendJson(res, 404, errorBody(`Unknown request URL: ${req.method} ${path}`, "unknown_url", null));
    }
    if (!authorized(req, opts.apiKey)) return sendJson(res, 401, errorBody("Incorrect API key provided.", "invalid_api_key", null));
    if (!parsed.ok) return sendJson(res, 400, errorBody("We could not parse the JSON body of your request.", null, null));
    const body = parsed.body;
    const index = server.requests.length;
    server.requests.push(body);
    const step = await script(body, index);
    const fault = isFault(step) ? step : undefined;
    const turn: ResponsesTurn = fault ? (("turn" in fault && fault.turn) || { text: "partial reply that never finishes" }) : (step as ResponsesTurn);
    await latency(opts, body, index, turn);
    if (fault && httpFault(res, fault)) return;

    const refuse = (e: { status: number; message: string; code: string | null }, param: string | null = "input") => {
      server.itemErrors.push({ index, status: e.status, message: e.message });
      sendJson(res, e.status, errorBody(e.message, e.code, param));
    };
    const store = body.store !== false;
    const encrypted = Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content");
    if (encrypted && opts.reasoning === false) return refuse({ status: 400, message: "Encrypted content is not supported with this model.", code: null }, "include");
    let earlier: any[] = [];
    if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
      const prev = responses.get(body.previous_response_id);
      if (!prev) return refuse({ status: 400, message: `Previous response with id '${body.previous_response_id}' not found.`, code: "previous_response_not_found" }, "previous_response_id");
      earlier = prev;
    }
    const items = [...earlier, ...inputItems(body)];
    const bad = checkInput(items, book, store);
    if (bad) return refuse(bad);

    const counted = { ...body, input: items };
    const { units, tokens } = responsesUnits(counted, book);
    const total = tokens.reduce((a, b) => a + b, 0);
    const n = index + 1;
    const base = { id: `resp_fake_${n}`, object: "response", created_at: 1_700_000_000 + n, model: body.model, instructions: body.instructions ?? null, max_output_tokens: body.max_output_tokens ?? null, previous_response_id: body.previous_response_id ?? null, store, tool_choice: body.tool_choice ?? "auto", tools: body.tools ?? [], truncation: body.truncation ?? "disabled", parallel_tool_calls: true, metadata: {} };
    if (total > window) {
      const mode = opts.overflow ?? "status";
      server.itemErrors.push({ index, status: 400, message: RESPONSES_TOO_LONG });
      if (!body.stream || mode === "status") return sendJson(res, 400, errorBody(RESPONSES_TOO_LONG, "context_length_exceeded"));
      const frames = mode === "error" ? [errorFrame("context_length_exceeded", RESPONSES_TOO_LONG, "input")] : failedFrames(base, { code: "context_length_exceeded", message: RESPONSES_TOO_LONG });
      return playSse(res, { frames, malformed: "", streamError: () => "" }, undefined);
    }
    server.served!.push(total);

    const reasoningTokens = turn.thinking ? outputTokens({ text: turn.thinking }) : 0;
    const output = outputItems(turn, n, { reasoning: opts.reasoning !== false, encrypted, reasoningTokens }, book);
    const cached = cache ? cache.readAndStore(String(body.model), units, tokens, units.length) : 0;
    const outTokens = turn.usage?.output_tokens ?? outputTokens(turn);
    const inTokens = turn.usage?.input_tokens !== undefined ? turn.usage.input_tokens + (turn.usage.cache_read_input_tokens ?? 0) : total;
    const usage = { input_tokens: inTokens, input_tokens_details: { cached_tokens: turn.usage?.cache_read_input_tokens ?? cached }, output_tokens: outTokens, output_tokens_details: { reasoning_tokens: reasoningTokens }, total_tokens: inTokens + outTokens };
    const incomplete = turn.stopReason === "max_output_tokens" || turn.stopReason === "content_filter";
    const final = { ...base, status: incomplete ? "incomplete" : "completed", error: null, incomplete_details: incomplete ? { reason: turn.stopReason } : null, output, usage };
    if (store) {
      responses.set(final.id, [...items, ...output]);
      server.stored.push(final.id);
    }
    if (!body.stream) {
      if (fault) return void res.socket?.destroy();
      return sendJson(res, 200, final, { "x-request-id": `req_fake_${n}` });
    }
    await playSse(
      res,
      {
        frames: responseFrames(base, final),
        malformed: `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"brok\n\n`,
        streamError: (code = "server_error", message = "The server had an error while processing your request.") => errorFrame(code, message),
      },
      fault,
      opts.eventDelayMs,
    );
  };

  const { server: http, port } = await listen(handler);
  server.url = `http://127.0.0.1:${port}/v1`;
  server.port = port;
  server.close = closer(http);
  return server;
}
