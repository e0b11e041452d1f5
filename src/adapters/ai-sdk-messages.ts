// Vercel AI SDK ModelMessage[] ⇄ lethe Message[], both ways, for ai@5 and ai@6 (the shapes are
// written out here, structurally, so that neither version is a dependency).
//
// What the SDK has and lethe's model does not is carried on the blocks and restored on the way
// back: providerOptions (Anthropic signatures, cache control), a tool result's exact `output`
// (json, error, content lists) while compaction has not replaced it, parts lethe has no block for
// (provider-executed results, approvals, assistant files) as opaque blocks. So a history that goes
// through unchanged comes back as it came; what a layer rewrote comes back as text.
import type { ContentBlock, ImageBlock, Message, ToolResultBlock, ToolResultContentBlock, ToolUseBlock } from "../messages/types.ts";
import { LetheInputError } from "../messages/input.ts";

type Obj = Record<string, unknown>;

/** The SDK's message shapes (ai@5 and ai@6), loosely: every part keeps what it carries. */
export type AIModelMessage =
  | { role: "system"; content: string; providerOptions?: Obj }
  | { role: "user"; content: string | AIPart[]; providerOptions?: Obj }
  | { role: "assistant"; content: string | AIPart[]; providerOptions?: Obj }
  | { role: "tool"; content: AIPart[]; providerOptions?: Obj };

/** One part of an AI SDK message (text, image, file, reasoning, tool-call, tool-result, …), kept loosely typed so ai@5 and ai@6 both fit. */
export interface AIPart {
  type: string;
  [key: string]: unknown;
}

/** A part lethe has no block for, carried as it came. */
export const OPAQUE = "ai_sdk_part";

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function base64Of(data: unknown): string | undefined {
  if (typeof data === "string") {
    const m = /^data:[^;,]*;base64,/.exec(data);
    return m ? data.slice(m[0].length) : /^[A-Za-z0-9+/=\s]+$/.test(data.slice(0, 200)) ? data : undefined;
  }
  if (data instanceof Uint8Array) return Buffer.from(data).toString("base64");
  if (data instanceof ArrayBuffer) return Buffer.from(new Uint8Array(data)).toString("base64");
  return undefined;
}

function urlOf(data: unknown): string | undefined {
  if (data instanceof URL) return data.href;
  if (typeof data === "string" && /^https?:\/\//.test(data)) return data;
  return undefined;
}

/** The image type from its first bytes (the SDK lets mediaType be omitted). */
function sniffImage(base64: string): string {
  const head = Buffer.from(base64.slice(0, 24), "base64");
  if (head[0] === 0x89 && head[1] === 0x50) return "image/png";
  if (head[0] === 0xff && head[1] === 0xd8) return "image/jpeg";
  if (head.subarray(0, 3).toString("latin1") === "GIF") return "image/gif";
  if (head.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return "image/png";
}

const opaque = (part: AIPart): ContentBlock => ({ type: OPAQUE, part }) as unknown as ContentBlock;
const withOptions = <T extends Obj>(block: T, part: AIPart): T => (part.providerOptions !== undefined ? { ...block, ai_provider_options: part.providerOptions } : block);

// ── SDK → lethe ─────────────────────────────────────────────────────────────────────

function userPart(p: AIPart, where: string): ContentBlock {
  if (p.type === "text") return withOptions({ type: "text", text: String(p.text ?? "") }, p) as ContentBlock;
  if (p.type === "image") {
    const b64 = base64Of(p.image);
    const url = b64 === undefined ? urlOf(p.image) : undefined;
    if (b64 !== undefined) return withOptions({ type: "image", source: { type: "base64", media_type: typeof p.mediaType === "string" ? p.mediaType : sniffImage(b64), data: b64 } }, p) as ContentBlock;
    if (url !== undefined) return withOptions({ type: "image", source: { type: "url", url } }, p) as ContentBlock;
    return opaque(p);
  }
  if (p.type === "file" && p.mediaType === "application/pdf") {
    const b64 = base64Of(p.data);
    if (b64 !== undefined) {
      return withOptions({ type: "document", source: { type: "base64", media_type: "application/pdf", data: b64 }, ...(typeof p.filename === "string" ? { title: p.filename, ai_filename: p.filename } : {}) }, p) as unknown as ContentBlock;
    }
  }
  if (typeof p.type !== "string") throw new LetheInputError(where, "a part without a type");
  return opaque(p);
}

/** What a tool result's output reads as in lethe (text, or text and images). */
function outputContent(output: Obj): { content: ToolResultBlock["content"]; isError: boolean } {
  const v = output.value;
  switch (output.type) {
    case "text":
      return { content: String(v ?? ""), isError: false };
    case "error-text":
      return { content: String(v ?? ""), isError: true };
    case "json":
      return { content: JSON.stringify(v ?? null), isError: false };
    case "error-json":
      return { content: JSON.stringify(v ?? null), isError: true };
    case "execution-denied":
      return { content: `[the tool call was not run: execution denied${typeof output.reason === "string" ? ` (${output.reason})` : ""}]`, isError: true };
    case "content": {
      const blocks: ToolResultContentBlock[] = [];
      for (const item of Array.isArray(v) ? v : []) {
        if (!isObj(item)) continue;
        if (item.type === "text") blocks.push({ type: "text", text: String(item.text ?? "") });
        else if ((item.type === "media" || item.type === "image-data") && typeof item.data === "string" && String(item.mediaType ?? "image/").startsWith("image/")) {
          blocks.push({ type: "image", source: { type: "base64", media_type: String(item.mediaType ?? sniffImage(item.data)), data: item.data } });
        } else blocks.push({ type: "text", text: `[${String(item.type)}${typeof item.mediaType === "string" ? ` ${item.mediaType}` : ""}${typeof item.filename === "string" ? ` "${item.filename}"` : ""}${typeof item.url === "string" ? ` ${item.url}` : ""}]` });
      }
      return { content: blocks.length > 0 ? blocks : "", isError: false };
    }
    default:
      return { content: JSON.stringify(output), isError: false };
  }
}

function toolResult(p: AIPart, where: string): ToolResultBlock {
  if (typeof p.toolCallId !== "string") throw new LetheInputError(where, "a tool-result part without a toolCallId");
  const output = isObj(p.output) ? p.output : { type: "json", value: (p.output ?? p.result ?? null) as unknown };
  const { content, isError } = outputContent(output);
  const block: ToolResultBlock = { type: "tool_result", tool_use_id: p.toolCallId, content, ai_output: output, ai_tool_name: p.toolName };
  if (isError) block.is_error = true;
  return withOptions(block, p);
}

function assistantPart(p: AIPart, where: string): ContentBlock {
  switch (p.type) {
    case "text":
      return withOptions({ type: "text", text: String(p.text ?? "") }, p) as ContentBlock;
    case "reasoning": {
      const anthropic = isObj(p.providerOptions) && isObj(p.providerOptions.anthropic) ? p.providerOptions.anthropic : undefined;
      const block: Obj = { type: "thinking", thinking: String(p.text ?? "") };
      if (typeof anthropic?.signature === "string") block.signature = anthropic.signature;
      return withOptions(block, p) as ContentBlock;
    }
    case "tool-call": {
      if (typeof p.toolCallId !== "string" || typeof p.toolName !== "string") throw new LetheInputError(where, "a tool-call part needs toolCallId and toolName strings");
      const block: ToolUseBlock = { type: "tool_use", id: p.toolCallId, name: p.toolName, input: p.input ?? p.args ?? {} };
      if (p.providerExecuted !== undefined) block.ai_provider_executed = p.providerExecuted;
      return withOptions(block, p);
    }
    default:
      if (typeof p.type !== "string") throw new LetheInputError(where, "a part without a type");
      return opaque(p);
  }
}

/**
 * SDK messages → lethe's history. Leading system messages are returned apart (the adapter sends
 * them as they are, ahead of the history); a system message later in the list becomes a marked
 * user text and goes back out as a system message.
 */
export function fromModelMessages(messages: readonly AIModelMessage[]): { system: AIModelMessage[]; history: Message[] } {
  if (!Array.isArray(messages)) throw new LetheInputError("messages", `must be an array of ModelMessage, got ${messages === null ? "null" : typeof messages}`);
  const system: AIModelMessage[] = [];
  const history: Message[] = [];
  let leading = true;
  let lastWasTool = false;
  messages.forEach((raw: unknown, i) => {
    const where = `messages[${i}]`;
    if (!isObj(raw)) throw new LetheInputError(where, `must be a message object, got ${raw === null ? "null" : typeof raw}`);
    const m = raw as AIModelMessage;
    const content = (m as unknown as Obj).content;
    if (m.role === "system") {
      lastWasTool = false;
      if (leading) system.push(m);
      else history.push({ role: "user", content: [{ type: "text", text: String(content ?? ""), ai_system: true, ...(m.providerOptions ? { ai_provider_options: m.providerOptions } : {}) }] });
      return;
    }
    leading = false;
    const parts = (role: string): AIPart[] => {
      if (typeof content === "string") return [{ type: "text", text: content }];
      if (!Array.isArray(content)) throw new LetheInputError(`${where}.content`, `must be a string or an array of parts (${role})`);
      return content.map((p, k) => {
        if (!isObj(p) || typeof p.type !== "string") throw new LetheInputError(`${where}.content[${k}]`, "must be a part with a type");
        return p as AIPart;
      });
    };
    if (m.role === "user") {
      const blocks = parts("user").map((p, k) => userPart(p, `${where}.content[${k}]`));
      // A user message right after a tool message joins it (lethe: results first, then the text),
      // as toModelMessages splits them again.
      const last = history[history.length - 1];
      if (last && lastWasTool) (last.content as ContentBlock[]).push(...blocks);
      else history.push({ role: "user", content: blocks });
      lastWasTool = false;
      return;
    }
    lastWasTool = m.role === "tool";
    if (m.role === "assistant") history.push({ role: "assistant", content: parts("assistant").map((p, k) => assistantPart(p, `${where}.content[${k}]`)) });
    else if (m.role === "tool") {
      history.push({ role: "user", content: parts("tool").map((p, k) => (p.type === "tool-result" ? toolResult(p, `${where}.content[${k}]`) : opaque(p))) });
    } else throw new LetheInputError(`${where}.role`, `must be system, user, assistant or tool, got ${JSON.stringify((m as unknown as Obj).role)}`);
  });
  return { system, history };
}

// ── lethe → SDK ─────────────────────────────────────────────────────────────────────

const restoreOptions = (b: Obj, part: AIPart): AIPart => (b.ai_provider_options !== undefined ? { ...part, providerOptions: b.ai_provider_options } : part);

/** The output to send back: the original while the content is still what it read as, else text. */
function outputOf(b: ToolResultBlock): Obj {
  const original = isObj(b.ai_output) ? b.ai_output : undefined;
  if (original) {
    const { content, isError } = outputContent(original);
    if (JSON.stringify(content) === JSON.stringify(b.content ?? "") && isError === (b.is_error === true)) return original;
  }
  if (typeof b.content === "string" || b.content === undefined) return { type: b.is_error ? "error-text" : "text", value: b.content ?? "" };
  const value = b.content.map((c) =>
    c.type === "image" && (c as ImageBlock).source.type === "base64"
      ? { type: "media", data: (c.source as { data: string }).data, mediaType: (c.source as { media_type: string }).media_type }
      : { type: "text", text: c.type === "text" ? c.text : JSON.stringify(c) },
  );
  return { type: "content", value };
}

function userPartOut(b: ContentBlock): AIPart | undefined {
  const o = b as unknown as Obj;
  if (b.type === "text") return restoreOptions(o, { type: "text", text: b.text });
  if (b.type === "image") {
    const s = b.source as Obj;
    if (s.type === "base64") return restoreOptions(o, { type: "image", image: s.data, mediaType: s.media_type });
    if (s.type === "url") return restoreOptions(o, { type: "image", image: s.url });
  }
  if ((b.type as string) === OPAQUE) return o.part as AIPart;
  if ((b.type as string) === "document" && isObj(o.source) && o.source.type === "base64") {
    return restoreOptions(o, { type: "file", data: o.source.data, mediaType: String(o.source.media_type ?? "application/pdf"), ...(typeof o.ai_filename === "string" ? { filename: o.ai_filename } : {}) });
  }
  if (b.type === "thinking" || b.type === "redacted_thinking") return undefined;
  // Any other block a layer may have left (a document as text, a placeholder): its text.
  return { type: "text", text: typeof o.text === "string" ? o.text : `[${b.type}]` };
}

function assistantPartOut(b: ContentBlock): AIPart | undefined {
  const o = b as unknown as Obj;
  switch (b.type) {
    case "text":
      return restoreOptions(o, { type: "text", text: b.text });
    case "thinking":
      return restoreOptions(o, { type: "reasoning", text: b.thinking });
    case "redacted_thinking":
      return undefined;
    case "tool_use": {
      const part: AIPart = { type: "tool-call", toolCallId: b.id, toolName: b.name, input: b.input };
      if (o.ai_provider_executed !== undefined) part.providerExecuted = o.ai_provider_executed;
      return restoreOptions(o, part);
    }
    default:
      if ((b.type as string) === OPAQUE) return o.part as AIPart;
      return { type: "text", text: typeof o.text === "string" ? o.text : `[${b.type}]` };
  }
}

/** Parts of a tool output's content that are images (what a chat-completions provider would send as JSON text). */
const isImagePart = (item: unknown): item is Obj =>
  isObj(item) && (((item.type === "media" || item.type === "image-data") && typeof item.data === "string" && String(item.mediaType ?? "image/").startsWith("image/")) || item.type === "image-url");

/**
 * A tool output without its images, and the images as user-message parts. A chat-completions
 * provider (@ai-sdk/openai-compatible, @ai-sdk/openai's chat model) sends a tool's "content"
 * output as a JSON string: a 360 KB screenshot becomes ~330k tokens of base64 text. In a user
 * message the same image is an image (a few hundred tokens), as lethe prices it.
 */
function splitImages(output: Obj, toolCallId: string): { output: Obj; images: AIPart[] } {
  if (output.type !== "content" || !Array.isArray(output.value) || !output.value.some(isImagePart)) return { output, images: [] };
  const images: AIPart[] = [];
  const value = (output.value as unknown[]).map((item) => {
    if (!isImagePart(item)) return item;
    const mediaType = typeof item.mediaType === "string" ? item.mediaType : item.type === "image-url" ? undefined : sniffImage(String(item.data));
    images.push(item.type === "image-url" ? { type: "image", image: String(item.url) } : { type: "image", image: String(item.data), ...(mediaType ? { mediaType } : {}) });
    return { type: "text", text: `[image${mediaType ? ` ${mediaType}` : ""}: attached in the next user message, with the other images of tool call ${toolCallId}]` };
  });
  return { output: { ...output, value }, images };
}

/** How toModelMessages writes images a tool returned: in the tool result, or in a user message after it. */
export interface ToModelOptions {
  /** "user": for providers that send a tool's content output as JSON text (chat-completions APIs). Default "inline". */
  toolImages?: "inline" | "user";
}

/** lethe's history → SDK messages: tool results as `tool` messages ahead of the user's other blocks. */
export function toModelMessages(history: readonly Message[], opts: ToModelOptions = {}): AIModelMessage[] {
  const names = new Map<string, string>();
  const out: AIModelMessage[] = [];
  for (const m of history) {
    const blocks: ContentBlock[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (m.role === "assistant") {
      for (const b of blocks) if (b.type === "tool_use") names.set(b.id, b.name);
      const parts = blocks.map(assistantPartOut).filter((p): p is AIPart => p !== undefined);
      out.push({ role: "assistant", content: parts.length > 0 ? parts : [{ type: "text", text: "" }] });
      continue;
    }
    const tool: AIPart[] = [];
    const user: AIPart[] = [];
    const images: AIPart[] = [];
    for (const b of blocks) {
      const o = b as unknown as Obj;
      if (b.type === "tool_result") {
        let output = outputOf(b);
        if (opts.toolImages === "user") {
          const split = splitImages(output, b.tool_use_id);
          output = split.output;
          images.push(...split.images);
        }
        tool.push(restoreOptions(o, { type: "tool-result", toolCallId: b.tool_use_id, toolName: names.get(b.tool_use_id) ?? String(o.ai_tool_name ?? "tool"), output }));
      } else if ((b.type as string) === OPAQUE && isObj(o.part) && String(o.part.type).startsWith("tool-approval")) {
        tool.push(o.part as AIPart);
      } else if (b.type === "text" && o.ai_system === true) {
        out.push({ role: "system", content: b.text, ...(isObj(o.ai_provider_options) ? { providerOptions: o.ai_provider_options } : {}) });
      } else {
        const p = userPartOut(b);
        if (p) user.push(p);
      }
    }
    if (tool.length > 0) out.push({ role: "tool", content: tool });
    if (images.length > 0) user.unshift({ type: "text", text: "The images the tool calls above returned:" }, ...images);
    if (user.length > 0) out.push({ role: "user", content: user });
  }
  return out;
}
