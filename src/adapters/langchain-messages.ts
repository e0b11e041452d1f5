// LangChain.js messages (@langchain/core: Human, AI with tool_calls, Tool, System) and lethe's, both
// ways: what lethe has no block for is carried as it came, and ids, kwargs and metadata go back.
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { LetheInputError } from "../messages/input.ts";
import type { ContentBlock, Message, ToolResultBlock, ToolResultContentBlock, ToolUseBlock } from "../messages/types.ts";

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A content block lethe has no block for, carried as it came. */
const OPAQUE = "lc_block";
const opaque = (block: unknown): ContentBlock => ({ type: OPAQUE, block }) as unknown as ContentBlock;

export function typeOf(m: BaseMessage): string {
  const t = (m as { type?: unknown }).type;
  if (typeof t === "string") return t;
  const get = (m as { _getType?: () => string })._getType;
  return typeof get === "function" ? get.call(m) : "unknown";
}

function imageBlock(url: string): ContentBlock {
  const m = /^data:([^;,]+);base64,/.exec(url);
  return m ? { type: "image", source: { type: "base64", media_type: m[1]!, data: url.slice(m[0].length) } } : { type: "image", source: { type: "url", url } };
}

/** LangChain content (a string or blocks) → lethe blocks. */
function blocksOf(content: unknown, where: string, skipToolBlocks = false): ContentBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw new LetheInputError(`${where}.content`, "must be a string or an array of content blocks");
  const out: ContentBlock[] = [];
  content.forEach((b, k) => {
    if (typeof b === "string") return void out.push({ type: "text", text: b });
    if (!isObj(b) || typeof b.type !== "string") throw new LetheInputError(`${where}.content[${k}]`, "must be a content block with a type");
    if (b.type === "text") out.push({ type: "text", text: String(b.text ?? "") });
    else if (b.type === "image_url") {
      const url = typeof b.image_url === "string" ? b.image_url : isObj(b.image_url) ? String(b.image_url.url ?? "") : "";
      out.push(url ? imageBlock(url) : opaque(b));
    } else if (b.type === "image" && (typeof b.data === "string" || typeof b.url === "string")) {
      const mime = String(b.mimeType ?? b.mime_type ?? "image/png");
      out.push(typeof b.data === "string" ? { type: "image", source: { type: "base64", media_type: mime, data: b.data } } : { type: "image", source: { type: "url", url: String(b.url) } });
    } else if (b.type === "reasoning" && typeof b.reasoning === "string") out.push({ type: "thinking", thinking: b.reasoning, lc_reasoning: true });
    else if (b.type === "thinking" && typeof b.thinking === "string") out.push({ type: "thinking", thinking: b.thinking, ...(typeof b.signature === "string" ? { signature: b.signature } : {}) });
    // The calls themselves are in tool_calls; a copy in the content would answer twice.
    else if (skipToolBlocks && (b.type === "tool_use" || b.type === "tool_call" || b.type === "function_call")) return;
    else out.push(opaque(b));
  });
  return out;
}

/** What of the LangChain message lethe must give back (ids, kwargs, metadata). */
function extrasOf(m: BaseMessage): Obj | undefined {
  const o = m as unknown as Obj;
  const extra: Obj = {};
  for (const k of ["id", "name", "additional_kwargs", "response_metadata"]) {
    const v = o[k];
    if (v !== undefined && !(isObj(v) && Object.keys(v).length === 0)) extra[k] = v;
  }
  return Object.keys(extra).length > 0 ? extra : undefined;
}

/** LangChain messages → lethe's history; leading system messages apart. */
export function fromLangChain(messages: readonly BaseMessage[]): { system: BaseMessage[]; history: Message[] } {
  if (!Array.isArray(messages)) throw new LetheInputError("messages", `must be an array of LangChain messages, got ${messages === null ? "null" : typeof messages}`);
  const system: BaseMessage[] = [];
  const history: Message[] = [];
  let leading = true;
  let lastWasTool = false;
  messages.forEach((raw: unknown, i) => {
    const where = `messages[${i}]`;
    if (!isObj(raw)) throw new LetheInputError(where, `must be a LangChain message, got ${raw === null ? "null" : typeof raw}`);
    const m = raw as unknown as BaseMessage;
    const type = typeOf(m);
    const content = (m as { content?: unknown }).content;
    if (type === "system") {
      lastWasTool = false;
      if (leading) return void system.push(m);
      return void history.push({ role: "user", content: [{ type: "text", text: typeof content === "string" ? content : JSON.stringify(content), lc_system: true }] });
    }
    leading = false;
    const extras = extrasOf(m);
    if (type === "human" || type === "generic") {
      const blocks = blocksOf(content, where);
      if (blocks.length === 0) blocks.push({ type: "text", text: "" });
      const last = history[history.length - 1];
      if (last && lastWasTool) (last.content as ContentBlock[]).push(...blocks);
      else history.push({ role: "user", content: blocks, ...(extras ? { lc: extras } : {}) } as Message);
      lastWasTool = false;
    } else if (type === "ai") {
      const calls = (m as { tool_calls?: unknown }).tool_calls;
      const blocks = blocksOf(content, where, Array.isArray(calls) && calls.length > 0);
      if (Array.isArray(calls)) {
        calls.forEach((c, k) => {
          if (!isObj(c) || typeof c.name !== "string") throw new LetheInputError(`${where}.tool_calls[${k}]`, "needs a name");
          const id = typeof c.id === "string" && c.id !== "" ? c.id : `lc_call_${i}_${k}`;
          blocks.push({ type: "tool_use", id, name: c.name, input: c.args ?? {} } as ToolUseBlock);
        });
      }
      history.push({ role: "assistant", content: blocks.length > 0 ? blocks : [{ type: "text", text: "" }], ...(extras ? { lc: extras } : {}) } as Message);
      lastWasTool = false;
    } else if (type === "tool") {
      const id = (m as { tool_call_id?: unknown }).tool_call_id;
      if (typeof id !== "string") throw new LetheInputError(`${where}.tool_call_id`, "must be the id of the call it answers");
      const blocks = blocksOf(content, where);
      const inner: ToolResultContentBlock[] = blocks.map((b): ToolResultContentBlock => (b.type === "text" || b.type === "image" ? b : { type: "text", text: JSON.stringify((b as unknown as Obj).block ?? b) }));
      const result: ToolResultBlock = { type: "tool_result", tool_use_id: id, content: typeof content === "string" ? content : inner };
      if ((m as { status?: unknown }).status === "error") result.is_error = true;
      if (extras) result.lc = extras;
      const last = history[history.length - 1];
      if (last && lastWasTool) (last.content as ContentBlock[]).push(result);
      else history.push({ role: "user", content: [result] });
      lastWasTool = true;
    } else throw new LetheInputError(`${where}.type`, `must be a human, ai, tool or system message, got ${JSON.stringify(type)}`);
  });
  return { system, history };
}

function lcContent(blocks: readonly ContentBlock[]): string | Obj[] {
  const parts: Obj[] = [];
  for (const b of blocks) {
    const o = b as unknown as Obj;
    if (b.type === "text") parts.push({ type: "text", text: b.text });
    else if (b.type === "image") {
      const s = b.source as Obj;
      parts.push({ type: "image_url", image_url: { url: s.type === "base64" ? `data:${String(s.media_type)};base64,${String(s.data)}` : String(s.url) } });
    } else if (b.type === "thinking") {
      parts.push(o.lc_reasoning ? { type: "reasoning", reasoning: b.thinking } : { type: "thinking", thinking: b.thinking, ...(b.signature ? { signature: b.signature } : {}) });
    } else if ((b.type as string) === OPAQUE) parts.push(o.block as Obj);
    else if (b.type !== "tool_use" && b.type !== "tool_result" && b.type !== "redacted_thinking") parts.push({ type: "text", text: typeof o.text === "string" ? o.text : `[${String(o.type)}]` });
  }
  // One text block is a string, as LangChain writes it.
  if (parts.length === 1 && parts[0]!.type === "text") return String(parts[0]!.text);
  return parts.length === 0 ? "" : parts;
}

/** lethe's history → LangChain messages: each tool result a ToolMessage, before the user's other blocks. */
export function toLangChain(history: readonly Message[]): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (const m of history) {
    const lc = ((m as unknown as Obj).lc ?? {}) as Obj;
    const blocks: ContentBlock[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (m.role === "assistant") {
      const calls = blocks.filter((b): b is ToolUseBlock => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, args: (isObj(b.input) ? b.input : { input: b.input }) as Obj, type: "tool_call" as const }));
      out.push(new AIMessage({ content: lcContent(blocks) as never, tool_calls: calls, ...(lc as object) }));
      continue;
    }
    const rest: ContentBlock[] = [];
    for (const b of blocks) {
      const o = b as unknown as Obj;
      if (b.type === "tool_result") {
        const content = typeof b.content === "string" || b.content === undefined ? (b.content ?? "") : lcContent(b.content as ContentBlock[]);
        out.push(new ToolMessage({ content: content as never, tool_call_id: b.tool_use_id, ...(b.is_error ? { status: "error" as const } : {}), ...((o.lc as object) ?? {}) }));
      } else if (b.type === "text" && o.lc_system === true) out.push(new SystemMessage(b.text));
      else rest.push(b);
    }
    if (rest.length > 0) out.push(new HumanMessage({ content: lcContent(rest) as never, ...(lc as object) }));
  }
  return out;
}

