// A fake Anthropic Messages API on 127.0.0.1: POST /v1/messages (SSE streaming as the real
// API sends it, or one JSON message) and POST /v1/messages/count_tokens. Test support.
//
// Tokens: o200k over a stable serialisation of the request, unit by unit: unit 0 is
// {system, tools}, then one unit per message (string content counted as one text block).
// Caching: with a cache_control breakpoint anywhere (or a top-level cache_control), the units
// up to the last breakpoint are cacheable; cache_read_input_tokens is the longest prefix an
// earlier request stored, cache_creation_input_tokens the rest of the cacheable part,
// input_tokens what follows the breakpoint. Without any breakpoint nothing is cached.
import type { IncomingMessage, ServerResponse } from "node:http";
import { CompactionLedger, clearContext, compactionTokens, editsOf, keptMessages, summaryOf } from "./anthropic-context.ts";
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

const errorBody = (type: string, message: string) => ({ type: "error", error: { type, message }, request_id: "req_fake" });

export const anthropicTooLongMessage = (n: number, m: number) => `prompt is too long: ${n} tokens > ${m} maximum`;

const hasCacheControl = (v: unknown): boolean =>
  Array.isArray(v) ? v.some(hasCacheControl) : v !== null && typeof v === "object" ? "cache_control" in v || Object.values(v).some(hasCacheControl) : false;

/**
 * The units a request is counted and cached by: from the last compaction block on (the server
 * ignores what precedes it), a compaction block counted by its summary.
 */
export function anthropicUnits(body: any, messagesOverride?: any[]): unknown[] {
  const system = Array.isArray(body?.system) ? body.system.map((b: any) => b?.text ?? "").join("\n") : (body?.system ?? "");
  const messages: any[] = messagesOverride ?? keptMessages(Array.isArray(body?.messages) ? body.messages : []);
  const block = (b: any) => (b?.type === "compaction" ? { type: "compaction", content: b.content } : b);
  return [
    { system, tools: body?.tools ?? [] },
    ...messages.map((m) => ({ role: m?.role, content: typeof m?.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m?.content) ? m.content.map(block) : m?.content })),
  ];
}

/** Exact input tokens the fake counts for a /v1/messages body (or for other messages under its system and tools). */
export function anthropicInputTokens(body: any, messages?: any[]): number {
  return anthropicUnits(body, messages).reduce<number>((s, u) => s + unitTokens(u), 0);
}

interface Counted {
  total: number;
  input: number;
  cacheRead: number;
  cacheCreation: number;
}

function count(body: any, cache: PrefixCache | undefined): Counted {
  const units = anthropicUnits(body);
  const tokens = units.map(unitTokens);
  const total = tokens.reduce((a, b) => a + b, 0);
  if (!cache) return { total, input: total, cacheRead: 0, cacheCreation: 0 };
  let upto = 0;
  if (body?.cache_control) upto = units.length;
  else {
    if (hasCacheControl(body?.system) || hasCacheControl(body?.tools)) upto = 1;
    (body?.messages ?? []).forEach((m: unknown, i: number) => {
      if (hasCacheControl(m)) upto = i + 2;
    });
  }
  if (upto === 0) return { total, input: total, cacheRead: 0, cacheCreation: 0 };
  const cacheable = tokens.slice(0, upto).reduce((a, b) => a + b, 0);
  const cacheRead = cache.readAndStore(String(body?.model), units, tokens, upto);
  return { total, input: total - cacheable, cacheRead, cacheCreation: cacheable - cacheRead };
}

/** What the server's context management did to this request. */
interface ServerSide {
  /** A compaction block it wrote (first in the reply). */
  block?: Record<string, unknown>;
  stop?: string;
  applied?: Record<string, unknown>[];
  iterations?: Record<string, unknown>[];
}

interface Block {
  start: Record<string, unknown>;
  deltas: Record<string, unknown>[];
  final: Record<string, unknown>;
}

function blocksOf(turn: Turn, n: number, compaction?: Record<string, unknown>): Block[] {
  const out: Block[] = [];
  if (compaction) {
    // Streamed as the API does: the block opens empty (its signature set), one compaction_delta carries its content.
    const { content, encrypted_content, ...start } = compaction;
    out.push({ start: { ...start, content: null, encrypted_content: null }, deltas: [{ type: "compaction_delta", content, encrypted_content }], final: compaction });
    if (turn.compactionOnly) return out;
  }
  if (turn.redactedThinking !== undefined) {
    const b = { type: "redacted_thinking", data: turn.redactedThinking };
    out.push({ start: b, deltas: [], final: b });
  }
  if (turn.thinking !== undefined) {
    const signature = turn.signature ?? `sig_fake_${n}_${Buffer.from(turn.thinking.slice(0, 12)).toString("base64")}`;
    out.push({
      start: { type: "thinking", thinking: "", signature: "" },
      deltas: [...pieces(turn.thinking).map((t) => ({ type: "thinking_delta", thinking: t })), { type: "signature_delta", signature }],
      final: { type: "thinking", thinking: turn.thinking, signature },
    });
  }
  if (turn.text !== undefined || (!turn.toolUses?.length && turn.thinking === undefined && turn.redactedThinking === undefined)) {
    const text = turn.text ?? "";
    out.push({ start: { type: "text", text: "" }, deltas: pieces(text).map((t) => ({ type: "text_delta", text: t })), final: { type: "text", text } });
  }
  (turn.toolUses ?? []).forEach((t, i) => {
    const id = t.id ?? `toolu_fake_${n}_${i}`;
    const args = argumentsOf(t);
    let input: unknown;
    try {
      input = JSON.parse(args);
    } catch {
      input = {};
    }
    out.push({
      start: { type: "tool_use", id, name: t.name, input: {} },
      deltas: [{ type: "input_json_delta", partial_json: "" }, ...pieces(args, 4).map((p) => ({ type: "input_json_delta", partial_json: p }))],
      final: { type: "tool_use", id, name: t.name, input },
    });
  });
  return out;
}

function usageOf(c: Counted, turn: Turn) {
  return {
    input_tokens: turn.usage?.input_tokens ?? c.input,
    cache_creation_input_tokens: turn.usage?.cache_creation_input_tokens ?? c.cacheCreation,
    cache_read_input_tokens: turn.usage?.cache_read_input_tokens ?? c.cacheRead,
    output_tokens: turn.usage?.output_tokens ?? outputTokens(turn),
  };
}

function streamFrames(body: any, turn: Turn, c: Counted, n: number, server: ServerSide = {}): string[] {
  const usage = usageOf(c, turn);
  const blocks = blocksOf(turn, n, server.block);
  const stop = server.stop ?? turn.stopReason ?? (turn.toolUses?.length ? "tool_use" : "end_turn");
  const frames = [
    frame(
      {
        type: "message_start",
        message: {
          id: `msg_fake_${n}`,
          type: "message",
          role: "assistant",
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      },
      "message_start",
    ),
    frame({ type: "ping" }, "ping"),
  ];
  blocks.forEach((b, index) => {
    frames.push(frame({ type: "content_block_start", index, content_block: b.start }, "content_block_start"));
    for (const delta of b.deltas) frames.push(frame({ type: "content_block_delta", index, delta }, "content_block_delta"));
    frames.push(frame({ type: "content_block_stop", index }, "content_block_stop"));
  });
  frames.push(frame({ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { ...usage, ...(server.iterations ? { iterations: server.iterations } : {}) }, context_management: server.applied ? { applied_edits: server.applied } : null }, "message_delta"));
  frames.push(frame({ type: "message_stop" }, "message_stop"));
  return frames;
}

function httpFault(res: ServerResponse, f: Fault): boolean {
  switch (f.fault) {
    case "rate_limit":
      sendJson(res, 429, errorBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), retryAfterHeaders(f));
      return true;
    case "overloaded":
      sendJson(res, 529, errorBody("overloaded_error", "Overloaded"), retryAfterHeaders(f));
      return true;
    case "server_error":
      sendJson(res, 500, errorBody("api_error", "Internal server error"));
      return true;
    case "status":
      sendJson(res, f.status, f.body, f.headers);
      return true;
    default:
      return false;
  }
}

export async function startFakeAnthropic(opts: FakeOptions = {}): Promise<FakeServer> {
  const script = scriptOf(opts.script);
  const window = opts.contextWindow ?? 200_000;
  const cache = opts.promptCache === false ? undefined : new PrefixCache();
  const requests: any[] = [];
  const log: RecordedRequest[] = [];
  const compactions = new CompactionLedger();

  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "").split("?")[0]!;
    const parsed = await readJson(req);
    log.push({ method: req.method ?? "", path, headers: req.headers, body: parsed.ok ? parsed.body : parsed.text });
    if (req.method !== "POST" || (path !== "/v1/messages" && path !== "/v1/messages/count_tokens")) {
      return sendJson(res, 404, errorBody("not_found_error", `Not found: ${req.method} ${path}`));
    }
    if (!authorized(req, opts.apiKey)) return sendJson(res, 401, errorBody("authentication_error", "invalid x-api-key"));
    if (opts.maxBodyBytes !== undefined && parsed.bytes > opts.maxBodyBytes) {
      return sendJson(res, 413, errorBody("request_too_large", "Request exceeds the maximum allowed number of bytes."));
    }
    if (!parsed.ok) return sendJson(res, 400, errorBody("invalid_request_error", "Request body is not valid JSON"));
    const body = parsed.body;
    if (path === "/v1/messages/count_tokens") return sendJson(res, 200, { input_tokens: anthropicInputTokens(body) });

    const index = requests.length;
    requests.push(body);
    const step = await script(body, index);
    const fault = isFault(step) ? step : undefined;
    let turn: Turn = fault ? (("turn" in fault && fault.turn) || { text: "partial reply that never finishes" }) : (step as Turn);
    await latency(opts, body, index, turn);
    if (fault && httpFault(res, fault)) return;

    const refused = compactions.check(Array.isArray(body.messages) ? body.messages : []);
    if (refused) return sendJson(res, 400, errorBody("invalid_request_error", refused));
    // Context management: what the server keeps, what its edits clear, and whether it compacts.
    const kept = keptMessages(Array.isArray(body.messages) ? body.messages : []);
    const edits = editsOf(body);
    const cleared = clearContext(kept, edits, (m) => anthropicInputTokens(body, m));
    const total = anthropicInputTokens(body, cleared.messages);
    if (total > window) return sendJson(res, 400, errorBody("invalid_request_error", anthropicTooLongMessage(total, window)));
    const server: ServerSide = cleared.applied.length > 0 ? { applied: cleared.applied } : {};
    let contextTokens = total;
    if (body.compaction?.type === "summarize" || (edits.compact && total > edits.compact.trigger)) {
      const summaryOnly = body.compaction?.type === "summarize" || edits.compact!.pause;
      server.block = compactions.block(summaryOf(kept));
      if (summaryOnly) server.stop = "compaction";
      contextTokens = unitTokens(anthropicUnits(body, [])[0]) + compactionTokens(server.block);
      server.iterations = [{ type: "compaction", input_tokens: total, output_tokens: compactionTokens(server.block), cache_read_input_tokens: 0, cache_creation_input_tokens: 0, cache_creation: null }];
      if (summaryOnly) turn = { ...turn, compactionOnly: true };
    }
    const maxTokens = Number(body.max_tokens ?? 0);
    if (opts.checkMaxTokens && total + maxTokens > window) {
      const msg = `input length and \`max_tokens\` exceed context limit: ${total} + ${maxTokens} > ${window}, decrease input length or \`max_tokens\` and try again`;
      return sendJson(res, 400, errorBody("invalid_request_error", msg));
    }
    const counted = server.block || server.applied ? { total: contextTokens, input: contextTokens, cacheRead: 0, cacheCreation: 0 } : count(body, cache);
    const n = index + 1;
    if (!body.stream) {
      if (fault) return void res.socket?.destroy(); // streamed faults without a stream: just drop
      const blocks = blocksOf(turn, n, server.block);
      return sendJson(
        res,
        200,
        {
          id: `msg_fake_${n}`,
          type: "message",
          role: "assistant",
          model: body.model,
          content: blocks.map((b) => b.final),
          stop_reason: server.stop ?? turn.stopReason ?? (turn.toolUses?.length ? "tool_use" : "end_turn"),
          stop_sequence: null,
          usage: { ...usageOf(counted, turn), ...(server.iterations ? { iterations: server.iterations } : {}) },
          ...(server.applied ? { context_management: { applied_edits: server.applied } } : {}),
        },
        { "request-id": `req_fake_${n}` },
      );
    }
    await playSse(
      res,
      {
        frames: streamFrames(body, turn, counted, n, server),
        malformed: `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"brok\n\n`,
        streamError: (type = "overloaded_error", message = "Overloaded") => frame(errorBody(type, message), "error"),
      },
      fault,
      opts.eventDelayMs,
    );
  };

  const { server, port } = await listen(handler);
  return { url: `http://127.0.0.1:${port}`, port, requests, log, close: closer(server), compactions };
}
