// fromOpenAI: OpenAI Chat Completions messages → lethe's Anthropic-shape history (see
// ./openai.ts for the mapping). The decoders are also what ./openai-to.ts checks its output
// against, to write a `lethe` extension only when the plain decoding would differ.
import { blocksOf } from "./blocks.ts";
import { show } from "./input.ts";
import type { ContentBlock, Message, ToolResultBlock, ToolResultContentBlock, ToolUseBlock } from "./types.ts";
import type {
  OpenAIAssistantMessage,
  OpenAIMessage,
  OpenAISystemMessage,
  OpenAIToolCall,
  OpenAIToolMessage,
  OpenAIUserMessage,
  OpenAIUserPart,
} from "./openai-types.ts";
import { type Obj, decodeArgs, decodeUserPart, encodeUserPart, fail, isObject, listLength, messageError, textsOf } from "./openai-shared.ts";

// ── assistant ─────────────────────────────────────────────────────────────────────

function decodeToolCall(c: OpenAIToolCall, i: number, k: number): ToolUseBlock {
  const ok = (c?.type === "function" || c?.type === undefined) && typeof c?.function?.name === "string";
  if (!ok || typeof c.function.arguments !== "string") fail("fromOpenAI", i, "has a malformed tool_call");
  // Some servers send calls without an id: give one (the tool messages that follow answer in order).
  const id = typeof c.id === "string" && c.id !== "" ? c.id : `call_${i}_${k}`;
  return { type: "tool_use", id, name: c.function.name, input: decodeArgs(c.function.arguments) };
}

export function decodeAssistant(m: OpenAIAssistantMessage, i: number): Message {
  const texts = textsOf(m.content, i);
  // The SDK's refusal (content null, refusal "…"): what the model said, kept as its text. Erased,
  // the user's request would be merged into the next one and sent again.
  const refusal = (m as { refusal?: unknown }).refusal;
  if (typeof refusal === "string" && refusal !== "" && texts.every((t) => t.trim() === "")) texts.splice(0, texts.length, refusal);
  const rawCalls: unknown = m.tool_calls;
  if (rawCalls != null && !Array.isArray(rawCalls)) fail("fromOpenAI", i, "has tool_calls that is not a list");
  const legacy = (m as { function_call?: { name?: unknown; arguments?: unknown } }).function_call;
  const listed = (m.tool_calls ?? []).map((c, k) => decodeToolCall(c, i, k));
  // The legacy function_call (before tool_calls) is one call.
  const calls = legacy && typeof legacy.name === "string" && listed.length === 0 ? [decodeToolCall({ type: "function", id: "", function: { name: legacy.name, arguments: typeof legacy.arguments === "string" ? legacy.arguments : "{}" } } as OpenAIToolCall, i, 0)] : listed;
  const rawExt: unknown = m.lethe;
  if (rawExt != null && (!isObject(rawExt) || (rawExt.blocks !== undefined && !Array.isArray(rawExt.blocks)))) fail("fromOpenAI", i, "has a malformed lethe extension");
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
    // An image or a document whose source its part carries: the source comes from the part.
    if ((s.type === "image" || s.type === "document") && !("source" in s)) return { ...s, source: next(s.type).source };
    // Any other block that took a part when it was sent (kept whole here): that part is its.
    if (encodeUserPart(s as unknown as ContentBlock)) k++;
    return s;
  });
  if (k !== decoded.length) fail("fromOpenAI", i, "has a lethe extension that does not match its content");
  return blocks as ContentBlock[];
}

// ── tool results ──────────────────────────────────────────────────────────────────

export function decodeTool(m: OpenAIToolMessage, i: number): ToolResultBlock {
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

function systemText(m: OpenAISystemMessage, i: number): string {
  return typeof m.content === "string" ? m.content : textsOf(m.content, i).join("\n");
}

/**
 * OpenAI Chat Completions messages → Anthropic-shape history. Leading system and developer
 * messages join (blank-line separated) into `system`; later ones stay in place, as user turns
 * whose text block carries `openai_role`.
 */
export function fromOpenAI(messages: readonly OpenAIMessage[]): { system?: string; messages: Message[] } {
  const n = listLength("fromOpenAI", messages, "chat messages");
  const out: Message[] = [];
  const system: string[] = [];
  let pending = new Set<string>();
  let pendingOrder: string[] = [];
  let pendingNames: string[] = [];
  const answered = new Set<string>();
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
  const one = (msg: OpenAIMessage, i: number): void => {
    let m = msg;
    if (!isObject(m)) fail("fromOpenAI", i, "is not an object");
    // The legacy role "function" (answering a function_call by name) is a tool message.
    const legacyName = (m as { role: unknown }).role === "function" ? (m as { name?: unknown }).name : undefined;
    if (legacyName !== undefined) m = { ...m, role: "tool" } as typeof m;
    switch (m.role) {
      case "system":
      case "developer":
        close();
        // Leading ones are the system prompt; one later in the conversation stays where it was,
        // as a user turn that remembers its role (toOpenAI sends it back as that role).
        if (out.length === 0) system.push(systemText(m, i));
        else out.push({ role: "user", content: [{ type: "text", text: systemText(m, i), openai_role: m.role } as ContentBlock] });
        pending = new Set();
        return;
      case "assistant": {
        close();
        const decoded = decodeAssistant(m, i);
        out.push(decoded);
        // The ids as decoded (synthesised for calls that came without one), in call order.
        pendingOrder = blocksOf(decoded).filter((b): b is ToolUseBlock => b.type === "tool_use").map((b) => b.id);
        pendingNames = blocksOf(decoded).filter((b): b is ToolUseBlock => b.type === "tool_use").map((b) => b.name);
        pending = new Set(pendingOrder);
        return;
      }
      case "tool": {
        // A result without an id (or the legacy role "function", answering by name) answers the
        // first call still waiting: rewrite it with that call's id.
        if (typeof m.tool_call_id !== "string" || legacyName !== undefined) {
          const k = pendingOrder.findIndex((id, j) => pending.has(id) && !answered.has(id) && (legacyName === undefined || pendingNames[j] === legacyName));
          if (k >= 0) m = { ...m, tool_call_id: pendingOrder[k]! };
        }
        if (typeof m.tool_call_id === "string") answered.add(m.tool_call_id);
        if (!pending.has(m.tool_call_id)) {
          const id = show(m.tool_call_id);
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
        fail("fromOpenAI", i, `has unknown role ${show((m as Obj).role)}`);
    }
  };
  for (let i = 0; i < n; i++) {
    try {
      one(messages[i]!, i);
    } catch (e) {
      throw messageError("fromOpenAI", i, e);
    }
  }
  close();
  return system.length > 0 ? { system: system.join("\n\n"), messages: out } : { messages: out };
}
