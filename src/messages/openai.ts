// Converters between lethe's Anthropic-shape messages and OpenAI Chat Completions messages.
//
// Anthropic → OpenAI → Anthropic is lossless. Whatever the OpenAI shape cannot say rides in
// the optional `lethe` property (see LetheExtension), written only when the plain decoding
// of the OpenAI message would not give the original back. `strict: true` drops `lethe` and
// `reasoning_content` for servers that reject unknown fields; that trip is lossy (is_error
// becomes an "Error: " prefix, signatures, redacted thinking and block order are lost).
//
// Mapping: tool_use → tool_calls (arguments = JSON.stringify(input)); a user message's
// tool_result blocks → one `tool` message each, then its other blocks → one `user` message;
// thinking → `reasoning_content`; images → image_url (base64 as a data: URL). Back from
// OpenAI, a run of tool messages and the user message right after it form one user message.
//
// Tool call arguments that are not a JSON object (invalid JSON, "", arrays, …) decode to
// input {"_raw": arguments}, and such an input encodes back to the raw string, so nothing
// is lost and the agent still sees what the model wrote.
import { isDeepStrictEqual } from "node:util";
import type {
  ContentBlock,
  ImageBlock,
  Message,
  ToolResultBlock,
  ToolResultContentBlock,
  ToolUseBlock,
} from "./types.ts";
import type {
  LetheExtension,
  OpenAIAssistantMessage,
  OpenAIImagePart,
  OpenAIMessage,
  OpenAISystemMessage,
  OpenAITextPart,
  OpenAIToolCall,
  OpenAIToolMessage,
  OpenAIUserMessage,
  OpenAIUserPart,
} from "./openai-types.ts";

export type * from "./openai-types.ts";

export interface ToOpenAIOptions {
  /** Emitted as a leading `system` message. */
  system?: string;
  /** Only standard OpenAI fields: no `lethe`, no `reasoning_content`. Lossy. */
  strict?: boolean;
}

type Obj = Record<string, unknown>;
type Side = "toOpenAI" | "fromOpenAI";

function fail(side: Side, i: number, what: string): never {
  throw new Error(`${side}: message ${i} ${what}`);
}

function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// ── tool call arguments ────────────────────────────────────────────────────────────

function isRawInput(v: unknown): v is { _raw: string } {
  return isObject(v) && typeof v._raw === "string" && Object.keys(v).length === 1;
}

function encodeArgs(input: unknown): string {
  if (isRawInput(input)) return input._raw;
  return JSON.stringify(input) ?? "{}";
}

function decodeArgs(args: string): unknown {
  try {
    const v: unknown = JSON.parse(args);
    if (isObject(v)) return v;
  } catch {
    // not JSON: kept raw below
  }
  return { _raw: args };
}

// ── images and content parts ──────────────────────────────────────────────────────

function encodeImage(source: ImageBlock["source"]): OpenAIImagePart | undefined {
  const s = source as Obj;
  if (s.type === "base64" && typeof s.media_type === "string" && typeof s.data === "string") {
    return { type: "image_url", image_url: { url: `data:${s.media_type};base64,${s.data}` } };
  }
  if (s.type === "url" && typeof s.url === "string") return { type: "image_url", image_url: { url: s.url } };
  return undefined;
}

function decodeImage(url: string): ImageBlock["source"] {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { type: "base64", media_type: m[1]!, data: m[2]! } : { type: "url", url };
}

function encodeUserPart(b: ContentBlock): OpenAIUserPart | undefined {
  if (b.type === "text") return { type: "text", text: b.text };
  if (b.type === "image") return encodeImage(b.source);
  return undefined;
}

function decodeUserPart(p: OpenAIUserPart, i: number): ContentBlock {
  if (p?.type === "text" && typeof p.text === "string") return { type: "text", text: p.text };
  if (p?.type === "image_url" && typeof p.image_url?.url === "string") {
    return { type: "image", source: decodeImage(p.image_url.url) };
  }
  return fail("fromOpenAI", i, `has an unsupported content part ${partType(p)}`);
}

function partType(p: unknown): string {
  return isObject(p) ? JSON.stringify(p.type) : String(p);
}

/** Texts of a string | text-part list | null content. */
function textsOf(content: string | OpenAITextPart[] | null | undefined, i: number): string[] {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) fail("fromOpenAI", i, "has content that is neither a string nor a part list");
  return content.map((p) =>
    p?.type === "text" && typeof p.text === "string"
      ? p.text
      : fail("fromOpenAI", i, `has an unsupported content part ${partType(p)}`),
  );
}

// ── assistant ─────────────────────────────────────────────────────────────────────

function encodeAssistant(m: Message, i: number, strict: boolean): OpenAIAssistantMessage {
  if (typeof m.content === "string") {
    const out: OpenAIAssistantMessage = { role: "assistant", content: m.content };
    if (!strict) out.lethe = { string: true };
    return out;
  }
  const texts: string[] = [];
  const thinking: string[] = [];
  const calls: OpenAIToolCall[] = [];
  for (const b of m.content) {
    if (b.type === "text") texts.push(b.text);
    else if (b.type === "thinking") thinking.push(b.thinking);
    else if (b.type === "tool_use") {
      calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: encodeArgs(b.input) } });
    } else if (b.type === "tool_result") fail("toOpenAI", i, "(assistant) holds a tool_result block");
  }
  const out: OpenAIAssistantMessage = {
    role: "assistant",
    content: texts.length === 0 ? null : texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: "text", text })),
  };
  if (calls.length > 0) out.tool_calls = calls;
  if (strict) return out;
  if (thinking.length > 0) out.reasoning_content = thinking.join("\n\n");
  if (!isDeepStrictEqual(decodeAssistant(out, i).content, m.content)) {
    out.lethe = { blocks: m.content.map((b) => stripAssistantBlock(b, thinking.length === 1)) };
  }
  return out;
}

/** The block minus what the OpenAI message carries; a lone thinking text is in reasoning_content. */
function stripAssistantBlock(b: ContentBlock, loneThinking: boolean): Obj {
  if (b.type === "text") {
    const { text: _text, ...rest } = b;
    return rest;
  }
  if (b.type === "thinking" && loneThinking) {
    const { thinking: _thinking, ...rest } = b;
    return rest;
  }
  if (b.type === "tool_use") {
    const { id: _id, name: _name, input, ...rest } = b;
    return isDeepStrictEqual(decodeArgs(encodeArgs(input)), input) ? rest : { ...rest, input };
  }
  return b;
}

function decodeToolCall(c: OpenAIToolCall, i: number): ToolUseBlock {
  const ok = c?.type === "function" && typeof c.id === "string" && typeof c.function?.name === "string";
  if (!ok || typeof c.function.arguments !== "string") fail("fromOpenAI", i, "has a malformed tool_call");
  return { type: "tool_use", id: c.id, name: c.function.name, input: decodeArgs(c.function.arguments) };
}

function decodeAssistant(m: OpenAIAssistantMessage, i: number): Message {
  const texts = textsOf(m.content, i);
  const calls = (m.tool_calls ?? []).map((c) => decodeToolCall(c, i));
  const reasoning = typeof m.reasoning_content === "string" ? m.reasoning_content : undefined;
  const ext = m.lethe;
  if (ext?.string) {
    if (typeof m.content !== "string") fail("fromOpenAI", i, "has lethe.string but no string content");
    return { role: "assistant", content: m.content };
  }
  if (!ext?.blocks) {
    const content: ContentBlock[] = reasoning ? [{ type: "thinking", thinking: reasoning }] : [];
    for (const text of texts) content.push({ type: "text", text });
    return { role: "assistant", content: [...content, ...calls] };
  }
  let t = 0;
  let c = 0;
  const content = ext.blocks.map((s): Obj => {
    if (s.type === "text") return { ...s, text: texts[t++] ?? fail("fromOpenAI", i, "has more lethe text blocks than texts") };
    if (s.type === "thinking") return "thinking" in s ? s : { ...s, thinking: reasoning ?? "" };
    if (s.type !== "tool_use") return s;
    const call = calls[c++] ?? fail("fromOpenAI", i, "has more lethe tool_use blocks than tool_calls");
    return { ...s, id: call.id, name: call.name, input: "input" in s ? s.input : call.input };
  });
  if (t !== texts.length || c !== calls.length) fail("fromOpenAI", i, "has a lethe extension that does not match its content");
  return { role: "assistant", content: content as ContentBlock[] };
}

// ── user ──────────────────────────────────────────────────────────────────────────

/** A user message from non-tool_result blocks; `asString` turns one text into plain content. */
function encodeUser(blocks: ContentBlock[], strict: boolean, asString: boolean): OpenAIUserMessage {
  const pairs = blocks.map((b) => [b, encodeUserPart(b)] as const);
  const parts = pairs.flatMap(([, p]) => (p ? [p] : []));
  const only = parts.length === 1 ? parts[0]! : undefined;
  const out: OpenAIUserMessage = { role: "user", content: asString && only?.type === "text" ? only.text : parts };
  if (!strict && !isDeepStrictEqual(parts.map((p) => decodeUserPart(p, -1)), blocks)) {
    out.lethe = { blocks: pairs.map(([b, p]) => stripUserBlock(b, p)) };
  }
  return out;
}

function stripUserBlock(b: ContentBlock, part: OpenAIUserPart | undefined): Obj {
  if (!part) return b;
  if (b.type === "text") {
    const { text: _text, ...rest } = b;
    return rest;
  }
  const { source, ...rest } = b as ImageBlock;
  return part.type === "image_url" && isDeepStrictEqual(decodeImage(part.image_url.url), source) ? rest : b;
}

function decodeUserBlocks(m: OpenAIUserMessage, i: number): ContentBlock[] {
  if (typeof m.content !== "string" && !Array.isArray(m.content)) {
    fail("fromOpenAI", i, "has content that is neither a string nor a part list");
  }
  const parts: OpenAIUserPart[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
  const decoded = parts.map((p) => decodeUserPart(p, i));
  const ext = m.lethe?.blocks;
  if (!ext) return decoded;
  let k = 0;
  const next = (type: string): Obj => {
    const b = decoded[k++];
    return b?.type === type ? b : fail("fromOpenAI", i, `has a lethe ${type} block with no ${type} part to match`);
  };
  const blocks = ext.map((s): Obj => {
    if (s.type === "text") return { ...s, text: next("text").text };
    if (s.type !== "image") return s;
    if (!("source" in s)) return { ...s, source: next("image").source };
    if (encodeImage(s.source as ImageBlock["source"])) next("image"); // it still took a part
    return s;
  });
  if (k !== decoded.length) fail("fromOpenAI", i, "has a lethe extension that does not match its content");
  return blocks as ContentBlock[];
}

// ── tool results ──────────────────────────────────────────────────────────────────

function encodeResultContent(c: ToolResultBlock["content"]): string | OpenAITextPart[] {
  if (c === undefined || c === null) return "";
  if (typeof c === "string") return c;
  return c.flatMap((b) => (b.type === "text" ? [{ type: "text" as const, text: b.text }] : []));
}

function encodeTool(b: ToolResultBlock, i: number, strict: boolean): OpenAIToolMessage {
  const content = encodeResultContent(b.content);
  const out: OpenAIToolMessage = { role: "tool", tool_call_id: b.tool_use_id, content };
  if (strict) {
    if (b.is_error) {
      out.content = typeof content === "string" ? `Error: ${content}` : [{ type: "text", text: "Error: " }, ...content];
    }
    return out;
  }
  const plain = decodeTool(out, i);
  if (!isDeepStrictEqual(plain, b)) out.lethe = { blocks: [stripResult(b, plain.content)] };
  return out;
}

/** The tool_result minus its id and, when carried exactly, its content; content: null = it had none. */
function stripResult(b: ToolResultBlock, carried: ToolResultBlock["content"]): Obj {
  const { tool_use_id: _id, content, ...rest } = b;
  if (content === undefined) return { ...rest, content: null };
  return isDeepStrictEqual(carried, content) ? rest : { ...rest, content };
}

function decodeTool(m: OpenAIToolMessage, i: number): ToolResultBlock {
  const content: ToolResultBlock["content"] =
    typeof m.content === "string"
      ? m.content
      : textsOf(m.content, i).map((text): ToolResultContentBlock => ({ type: "text", text }));
  const s = m.lethe?.blocks?.[0];
  if (!s) return { type: "tool_result", tool_use_id: m.tool_call_id, content };
  const { content: kept, ...rest } = s;
  const out = { ...rest, type: "tool_result", tool_use_id: m.tool_call_id } as ToolResultBlock;
  if (!("content" in s)) out.content = content;
  else if (kept !== null) out.content = kept as ToolResultBlock["content"];
  return out;
}

// ── whole histories ───────────────────────────────────────────────────────────────

/** Anthropic-shape history → OpenAI Chat Completions messages. */
export function toOpenAI(messages: readonly Message[], opts: ToOpenAIOptions = {}): OpenAIMessage[] {
  const strict = opts.strict === true;
  const out: OpenAIMessage[] = [];
  if (opts.system !== undefined) out.push({ role: "system", content: opts.system });
  let pending = new Set<string>(); // tool_use ids a tool message may still answer
  messages.forEach((m, i) => {
    if (!isObject(m)) fail("toOpenAI", i, "is not an object");
    if (m.role === "assistant") {
      out.push(encodeAssistant(m, i, strict));
      pending = new Set(typeof m.content === "string" ? [] : m.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])));
      return;
    }
    if (m.role !== "user") fail("toOpenAI", i, `has unknown role ${JSON.stringify((m as Obj).role)}`);
    const start = out.length;
    const afterTool = out.at(-1)?.role === "tool"; // fromOpenAI would join it to those tool messages
    if (typeof m.content === "string") {
      out.push({ role: "user", content: m.content });
      pending.clear();
    } else {
      if (!Array.isArray(m.content)) fail("toOpenAI", i, "has content that is neither a string nor a block list");
      const results: ToolResultBlock[] = [];
      const rest: ContentBlock[] = [];
      for (const b of m.content) {
        if (b?.type === "tool_result") results.push(b);
        else if (b?.type === "tool_use") fail("toOpenAI", i, "(user) holds a tool_use block");
        else rest.push(b);
      }
      for (const r of results) {
        if (!pending.has(r.tool_use_id)) {
          const id = JSON.stringify(r.tool_use_id);
          fail("toOpenAI", i, `has a tool_result for ${id}, which the preceding assistant message did not call`);
        }
        out.push(encodeTool(r, i, strict));
      }
      if (results.length === 0 || rest.length > 0) {
        const user = encodeUser(rest, strict, results.length > 0);
        // strict: a remainder with nothing expressible would be an empty user message
        if (!(strict && results.length > 0 && user.content.length === 0)) {
          out.push(user);
          pending.clear();
        }
      }
      const order = m.content.map((b) => (b.type === "tool_result" ? "t" : "u")).join("");
      if (!strict && results.length > 0 && order !== "t".repeat(results.length) + "u".repeat(rest.length)) {
        extOf(out[start]!).order = order;
      }
    }
    if (!strict && afterTool) extOf(out[start]!).split = true;
  });
  return out;
}

function extOf(m: OpenAIMessage): LetheExtension {
  return ((m as OpenAIUserMessage | OpenAIToolMessage).lethe ??= {});
}

function systemText(m: OpenAISystemMessage, i: number): string {
  return typeof m.content === "string" ? m.content : textsOf(m.content, i).join("\n");
}

/**
 * OpenAI Chat Completions messages → Anthropic-shape history. System and developer
 * messages, wherever they are, join (blank-line separated) into `system`.
 */
export function fromOpenAI(messages: readonly OpenAIMessage[]): { system?: string; messages: Message[] } {
  const out: Message[] = [];
  const system: string[] = [];
  let pending = new Set<string>();
  let group: { at: number; results: ToolResultBlock[]; order: string | undefined } | undefined;
  const close = (rest: ContentBlock[] = []): void => {
    if (!group) return;
    const { at, results, order } = group;
    group = undefined;
    if (order === undefined) return void out.push({ role: "user", content: [...results, ...rest] });
    if (order.length !== results.length + rest.length || order.replace(/u/g, "").length !== results.length) {
      fail("fromOpenAI", at, "has a lethe.order that does not match its group");
    }
    let t = 0;
    let u = 0;
    out.push({ role: "user", content: [...order].map((c) => (c === "t" ? results[t++]! : rest[u++]!)) });
  };
  messages.forEach((m, i) => {
    if (!isObject(m)) fail("fromOpenAI", i, "is not an object");
    switch (m.role) {
      case "system":
      case "developer":
        close();
        system.push(systemText(m, i));
        pending = new Set();
        return;
      case "assistant":
        close();
        out.push(decodeAssistant(m, i));
        pending = new Set((m.tool_calls ?? []).map((c) => c.id));
        return;
      case "tool": {
        if (!pending.has(m.tool_call_id)) {
          const id = JSON.stringify(m.tool_call_id);
          fail("fromOpenAI", i, `(tool) answers tool_call_id ${id}, which no preceding assistant tool_call has`);
        }
        if (m.lethe?.split) close();
        const r = decodeTool(m, i);
        if (group) group.results.push(r);
        else group = { at: i, results: [r], order: m.lethe?.order };
        return;
      }
      case "user":
        pending = new Set();
        if (group && !m.lethe?.split) return close(decodeUserBlocks(m, i));
        close();
        // a plain string stays a string: Message allows it and it round-trips exactly
        out.push({ role: "user", content: typeof m.content === "string" && !m.lethe?.blocks ? m.content : decodeUserBlocks(m, i) });
        return;
      default:
        fail("fromOpenAI", i, `has unknown role ${JSON.stringify((m as Obj).role)}`);
    }
  });
  close();
  return system.length > 0 ? { system: system.join("\n\n"), messages: out } : { messages: out };
}
