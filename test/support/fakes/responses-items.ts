// The fake Responses API's items (./responses.ts): the output items of a scripted turn, the SSE
// events that stream them, and the checks the real API runs on the items sent back. Test support.
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { argumentsOf, frame, pieces, type Turn } from "./common.ts";

/** A scripted reply; `refusal` makes the message a refusal content part. */
export type ResponsesTurn = Turn & { refusal?: string };

/** What the server remembers of each reasoning item it emitted (the real API keeps it inside encrypted_content). */
export interface Emitted {
  item: Record<string, unknown>;
  /** The id of the item that followed it in its response: it must follow it in any input. */
  next?: string;
  /** The reasoning tokens it stands for (the model reads them again when it comes back). */
  tokens: number;
}

export interface ItemBook {
  emitted: Map<string, Emitted>;
  /** Output item id → the reasoning item emitted before it in the same response. */
  reasoningOf: Map<string, string>;
}

export const newBook = (): ItemBook => ({ emitted: new Map(), reasoningOf: new Map() });

const hex = (s: string, n = 24) => createHash("sha256").update(s).digest("hex").slice(0, n);

/** The output items of one reply, recorded in `book`. `encrypted`: the request asked for reasoning.encrypted_content. */
export function outputItems(turn: ResponsesTurn, n: number, o: { reasoning: boolean; encrypted: boolean; reasoningTokens: number }, book: ItemBook): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (turn.thinking && o.reasoning) {
    const id = `rs_${hex(`rs${n}`)}`;
    // Opaque to the client; what the server would decrypt. Verified by deep equality with what was sent.
    const enc = `enc_${Buffer.from(createHash("sha256").update(`${id}:${turn.thinking}`).digest()).toString("base64")}`;
    out.push({ id, type: "reasoning", summary: [{ type: "summary_text", text: turn.thinking }], ...(o.encrypted ? { encrypted_content: enc } : {}) });
  }
  if (turn.text || turn.refusal) {
    const part = turn.refusal ? { type: "refusal", refusal: turn.refusal } : { type: "output_text", text: turn.text, annotations: [], logprobs: [] };
    out.push({ id: `msg_${hex(`msg${n}`)}`, type: "message", status: "completed", role: "assistant", content: [part] });
  }
  (turn.toolUses ?? []).forEach((t, i) => {
    out.push({ id: `fc_${hex(`fc${n}_${i}`)}`, type: "function_call", status: "completed", arguments: argumentsOf(t), call_id: t.id ?? `call_${hex(`call${n}_${i}`, 20)}`, name: t.name });
  });
  const rs = out[0]?.type === "reasoning" ? (out[0].id as string) : undefined;
  if (rs) {
    book.emitted.set(rs, { item: out[0]!, next: out[1]?.id as string | undefined, tokens: o.reasoningTokens });
    for (const item of out.slice(1)) book.reasoningOf.set(item.id as string, rs);
  }
  return out;
}

/** An error the real API answers with: status, message, code, param. */
export interface ItemError {
  status: number;
  message: string;
  code: string | null;
}

const typeOf = (item: any): string | undefined => item?.type ?? (typeof item?.role === "string" ? "message" : undefined);

/**
 * The real API's checks on the input items: a reasoning item must be one it emitted, unedited
 * (with store: false, its encrypted_content is the only copy), and followed by the item that
 * followed it; an output item sent back with its id needs its reasoning item before it; a
 * function_call_output needs its function_call earlier in the input.
 */
export function checkInput(items: any[], book: ItemBook, store: boolean): ItemError | undefined {
  const calls = new Set<string>();
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const type = typeOf(item);
    if (type === "reasoning") {
      const known = book.emitted.get(item.id);
      if (!known || (!store && typeof item.encrypted_content !== "string")) {
        const why = store ? "" : " Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.";
        return { status: 404, message: `Item with id '${item.id}' not found.${why}`, code: null };
      }
      if (item.encrypted_content !== undefined && !isDeepStrictEqual(item, known.item)) {
        return { status: 400, message: `The encrypted content for item ${item.id} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`, code: "invalid_encrypted_content" };
      }
      if (known.next !== undefined && items[i + 1]?.id !== known.next) {
        return { status: 400, message: `Item '${item.id}' of type 'reasoning' was provided without its required following item.`, code: null };
      }
    } else if ((type === "function_call" || type === "message") && typeof item.id === "string") {
      const rs = book.reasoningOf.get(item.id);
      if (rs && !items.slice(0, i).some((x) => x?.type === "reasoning" && x.id === rs)) {
        return { status: 400, message: `Item '${item.id}' of type '${type}' was provided without its required 'reasoning' item: '${rs}'.`, code: null };
      }
    }
    if (type === "function_call") calls.add(item.call_id);
    if (type === "function_call_output" && !calls.has(item.call_id)) {
      return { status: 400, message: `No tool call found for function call output with call_id ${item.call_id}.`, code: null };
    }
  }
  return undefined;
}

/** The SSE events of a response, as OpenAI sends them (`event:` names, `type` and `sequence_number` in each). */
export function responseFrames(base: Record<string, unknown>, final: Record<string, unknown>): string[] {
  let seq = 0;
  const frames: string[] = [];
  const emit = (type: string, data: Record<string, unknown>) => frames.push(frame({ type, ...data, sequence_number: seq++ }, type));
  const started = { ...base, status: "in_progress", output: [], usage: null };
  emit("response.created", { response: started });
  emit("response.in_progress", { response: started });
  (final.output as any[]).forEach((item, output_index) => {
    const at = { item_id: item.id, output_index };
    if (item.type === "reasoning") {
      emit("response.output_item.added", { output_index, item: { ...item, summary: [] } });
      item.summary.forEach((s: { text: string }, summary_index: number) => {
        emit("response.reasoning_summary_part.added", { ...at, summary_index, part: { type: "summary_text", text: "" } });
        for (const delta of pieces(s.text)) emit("response.reasoning_summary_text.delta", { ...at, summary_index, delta });
        emit("response.reasoning_summary_text.done", { ...at, summary_index, text: s.text });
        emit("response.reasoning_summary_part.done", { ...at, summary_index, part: s });
      });
    } else if (item.type === "message") {
      emit("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
      item.content.forEach((part: any, content_index: number) => {
        emit("response.content_part.added", { ...at, content_index, part: part.type === "refusal" ? { type: "refusal", refusal: "" } : { type: "output_text", text: "", annotations: [] } });
        const text = part.type === "refusal" ? part.refusal : part.text;
        const kind = part.type === "refusal" ? "response.refusal" : "response.output_text";
        for (const delta of pieces(text)) emit(`${kind}.delta`, { ...at, content_index, delta, ...(part.type === "refusal" ? {} : { logprobs: [] }) });
        emit(`${kind}.done`, { ...at, content_index, ...(part.type === "refusal" ? { refusal: text } : { text, logprobs: [] }) });
        emit("response.content_part.done", { ...at, content_index, part });
      });
    } else if (item.type === "function_call") {
      emit("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } });
      for (const delta of pieces(item.arguments, 4)) emit("response.function_call_arguments.delta", { ...at, delta });
      emit("response.function_call_arguments.done", { ...at, arguments: item.arguments });
    }
    emit("response.output_item.done", { output_index, item });
  });
  emit(final.status === "incomplete" ? "response.incomplete" : "response.completed", { response: final });
  return frames;
}

/** A streamed failure: response.created, then response.failed with `error` (as OpenAI fails a response mid-stream). */
export function failedFrames(base: Record<string, unknown>, error: { code: string; message: string }): string[] {
  const started = { ...base, status: "in_progress", output: [], usage: null };
  return [
    frame({ type: "response.created", response: started, sequence_number: 0 }, "response.created"),
    frame({ type: "response.in_progress", response: started, sequence_number: 1 }, "response.in_progress"),
    frame({ type: "response.failed", response: { ...base, status: "failed", error, output: [], usage: null }, sequence_number: 2 }, "response.failed"),
  ];
}

/** An `error` event, as the SDK's ResponseErrorEvent types it. */
export const errorFrame = (code: string | null, message: string, param: string | null = null, sequence_number = 0) =>
  frame({ type: "error", code, message, param, sequence_number }, "error");
