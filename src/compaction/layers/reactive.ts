// reactive: the provider still said "prompt too long". First shrink the freshest oversized
// tool results (they most likely caused it), harder than budget does; the caller then
// summarises the older part keeping the newest rounds whole, and retries once. When the limit
// was bytes (413), bulky attachments go first, since tokens do not measure them.
import type { Message, ToolResultBlock, ToolResultContentBlock } from "../../messages/types.ts";
import { describeMedia } from "../../messages/media.ts";
import { budget } from "./budget.ts";
import type { BudgetEvent, LayerContext, LayerResult, SummarizeEvent } from "../types.ts";

/** How many of the newest messages count as fresh. */
const FRESH_MESSAGES = 4;

export function shrinkFresh(history: readonly Message[], ctx: LayerContext, overTokens = 0): LayerResult<BudgetEvent> {
  // Start the fresh slice at an assistant message so the tool names of its results are known.
  let from = Math.max(0, history.length - FRESH_MESSAGES);
  while (from > 0 && history[from]!.role !== "assistant") from--;
  const window = ctx.window.contextWindow;
  // Results above an eighth of the window (or what is over, if smaller) go to disk.
  const share = Math.min(0.125, overTokens > 0 ? Math.max(0.02, overTokens / window) : 0.125);
  const tight: LayerContext = {
    ...ctx,
    config: {
      ...ctx.config,
      budget: {
        ...ctx.config.budget,
        maxWindowShare: share,
        perResultChars: Math.min(ctx.config.budget.perResultChars, Math.floor(window * share * 2)),
        perToolChars: {},
        perMessageChars: Math.min(ctx.config.budget.perMessageChars, Math.floor(window * 0.5)),
        previewChars: Math.min(ctx.config.budget.previewChars, 500),
      },
    },
  };
  const r = budget(history.slice(from), tight);
  if (!r.event) return { history: history as Message[], freedTokens: 0, event: null };
  return { history: [...history.slice(0, from), ...r.history], freedTokens: r.freedTokens, event: r.event };
}

/** Blocks smaller than this are not worth taking out for a byte limit. */
const MIN_MEDIA_BYTES = 10_000;
const NOT_MEDIA = new Set(["text", "tool_use", "tool_result", "thinking", "redacted_thinking", "compaction"]);

export interface ByteShrink {
  history: Message[];
  bytesBefore: number;
  bytesAfter: number;
  /** Blocks taken out, as their placeholders say. */
  removed: string[];
}

/**
 * The server refused the request for its size in bytes (HTTP 413), not its tokens: an image or a
 * PDF weighs little in tokens and megabytes in base64, so token measures do not see it. Take the
 * bulky non-text blocks out, oldest first (the newest message's last), each replaced by a line
 * naming it, until the history is at most `targetBytes` of JSON. The transcript keeps them.
 */
export function shrinkBytes(history: readonly Message[], targetBytes: number): ByteShrink {
  const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
  const bytesBefore = size(history);
  // Every bulky block, as [message, block, inner block of a tool_result or -1].
  const found: { m: number; b: number; i: number; bytes: number }[] = [];
  history.forEach((msg, m) => {
    if (typeof msg.content === "string") return;
    msg.content.forEach((block, b) => {
      if (block.type === "tool_result" && Array.isArray(block.content)) {
        block.content.forEach((inner, i) => {
          if (inner.type !== "text" && size(inner) >= MIN_MEDIA_BYTES) found.push({ m, b, i, bytes: size(inner) });
        });
      } else if (!NOT_MEDIA.has(block.type) && size(block) >= MIN_MEDIA_BYTES) found.push({ m, b, i: -1, bytes: size(block) });
    });
  });
  let bytes = bytesBefore;
  const removed: string[] = [];
  const out = history.slice();
  const copied = new Set<number>();
  for (const f of found) {
    if (bytes <= targetBytes) break;
    if (!copied.has(f.m)) {
      const msg = out[f.m]!;
      out[f.m] = { ...msg, content: (msg.content as Exclude<Message["content"], string>).slice() };
      copied.add(f.m);
    }
    const content = out[f.m]!.content as Exclude<Message["content"], string>;
    const block = content[f.b]!;
    const target = f.i < 0 ? block : (block.content as ToolResultContentBlock[])[f.i]!;
    const line = `[${describeMedia(target as { type: string })}, ${Math.round(f.bytes / 1024)} KB: taken out of the request, which was over the server's size limit; the transcript keeps it]`;
    const placeholder = { type: "text" as const, text: line };
    if (f.i < 0) content[f.b] = placeholder;
    else {
      const inner = (block.content as ToolResultContentBlock[]).slice();
      inner[f.i] = placeholder;
      content[f.b] = { ...(block as ToolResultBlock), content: inner };
    }
    bytes -= f.bytes - size(placeholder);
    removed.push(line);
  }
  return { history: out, bytesBefore, bytesAfter: bytes, removed };
}

/** The byte target after a 413: 85% of a limit the server stated, else half of what was sent. */
export function byteTarget(history: readonly Message[], limitBytes?: number): number {
  return limitBytes ? limitBytes * 0.85 : Buffer.byteLength(JSON.stringify(history)) / 2;
}

/** The event of a reactive recovery that shrinking alone made fit (no summary). */
export function shrinkOnlyEvent(a: { tokensBefore: number; tokensAfter: number; messagesBefore: number; messagesAfter: number; bytes?: ByteShrink }): SummarizeEvent {
  return {
    kind: "reactive",
    summarizer: "none",
    presummary: false,
    tokensBefore: a.tokensBefore,
    tokensAfter: a.tokensAfter,
    messagesBefore: a.messagesBefore,
    messagesAfter: a.messagesAfter,
    freedTokens: Math.max(0, a.tokensBefore - a.tokensAfter),
    restoredFiles: [],
    userMessagesKept: 0,
    droppedForOverflow: 0,
    ...(a.bytes ? { bytesBefore: a.bytes.bytesBefore, bytesAfter: a.bytes.bytesAfter, attachmentsRemoved: a.bytes.removed.length } : {}),
  };
}
