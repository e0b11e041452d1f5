// toOpenAI: lethe's Anthropic-shape history → OpenAI Chat Completions messages (see ./openai.ts
// for the mapping). Each encoder decodes its own output (./openai-from.ts) and adds a `lethe`
// extension only when that would not give the original back.
import { LetheInputError, checkBlock } from "./input.ts";
import { isDeepStrictEqual } from "node:util";
import type { ContentBlock, ImageBlock, Message, ToolResultBlock } from "./types.ts";
import type {
  LetheExtension,
  OpenAIAssistantMessage,
  OpenAIMessage,
  OpenAITextPart,
  OpenAIToolCall,
  OpenAIToolMessage,
  OpenAIUserMessage,
  OpenAIUserPart,
} from "./openai-types.ts";
import { type Obj, decodeArgs, decodeImage, decodeUserPart, encodeArgs, encodeUserPart, fail, isObject } from "./openai-shared.ts";
import { decodeAssistant, decodeTool } from "./openai-from.ts";

export interface ToOpenAIOptions {
  /** Emitted as a leading `system` message. */
  system?: string;
  /** Only standard OpenAI fields: no `lethe`, no `reasoning_content`. Lossy. */
  strict?: boolean;
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
  if (strict) {
    // An assistant turn that is only reasoning (cut off by max_tokens while still thinking) must
    // not go out as content null without tool calls (servers refuse it), nor lose the reasoning:
    // send the reasoning so far as its text.
    if (texts.length === 0 && calls.length === 0) out.content = thinking.length > 0 ? `[my reasoning so far, cut off by the output limit]\n${thinking.join("\n\n")}` : "";
    return out;
  }
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

// ── whole histories ───────────────────────────────────────────────────────────────

/** Anthropic-shape history → OpenAI Chat Completions messages. */
export function toOpenAI(messages: readonly Message[], opts: ToOpenAIOptions = {}): OpenAIMessage[] {
  if (!Array.isArray(messages as unknown)) throw new LetheInputError("toOpenAI: messages", `must be an array of messages, got ${messages === null ? "null" : typeof messages}`);
  const strict = opts.strict === true;
  const out: OpenAIMessage[] = [];
  if (opts.system !== undefined) out.push({ role: "system", content: opts.system });
  let pending = new Set<string>(); // tool_use ids a tool message may still answer
  messages.forEach((m, i) => {
    if (!isObject(m)) fail("toOpenAI", i, "is not an object");
    const c = (m as { content?: unknown }).content;
    if (typeof c !== "string" && !Array.isArray(c)) fail("toOpenAI", i, "has content that is neither a string nor a list of blocks");
    if (Array.isArray(c)) {
      c.forEach((b, k) => {
        try {
          checkBlock(b, `block ${k}`);
        } catch (e) {
          if (!(e instanceof LetheInputError)) throw e;
          fail("toOpenAI", i, `has a malformed ${e.message.replace(/^lethe: /, "")}`);
        }
      });
    }
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
