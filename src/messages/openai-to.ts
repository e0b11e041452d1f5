// toOpenAI: lethe's Anthropic-shape history → OpenAI Chat Completions messages (see ./openai.ts
// for the mapping). Each encoder decodes its own output (./openai-from.ts) and adds a `lethe`
// extension only when that would not give the original back.
import { LetheInputError, checkBlock, show } from "./input.ts";
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
import { type Obj, decodeArgs, decodeUserPart, encodeArgs, encodeUserPart, fail, isObject, listLength, messageError } from "./openai-shared.ts";
import { decodeAssistant, decodeTool } from "./openai-from.ts";
import { describeMedia } from "./media.ts";

export interface ToOpenAIOptions {
  /** Emitted as a leading `system` message. */
  system?: string;
  /** Only standard OpenAI fields: no `lethe`, and `reasoning_content` only as `reasoning` says. Lossy. */
  strict?: boolean;
  /**
   * In strict mode, which assistant messages carry their thinking back as `reasoning_content`:
   * "none" (default; OpenAI itself), "tool-turns" (DeepSeek's thinking mode requires it, possibly
   * empty, on every assistant message with tool calls, and ignores it elsewhere) or "all".
   */
  reasoning?: "none" | "tool-turns" | "all";
}

// ── assistant ─────────────────────────────────────────────────────────────────────

function encodeAssistant(m: Message, i: number, strict: boolean, reasoning: ToOpenAIOptions["reasoning"] = "none"): OpenAIAssistantMessage {
  if (typeof m.content === "string") {
    const out: OpenAIAssistantMessage = { role: "assistant", content: m.content };
    if (!strict) out.lethe = { string: true };
    return out;
  }
  const texts: string[] = [];
  const thinking: string[] = [];
  const calls: OpenAIToolCall[] = [];
  for (const b of m.content) {
    if (b.type === "text") texts.push(strict ? withSources(b) : b.text);
    else if (b.type === "thinking") thinking.push(b.thinking);
    else if (b.type === "tool_use") {
      calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: encodeArgs(b.input) } });
    } else if (b.type === "tool_result") fail("toOpenAI", i, "(assistant) holds a tool_result block");
    else if (strict && b.type === "compaction") {
      const text = plainText(b); // a failed compaction (no content) is a no-op: nothing to send
      if (text !== undefined) texts.push(text);
    } else if (strict && b.type !== "redacted_thinking") texts.push(placeholder(b));
  }
  const out: OpenAIAssistantMessage = {
    role: "assistant",
    content: texts.length === 0 ? null : texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: "text", text })),
  };
  if (calls.length > 0) out.tool_calls = calls;
  if (strict) {
    const carry = calls.length > 0 || (reasoning === "all" && thinking.length > 0 && texts.length > 0);
    if (reasoning !== "none" && carry) {
      out.reasoning_content = thinking.join("\n\n");
      return out;
    }
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
  const pairs = blocks.map((b) => [b, strict ? strictUserPart(b) : encodeUserPart(b)] as const);
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
  // An image or a PDF whose part gives its source back whole: the source is not copied (a PDF
  // would travel twice).
  const { source, ...rest } = b as ImageBlock;
  const back = decodeUserPart(part, -1) as Obj;
  return (b.type === "image" || (b as Obj).type === "document") && back.type === b.type && isDeepStrictEqual(back.source, source) ? rest : b;
}

// ── tool results ──────────────────────────────────────────────────────────────────

function encodeResultContent(c: ToolResultBlock["content"], strict = false): string | OpenAITextPart[] {
  if (c === undefined || c === null) return "";
  if (typeof c === "string") return c;
  let image = 0;
  return c.flatMap((b) => {
    if (b.type === "text") return [{ type: "text" as const, text: b.text }];
    // Tool messages take only text: an image goes in the user message right after the tool
    // messages (see toOpenAI); the result says where.
    if (strict && b.type === "image") return [{ type: "text" as const, text: `[${describeMedia(b)}: image ${++image} of this result, attached to the next user message]` }];
    if (!strict) return [];
    // A RAG tool's search results and text documents: their text is what the model needs.
    return [{ type: "text" as const, text: plainText(b as ContentBlock) ?? placeholder(b as ContentBlock) }];
  });
}

/** Images inside tool results, in order, as user image parts (strict: tool messages are text only). */
function resultImages(results: ToolResultBlock[]): OpenAIUserPart[] {
  const parts: OpenAIUserPart[] = [];
  for (const r of results) {
    if (!Array.isArray(r.content)) continue;
    for (const b of r.content) {
      if (b.type !== "image") continue;
      const part = encodeUserPart(b);
      if (part) parts.push({ type: "text", text: `[image from the result of tool call ${r.tool_use_id}]` }, part);
    }
  }
  return parts;
}

/**
 * The text of a block that is text to the model whatever its wrapping: a search result (its title,
 * source and text content), a document whose source is text or a list of text blocks. Undefined
 * for anything else (a PDF, an image).
 */
function plainText(b: ContentBlock): string | undefined {
  const d = b as Obj;
  const texts = (c: unknown): string | undefined => {
    if (typeof c === "string") return c;
    if (!Array.isArray(c)) return undefined;
    const parts = c.map((x: Obj) => (isObject(x) && typeof x.text === "string" ? x.text : "")).filter((t: string) => t !== "");
    return parts.length > 0 ? parts.join("\n") : undefined;
  };
  const title = typeof d.title === "string" ? ` "${d.title}"` : "";
  // Anthropic's server-side compaction: its summary is what the model knew of the earlier turns.
  if (d.type === "compaction") return typeof d.content === "string" && d.content !== "" ? `[summary of the earlier conversation]\n${d.content}` : undefined;
  if (d.type === "search_result") {
    const body = texts(d.content);
    return body === undefined ? undefined : `[search result${title}${typeof d.source === "string" ? ` (${d.source})` : ""}]\n${body}`;
  }
  if (d.type === "document" && isObject(d.source)) {
    const body = d.source.type === "text" && typeof d.source.data === "string" ? d.source.data : d.source.type === "content" ? texts(d.source.content) : undefined;
    return body === undefined ? undefined : `${title ? `[document${title}]\n` : ""}${body}`;
  }
  return undefined;
}

/** A user block in strict mode: what the target can take, else a short visible placeholder. */
function strictUserPart(b: ContentBlock): OpenAIUserPart | undefined {
  // Reasoning (opaque or not) is the model's, meaningful to one provider only: not user content.
  if (b.type === "thinking" || b.type === "redacted_thinking") return undefined;
  const text = plainText(b);
  if (text !== undefined) return { type: "text", text };
  if (b.type === "text") return { type: "text", text: withSources(b) };
  return encodeUserPart(b) ?? { type: "text", text: placeholder(b) };
}

/** A text block's citations as a short sources line (strict OpenAI has no citation field). */
function withSources(b: ContentBlock & { type: "text" }): string {
  const cites = Array.isArray(b.citations) ? (b.citations as Obj[]) : [];
  if (cites.length === 0) return b.text;
  const names = [...new Set(cites.map((c) => String(c.url ?? c.document_title ?? c.title ?? c.source ?? "").slice(0, 120)).filter((x) => x !== ""))];
  return names.length ? `${b.text} [sources: ${names.join("; ")}]` : b.text;
}

/** What a block the target cannot carry was, in one line (never an empty message instead). */
function placeholder(b: ContentBlock): string {
  const d = b as Obj;
  const t = String(d.type);
  if (t === "image" || t === "document") return `[${describeMedia(d as { type: string })} not sent: this server does not accept it]`;
  if (t === "server_tool_use" || t === "mcp_tool_use") {
    const args = JSON.stringify(d.input ?? {});
    return `[${t === "mcp_tool_use" ? `MCP tool ${String(d.server_name ?? "")}/` : "server tool "}${String(d.name)} called with ${args.length > 300 ? `${args.slice(0, 300)}…` : args}]`;
  }
  if (t.endsWith("_tool_result")) {
    const c = d.content;
    const n = Array.isArray(c) ? `${c.length} item${c.length === 1 ? "" : "s"}` : typeof c === "string" ? `${c.length} chars` : "a result";
    const text = Array.isArray(c) ? c.map((x: Obj) => (typeof x?.text === "string" ? x.text : typeof x?.title === "string" ? `${x.title}${typeof x.url === "string" ? ` (${x.url})` : ""}` : "")).filter(Boolean).join("; ") : typeof c === "string" ? c : "";
    return `[${t.replace(/_/g, " ")} (${n})${text ? `: ${text.length > 1500 ? `${text.slice(0, 1500)}…` : text}` : ""}]`;
  }
  return `[${t} block not sent: this server does not accept it]`;
}

function encodeTool(b: ToolResultBlock, i: number, strict: boolean): OpenAIToolMessage {
  const content = encodeResultContent(b.content, strict);
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

/** A text block that was a system or developer message mid-conversation (fromOpenAI). */
const isRoleText = (b: ContentBlock): boolean => b.type === "text" && ((b as Obj).openai_role === "system" || (b as Obj).openai_role === "developer");

/** Anthropic-shape history → OpenAI Chat Completions messages. */
export function toOpenAI(messages: readonly Message[], opts: ToOpenAIOptions = {}): OpenAIMessage[] {
  const n = listLength("toOpenAI", messages, "messages");
  const strict = opts.strict === true;
  const out: OpenAIMessage[] = [];
  if (opts.system !== undefined) out.push({ role: "system", content: opts.system });
  let pending = new Set<string>(); // tool_use ids a tool message may still answer
  const one = (m: Message, i: number): void => {
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
      out.push(encodeAssistant(m, i, strict, opts.reasoning));
      pending = new Set(typeof m.content === "string" ? [] : m.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])));
      return;
    }
    if (m.role !== "user") fail("toOpenAI", i, `has unknown role ${show((m as Obj).role)}`);
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
      // A system or developer message from the middle of an OpenAI conversation goes back as itself,
      // in place (also when repair has merged it with the user's text next to it).
      if (results.length === 0 && rest.some(isRoleText)) {
        let run: ContentBlock[] = [];
        const flush = () => {
          if (run.length > 0) out.push(encodeUser(run, strict, false));
          run = [];
        };
        for (const b of rest) {
          if (!isRoleText(b)) run.push(b);
          else {
            flush();
            out.push({ role: (b as Obj).openai_role as "system", content: (b as { text: string }).text });
          }
        }
        flush();
        pending.clear();
        return;
      }
      for (const r of results) {
        if (!pending.has(r.tool_use_id)) {
          const id = show(r.tool_use_id);
          fail("toOpenAI", i, `has a tool_result for ${id}, which the preceding assistant message did not call`);
        }
        out.push(encodeTool(r, i, strict));
      }
      const images = strict ? resultImages(results) : [];
      if (results.length === 0 || rest.length > 0 || images.length > 0) {
        const user = encodeUser(rest, strict, results.length > 0 && images.length === 0);
        if (images.length > 0) user.content = [...images, ...(typeof user.content === "string" ? [{ type: "text" as const, text: user.content }] : user.content)];
        // Never an empty user message: nothing to say after tool results is no message; a user
        // turn that had only what the server cannot take says so.
        if (strict && user.content.length === 0 && results.length === 0) user.content = "[empty message]";
        if (!strict || user.content.length > 0) {
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
  };
  for (let i = 0; i < n; i++) {
    try {
      one(messages[i]!, i);
    } catch (e) {
      throw messageError("toOpenAI", i, e);
    }
  }
  return out;
}

function extOf(m: OpenAIMessage): LetheExtension {
  return ((m as OpenAIUserMessage | OpenAIToolMessage).lethe ??= {});
}
