// A fake Anthropic Messages API on 127.0.0.1 for the benchmarks that drive a real client or the
// built CLI (bench:stall, bench:resume): POST /v1/messages (SSE streaming as the real API sends
// it, or one JSON message) and POST /v1/messages/count_tokens.
//
// Benchmarks do not import test/: this is the benchmarks' own copy of the part of the tests' fake
// server they use (no faults, thinking, authentication or image pricing). The token counts and
// the prompt cache follow the same rules as the tests' fake, so figures do not depend on which
// of the two served them:
//
// Tokens: exact o200k over a stable serialisation of the request, unit by unit: unit 0 is
// {system, tools}, then one unit per message (string content counted as one text block).
// Caching: with a cache_control breakpoint anywhere (or a top-level cache_control), the units up
// to the last breakpoint are cacheable; cache_read_input_tokens is the longest prefix an earlier
// request stored, cache_creation_input_tokens the rest of the cacheable part, input_tokens what
// follows the breakpoint. Without any breakpoint nothing is cached.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { countTokens } from "../../src/tokens/exact.ts";

/** One tool call the fake model makes. */
export interface FakeToolUse {
  name: string;
  input: unknown;
  id?: string;
}

/** One scripted model reply: text and/or tool calls (text "" when neither is given). */
export interface FakeTurn {
  text?: string;
  toolUses?: FakeToolUse[];
}

/** requestBody → the reply; `index` counts generation requests from 0. */
export type FakeScript = (body: any, index: number) => FakeTurn;

export interface FakeAnthropicOptions {
  /** Default: text "ok" to everything. */
  script?: FakeScript;
  /** Input tokens over this are refused (400 "prompt is too long"). Default 200,000. */
  contextWindow?: number;
  /** Wait before every response (ms, or per request). */
  latencyMs?: number | ((body: any, index: number) => number);
  /** Simulated prompt caching (default true). */
  promptCache?: boolean;
}

export interface FakeAnthropic {
  /** Base URL to hand the SDK. */
  url: string;
  port: number;
  /** Bodies of the generation requests (/v1/messages), in order. */
  requests: any[];
  close(): Promise<void>;
}

// ── tokens ────────────────────────────────────────────────────────────────────────

/** JSON with sorted keys and without cache_control: the same content always counts the same. */
function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => stableStringify(x === undefined ? null : x)).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).filter((k) => k !== "cache_control" && o[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

const memo = new Map<string, number>();

/** o200k tokens of one unit, memoised (a long session resends the same history every turn). */
function unitTokens(unit: unknown): number {
  const s = stableStringify(unit);
  let n = memo.get(s);
  if (n === undefined) {
    if (memo.size >= 10_000) memo.clear();
    memo.set(s, (n = countTokens(s)));
  }
  return n;
}

/** The units a request is counted and cached by. */
function units(body: any): unknown[] {
  const system = Array.isArray(body?.system) ? body.system.map((b: any) => b?.text ?? "").join("\n") : (body?.system ?? "");
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  return [
    { system, tools: body?.tools ?? [] },
    ...messages.map((m) => ({ role: m?.role, content: typeof m?.content === "string" ? [{ type: "text", text: m.content }] : m?.content })),
  ];
}

const inputTokens = (body: any): number => units(body).reduce<number>((s, u) => s + unitTokens(u), 0);

/** Prompt cache by whole units: a request reads the longest prefix of units an earlier one stored, per model. */
class PrefixCache {
  private readonly stored = new Set<string>();

  readAndStore(model: string, us: readonly unknown[], tokens: readonly number[], upto: number): number {
    const hashes: string[] = [];
    let h = createHash("sha256").update(`model:${model}`).digest("hex");
    for (const u of us.slice(0, upto)) hashes.push((h = createHash("sha256").update(h).update(stableStringify(u)).digest("hex")));
    let hit = 0;
    for (let i = 0; i < hashes.length; i++) if (this.stored.has(hashes[i]!)) hit = i + 1;
    for (const x of hashes) this.stored.add(x);
    let read = 0;
    for (let i = 0; i < hit; i++) read += tokens[i]!;
    return read;
  }
}

const hasCacheControl = (v: unknown): boolean =>
  Array.isArray(v) ? v.some(hasCacheControl) : v !== null && typeof v === "object" ? "cache_control" in v || Object.values(v).some(hasCacheControl) : false;

interface Usage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

function usageOf(body: any, cache: PrefixCache | undefined, turn: FakeTurn): Usage {
  const us = units(body);
  const tokens = us.map(unitTokens);
  const total = tokens.reduce((a, b) => a + b, 0);
  const output_tokens = outputTokens(turn);
  let upto = 0;
  if (cache) {
    if (body?.cache_control) upto = us.length;
    else {
      if (hasCacheControl(body?.system) || hasCacheControl(body?.tools)) upto = 1;
      (body?.messages ?? []).forEach((m: unknown, i: number) => {
        if (hasCacheControl(m)) upto = i + 2;
      });
    }
  }
  if (!cache || upto === 0) return { input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens };
  const cacheable = tokens.slice(0, upto).reduce((a, b) => a + b, 0);
  const read = cache.readAndStore(String(body?.model), us, tokens, upto);
  return { input_tokens: total - cacheable, cache_creation_input_tokens: cacheable - read, cache_read_input_tokens: read, output_tokens };
}

const argumentsOf = (t: FakeToolUse): string => JSON.stringify(t.input ?? {});

/** Output tokens of a turn: o200k of everything the model "wrote". */
function outputTokens(turn: FakeTurn): number {
  const parts = [turn.text ?? "", ...(turn.toolUses ?? []).map((t) => t.name + argumentsOf(t))];
  return Math.max(1, countTokens(parts.join("")));
}

// ── replies ───────────────────────────────────────────────────────────────────────

/** Split into about `n` pieces (at least one, never empty pieces unless s is empty). */
function pieces(s: string, n = 3): string[] {
  if (s.length === 0) return [""];
  const size = Math.max(1, Math.ceil(s.length / n));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

interface Block {
  start: Record<string, unknown>;
  deltas: Record<string, unknown>[];
  final: Record<string, unknown>;
}

function blocksOf(turn: FakeTurn, n: number): Block[] {
  const out: Block[] = [];
  if (turn.text !== undefined || !turn.toolUses?.length) {
    const text = turn.text ?? "";
    out.push({ start: { type: "text", text: "" }, deltas: pieces(text).map((t) => ({ type: "text_delta", text: t })), final: { type: "text", text } });
  }
  (turn.toolUses ?? []).forEach((t, i) => {
    const id = t.id ?? `toolu_fake_${n}_${i}`;
    const args = argumentsOf(t);
    out.push({
      start: { type: "tool_use", id, name: t.name, input: {} },
      deltas: [{ type: "input_json_delta", partial_json: "" }, ...pieces(args, 4).map((p) => ({ type: "input_json_delta", partial_json: p }))],
      final: { type: "tool_use", id, name: t.name, input: JSON.parse(args) },
    });
  });
  return out;
}

const frame = (data: unknown, event: string): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function streamFrames(body: any, turn: FakeTurn, usage: Usage, n: number): string[] {
  const stop = turn.toolUses?.length ? "tool_use" : "end_turn";
  const message = { id: `msg_fake_${n}`, type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } };
  const frames = [frame({ type: "message_start", message }, "message_start"), frame({ type: "ping" }, "ping")];
  blocksOf(turn, n).forEach((b, index) => {
    frames.push(frame({ type: "content_block_start", index, content_block: b.start }, "content_block_start"));
    for (const delta of b.deltas) frames.push(frame({ type: "content_block_delta", index, delta }, "content_block_delta"));
    frames.push(frame({ type: "content_block_stop", index }, "content_block_stop"));
  });
  frames.push(frame({ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage }, "message_delta"));
  frames.push(frame({ type: "message_stop" }, "message_stop"));
  return frames;
}

// ── HTTP ──────────────────────────────────────────────────────────────────────────

const errorBody = (type: string, message: string) => ({ type: "error", error: { type, message }, request_id: "req_fake" });

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data), ...headers });
  res.end(data);
}

async function readJson(req: IncomingMessage): Promise<{ ok: true; body: any } | { ok: false }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text === "") return { ok: true, body: undefined };
  try {
    return { ok: true, body: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

const write = (res: ServerResponse, s: string) => new Promise<void>((resolve) => res.write(s, () => resolve()));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function startFakeAnthropic(opts: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const script: FakeScript = opts.script ?? (() => ({ text: "ok" }));
  const window = opts.contextWindow ?? 200_000;
  const cache = opts.promptCache === false ? undefined : new PrefixCache();
  const requests: any[] = [];

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "").split("?")[0]!;
    const parsed = await readJson(req);
    if (req.method !== "POST" || (path !== "/v1/messages" && path !== "/v1/messages/count_tokens")) {
      return sendJson(res, 404, errorBody("not_found_error", `Not found: ${req.method} ${path}`));
    }
    if (!parsed.ok) return sendJson(res, 400, errorBody("invalid_request_error", "Request body is not valid JSON"));
    const body = parsed.body;
    if (path === "/v1/messages/count_tokens") return sendJson(res, 200, { input_tokens: inputTokens(body) });

    const index = requests.length;
    requests.push(body);
    const turn = script(body, index);
    const wait = typeof opts.latencyMs === "function" ? opts.latencyMs(body, index) : (opts.latencyMs ?? 0);
    if (wait > 0) await sleep(wait);

    const total = inputTokens(body);
    if (total > window) return sendJson(res, 400, errorBody("invalid_request_error", `prompt is too long: ${total} tokens > ${window} maximum`));
    const usage = usageOf(body, cache, turn);
    const n = index + 1;
    if (!body.stream) {
      const message = {
        id: `msg_fake_${n}`,
        type: "message",
        role: "assistant",
        model: body.model,
        content: blocksOf(turn, n).map((b) => b.final),
        stop_reason: turn.toolUses?.length ? "tool_use" : "end_turn",
        stop_sequence: null,
        usage,
      };
      return sendJson(res, 200, message, { "request-id": `req_fake_${n}` });
    }
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders();
    for (const f of streamFrames(body, turn, usage, n)) await write(res, f);
    res.end();
  };

  const server: Server = createServer((req, res) => {
    handler(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake server bug: ${(e as Error).message}` } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
