// OpenAI's Responses API items and lethe's messages, both ways (issue 24); model/openai-responses.ts
// and lethe/openai's createResponsesAdapter drive them.
//
//   message (user)            → a user message: input_text, input_image
//   message (assistant)       → assistant text blocks (the item's id kept, and sent back with it)
//   reasoning                 → a thinking block holding the item verbatim (`responses_item`): its
//                               encrypted_content is sent back exactly as it came, never edited
//   function_call             → tool_use (call_id is the id; the item's own id kept)
//   function_call_output      → a user tool_result
//   any other item            → kept verbatim in an assistant block and sent back as it came
//
// Calls pair by call_id, as tool_use and tool_result pair by id.
import type OpenAI from "openai";
import { LetheInputError } from "./input.ts";
import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from "./types.ts";

type Item = OpenAI.Responses.ResponseInputItem;
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A block holding an item lethe has no block for, sent back as it came. */
const OPAQUE = "responses_item";

function parseArgs(args: unknown): unknown {
  if (typeof args !== "string") return args ?? {};
  try {
    return JSON.parse(args);
  } catch {
    return { _raw: args };
  }
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p: Obj) => (isObj(p) && typeof p.text === "string" ? p.text : isObj(p) && typeof p.refusal === "string" ? p.refusal : "")).join("");
}

function userBlocks(content: unknown): ContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  const out: ContentBlock[] = [];
  for (const p of Array.isArray(content) ? (content as Obj[]) : []) {
    if (!isObj(p)) continue;
    if (p.type === "input_text" && typeof p.text === "string") out.push({ type: "text", text: p.text });
    else if (p.type === "input_image" && typeof p.image_url === "string") {
      const m = /^data:([^;,]+);base64,/.exec(p.image_url);
      out.push(m ? { type: "image", source: { type: "base64", media_type: m[1]!, data: p.image_url.slice(m[0].length) } } : { type: "image", source: { type: "url", url: p.image_url } });
    } else out.push({ type: OPAQUE, part: p } as unknown as ContentBlock);
  }
  return out;
}

/** Responses items (a response's output, or an input list) → lethe's history. */
export function fromResponses(items: readonly unknown[]): Message[] {
  if (!Array.isArray(items)) throw new LetheInputError("fromResponses", `needs a list of Responses items, got ${items === null ? "null" : typeof items}`);
  const out: Message[] = [];
  const push = (role: "user" | "assistant", blocks: ContentBlock[]) => {
    const last = out.at(-1);
    // Items of one turn (reasoning, calls, text) make one message; results of one turn, one.
    if (last && last.role === role && Array.isArray(last.content)) (last.content as ContentBlock[]).push(...blocks);
    else out.push({ role, content: blocks });
  };
  items.forEach((raw, i) => {
    if (!isObj(raw)) throw new LetheInputError(`fromResponses: item ${i}`, "must be an object");
    const item = raw;
    const type = item.type ?? (typeof item.role === "string" ? "message" : undefined);
    if (type === "message") {
      // The item's id goes back with it: a reasoning item must be followed by the very item (by id) that followed it.
      if (item.role === "assistant") push("assistant", [{ type: "text", text: textOf(item.content), ...(typeof item.id === "string" ? { responses_id: item.id } : {}) } as ContentBlock]);
      else if (item.role === "user") push("user", userBlocks(item.content));
      else throw new LetheInputError(`fromResponses: item ${i}.role`, `must be "user" or "assistant" (pass instructions as \`instructions\`), got ${JSON.stringify(item.role)}`);
    } else if (type === "reasoning") {
      const summary = Array.isArray(item.summary) ? (item.summary as Obj[]).map((s) => (typeof s?.text === "string" ? s.text : "")).join("\n") : "";
      push("assistant", [{ type: "thinking", thinking: summary, [OPAQUE]: item } as unknown as ContentBlock]);
    } else if (type === "function_call") {
      if (typeof item.call_id !== "string" || typeof item.name !== "string") throw new LetheInputError(`fromResponses: item ${i}`, "a function_call needs a call_id and a name");
      push("assistant", [{ type: "tool_use", id: item.call_id, name: item.name, input: parseArgs(item.arguments), ...(typeof item.id === "string" ? { responses_id: item.id } : {}) } as ToolUseBlock]);
    } else if (type === "function_call_output") {
      if (typeof item.call_id !== "string") throw new LetheInputError(`fromResponses: item ${i}`, "a function_call_output needs the call_id it answers");
      const output = typeof item.output === "string" ? item.output : textOf(item.output);
      push("user", [{ type: "tool_result", tool_use_id: item.call_id, content: output } as ToolResultBlock]);
    } else push("assistant", [{ type: OPAQUE, item } as unknown as ContentBlock]);
  });
  return out;
}

/** lethe's history → Responses input items (send with `store: false`: the reasoning items carry their encrypted content). */
export function toResponses(history: readonly Message[]): Item[] {
  const out: Item[] = [];
  history.forEach((m, i) => {
    const blocks: ContentBlock[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (m.role === "assistant") {
      let text = "";
      const flush = () => {
        if (text) out.push({ role: "assistant", content: text });
        text = "";
      };
      for (const b of blocks) {
        const o = b as unknown as Obj;
        if (b.type === "text" && typeof o.responses_id === "string") {
          flush();
          out.push({ type: "message", id: o.responses_id, role: "assistant", status: "completed", content: [{ type: "output_text", text: b.text, annotations: [] }] } as Item);
        } else if (b.type === "text") text += b.text;
        else if (b.type === "thinking" && isObj(o[OPAQUE])) (flush(), out.push(o[OPAQUE] as unknown as Item)); // verbatim, never edited
        else if (b.type === "tool_use") {
          flush();
          out.push({ type: "function_call", call_id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}), ...(typeof o.responses_id === "string" ? { id: o.responses_id } : {}) } as Item);
        } else if ((b.type as string) === OPAQUE && isObj(o.item)) (flush(), out.push(o.item as unknown as Item));
      }
      flush();
      return;
    }
    if (m.role !== "user") throw new LetheInputError(`toResponses: message ${i}.role`, `must be "user" or "assistant", got ${JSON.stringify((m as unknown as Obj).role)}`);
    const parts: Obj[] = [];
    for (const b of blocks) {
      const o = b as unknown as Obj;
      if (b.type === "tool_result") {
        const c = b.content;
        const output = typeof c === "string" || c === undefined ? (c ?? "") : c.map((x) => (x.type === "text" ? x.text : `[${x.type}]`)).join("\n");
        out.push({ type: "function_call_output", call_id: b.tool_use_id, output });
      } else if (b.type === "text") parts.push({ type: "input_text", text: b.text });
      else if (b.type === "image") {
        const s = b.source as Obj;
        parts.push({ type: "input_image", detail: "auto", image_url: s.type === "base64" ? `data:${String(s.media_type)};base64,${String(s.data)}` : String(s.url) });
      } else if ((b.type as string) === OPAQUE && isObj(o.part)) parts.push(o.part);
    }
    if (parts.length > 0) out.push({ role: "user", content: parts } as unknown as Item);
  });
  return out;
}
