// summarize: one model call writes a structured summary of the conversation.
//
// The request reuses the conversation exactly as it was sent (same system prompt, same
// tools, the history as the prefix) with the instruction appended last, so it reads the
// prompt cache instead of paying for the whole history again. Tool use is refused.
import { blocksOf } from "../../messages/blocks.ts";
import { isCompaction, leadingCompaction } from "../../messages/compaction.ts";
import type { CompactionBlock, Message } from "../../messages/types.ts";
import { type ModelClient, ModelError, type ModelRequest, type ModelResponse, type ToolDefinition } from "../../model/types.ts";
import type { TokenCounter } from "../../tokens/count.ts";
import { previousSummaryOf } from "../state/retain.ts";
import { summary } from "../state/tags.ts";

/** The instruction appended to a summary request (sections, focus, and how to fold in a previous summary). */
export function summaryInstruction(opts: { focus?: string; hasPrevious: boolean; maxTokens: number; server?: boolean }): string {
  // For the server's compaction the whole reply is the summary: no analysis part, no tags.
  const lines = opts.server
    ? ["The conversation above is about to be compacted to free context. Write the notes you will work from afterwards: everything needed to carry on without the original messages, with these sections:"]
    : [
        "STOP. Do not call any tool now: tools are disabled for this turn and any tool call will be discarded. Reply with text only.",
        "",
        "The conversation above is about to be compacted to free context. Write the notes you will work from afterwards: everything needed to carry on without the original messages.",
        "",
        "First think inside <analysis>…</analysis>: go through the conversation in order and note what the user asked for, what was done, which files matter and why, what failed and how it was fixed, and what is unfinished. This part is discarded.",
        "",
        "Then write the notes inside <summary>…</summary>, with these sections:",
      ];
  lines.push(
    "1. Goal — what the user wants overall, in their terms, with every explicit constraint or preference they stated.",
    "2. Key technical facts — languages, frameworks, commands, APIs, conventions of this codebase that were learned.",
    "3. Files — each file read or changed that still matters: path, why it matters, what changed (short code excerpts where exact text matters).",
    "4. Errors and fixes — what went wrong, the exact error where useful, and how it was resolved (or that it was not).",
    "5. Reasoning so far — approaches tried, what was ruled out and why.",
    "6. The user's messages — every message the user wrote (not tool results), in order, briefly but faithfully.",
    "7. Pending tasks — what was asked and is not done yet.",
    "8. Current work — precisely what was being done just before this point, with file names and the state it is in.",
    "9. Next step — the single next action, consistent with the user's latest request; quote the latest request where it helps. Do not start new work the user did not ask for.",
    "",
    `Keep the summary under about ${Math.round(opts.maxTokens * 0.75).toLocaleString("en-US")} tokens. Be specific: paths, names, numbers and exact error text beat generalities.`,
  );
  if (opts.hasPrevious) {
    lines.push("", "The conversation starts from an earlier summary: fold its content into the new summary (keep what still matters), do not start from zero.");
  }
  if (opts.focus?.trim()) lines.push("", `Additional instructions for this summary: ${opts.focus.trim()}`);
  if (!opts.server) lines.push("", "Remember: text only, no tool calls. Start with <analysis>.");
  return lines.join("\n");
}

/** The summary request: the conversation as sent + the instruction as the last user message. */
export function summaryRequest(args: {
  model: string;
  system?: string;
  tools?: readonly ToolDefinition[];
  history: readonly Message[];
  instruction: string;
  maxTokens: number;
}): ModelRequest {
  const messages = args.history.slice();
  const last = messages[messages.length - 1];
  const instruction = { type: "text" as const, text: args.instruction };
  if (last?.role === "user") {
    // Keep roles alternating: the instruction joins the pending user message, after its results.
    messages[messages.length - 1] = { ...last, content: [...blocksOf(last), instruction] };
  } else {
    messages.push({ role: "user", content: [instruction] });
  }
  return { model: args.model, system: args.system, tools: args.tools, messages, maxTokens: args.maxTokens, toolChoice: "none" };
}

/** The summary text of a reply: analysis stripped, <summary> body if present. */
export function parseSummary(reply: ModelResponse): string {
  const blocks = blocksOf(reply.message);
  if (blocks.some((b) => b.type === "tool_use")) {
    throw new ModelError("invalid_request", "the summary reply called a tool although tools were forbidden");
  }
  let text = blocks.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("\n");
  text = text.replace(/<analysis>[\s\S]*?(<\/analysis>|$)/g, "").trim();
  const body = (summary.ofReply(text) ?? text).trim();
  if (body.length < 20) throw new ModelError("invalid_request", "the summary reply was empty");
  return reply.stopReason === "max_tokens" ? `${body}\n[summary cut at its token limit]` : body;
}

/** Drop the oldest whole rounds (from the first assistant message on) so about `share` of the history goes. */
export function dropOldestRounds(history: readonly Message[], counter: TokenCounter, tokensToDrop: number): Message[] {
  // Keep the task (message 0, a user message); cut just before an assistant message so pairs stay
  // whole. A history the server compacted starts with its compaction block: keep it and the task after it.
  const task = leadingCompaction(history) ? 1 : 0;
  let dropped = 0;
  let cut = task + 1;
  for (let i = task + 1; i < history.length - 1; i++) {
    dropped += counter.message(history[i]!);
    if (history[i + 1]!.role === "assistant" && dropped >= tokensToDrop) {
      cut = i + 1;
      break;
    }
    if (history[i + 1]!.role === "assistant") cut = i + 1;
  }
  if (cut <= task + 1) return history.slice();
  const first = history[task]!;
  const note = { type: "text" as const, text: `[lethe: ${cut - task - 1} older messages were left out of this summary request to fit the window; they are in the transcript.]` };
  // the task is a user message and history[cut] is assistant: roles still alternate.
  return [...history.slice(0, task), { ...first, content: [...blocksOf(first), note] }, ...history.slice(cut)];
}

/**
 * The history with its largest text or tool-result block cut by about `over` tokens (head and
 * tail kept, a note in the middle); undefined when no block is large enough to cut.
 */
export function clipLargestBlock(history: readonly Message[], counter: TokenCounter, over: number): Message[] | undefined {
  let best: { mi: number; bi: number; tokens: number; text: string } | undefined;
  history.forEach((m, mi) => {
    blocksOf(m).forEach((b, bi) => {
      const text = b.type === "text" ? b.text : b.type === "tool_result" && typeof b.content === "string" ? b.content : undefined;
      if (text === undefined || text.length < 4_000) return;
      const tokens = counter.block(b);
      if (!best || tokens > best.tokens) best = { mi, bi, tokens, text };
    });
  });
  if (!best) return undefined;
  const { mi, bi, tokens, text } = best as { mi: number; bi: number; tokens: number; text: string };
  const perChar = tokens / text.length;
  const keep = Math.max(2_000, Math.floor(text.length - (over * 1.15) / perChar));
  if (keep >= text.length) return undefined;
  const head = text.slice(0, Math.floor(keep * 0.7));
  const tail = text.slice(text.length - Math.floor(keep * 0.3));
  const cut = `${head}\n[lethe: ${(text.length - head.length - tail.length).toLocaleString("en-US")} characters cut from this block for the summary request to fit the window; the whole text is in the transcript]\n${tail}`;
  const blocks = blocksOf(history[mi]!).map((b, i) => (i !== bi ? b : b.type === "text" ? { ...b, text: cut } : { ...b, content: cut }));
  return history.map((m, i) => (i === mi ? { ...m, content: blocks } : m)) as Message[];
}

export interface SummarizeArgs {
  client: ModelClient;
  model: string;
  system?: string;
  tools?: readonly ToolDefinition[];
  history: readonly Message[];
  counter: TokenCounter;
  maxTokens: number;
  focus?: string;
  /** Tries after a prompt-too-long on the summary request itself. */
  overflowRetries?: number;
  /** The provider refused the summary request as too long and named its limit (the window is smaller than thought). */
  onLimit?: (limitTokens: number) => void;
  signal?: AbortSignal;
  /** The model's window: a request known to be over it is shrunk before it is sent. */
  contextWindow?: number;
  /** Tokens of the system prompt and tools. */
  fixedTokens?: number;
  /** The server compacts (Anthropic's compaction request): its compaction block is the summary. */
  server?: boolean;
}

export interface SummarizeResult {
  summary: string;
  usage: ModelResponse["usage"];
  /** Messages dropped from the front to make the request fit. */
  droppedForOverflow: number;
  request: ModelRequest;
  /** The server's compaction block, when the server wrote the summary. */
  block?: CompactionBlock;
}

/** Sends one summary request (the conversation as sent, plus the instruction, tools forbidden) and returns the summary text; drops the oldest rounds when the request itself is too long. */
export async function summarize(args: SummarizeArgs): Promise<SummarizeResult> {
  const hasPrevious = previousSummaryOf(args.history) !== undefined;
  const instruction = summaryInstruction({ focus: args.focus, hasPrevious, maxTokens: args.maxTokens, server: args.server });
  let history = args.history.slice();
  const tries = args.overflowRetries ?? 3;
  // The server's compaction takes the conversation as it is; its own prompt unless there is a focus.
  const build = (): ModelRequest =>
    args.server
      ? { model: args.model, system: args.system, tools: args.tools, messages: history, maxTokens: args.maxTokens, signal: args.signal, compaction: args.focus?.trim() ? { instructions: instruction } : {} }
      : { ...summaryRequest({ model: args.model, system: args.system, tools: args.tools, history, instruction, maxTokens: args.maxTokens }), signal: args.signal };
  // Never send a summary request we already know is over the window (estimate, with a margin).
  if (args.contextWindow) {
    const limit = args.contextWindow * 0.95;
    const size = () => (args.fixedTokens ?? 0) + args.counter.messages(build().messages) + args.maxTokens;
    for (let i = 0; i < 8; i++) {
      const now = size();
      if (now <= limit) break;
      const shrunk = dropOldestRounds(history, args.counter, (now - limit) * 1.1);
      if (shrunk.length >= history.length) break;
      history = shrunk;
    }
    // What dropping rounds cannot fix (one huge message, say a 6 MB paste): cut the largest
    // blocks, head and tail kept, until the request fits. Never send what is known to be over.
    for (let i = 0; i < 16 && size() > limit; i++) {
      const clipped = clipLargestBlock(history, args.counter, size() - limit);
      if (!clipped) break;
      history = clipped;
    }
    const final = size();
    if (final > limit) throw new ModelError("prompt_too_long", `lethe: the summary request would be ${Math.round(final).toLocaleString("en-US")} tokens, over the ${Math.round(limit).toLocaleString("en-US")} the window allows, and could not be shrunk; not sending it`);
  }
  for (let attempt = 0; ; attempt++) {
    const request = build();
    try {
      const reply = await args.client.stream(request);
      const dropped = args.history.length - history.length;
      if (args.server) {
        const block = blocksOf(reply.message).find(isCompaction);
        if (!block || typeof block.content !== "string" || block.content.trim() === "") throw new ModelError("invalid_request", "the server's compaction returned no summary");
        return { summary: block.content, usage: reply.usage, droppedForOverflow: dropped, request, block };
      }
      return { summary: parseSummary(reply), usage: reply.usage, droppedForOverflow: dropped, request };
    } catch (e) {
      if (e instanceof ModelError && e.kind === "prompt_too_long" && e.limitTokens) args.onLimit?.(e.limitTokens);
      if (!(e instanceof ModelError) || e.kind !== "prompt_too_long" || attempt >= tries) throw e;
      const total = args.counter.messages(history);
      // Drop what the provider says is over, plus a margin; a fifth when it did not say.
      const over = e.actualTokens && e.limitTokens ? e.actualTokens - e.limitTokens + args.maxTokens : 0;
      const shrunk = dropOldestRounds(history, args.counter, Math.max(over * 1.2, total * 0.2));
      if (shrunk.length >= history.length) throw e;
      history = shrunk;
    }
  }
}
