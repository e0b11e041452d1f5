// What must survive a compaction verbatim besides the summary: the user's own messages
// and the todo state. Each is carried in the rebuilt history in a form the next
// compaction parses back, so nothing depends on the summary remembering it.
import { blocksOf, toolUsesOf } from "../../messages/blocks.ts";
import type { ContentBlock, Message } from "../../messages/types.ts";
import type { TokenCounter } from "../../tokens/count.ts";
import { describeMedia } from "../../messages/media.ts";

import { ATTACHMENTS_TAG, LATEST_REQUEST_PREFIX, REBUILD_TAG, TODO_CLOSE, TODO_TAG, USER_MESSAGE_PREFIX, isLetheText, latestRequest, summary, userMessage } from "./tags.ts";

// The tags live in tags.ts; re-exported for the modules and tests that name them here.
export { ATTACHMENTS_TAG, LATEST_REQUEST_PREFIX, REBUILD_TAG, TODO_TAG, USER_MESSAGE_PREFIX, isLetheText };

/** The user's message a carried block holds (an earlier one, or the latest request), else undefined. */
const carriedText = (text: string): string | undefined => userMessage.parse(text) ?? latestRequest.parse(text);

/**
 * The user's own messages, oldest first: texts carried by an earlier rebuild (in order)
 * followed by the user-typed text of every later user message.
 */
export function userMessagesOf(history: readonly Message[]): string[] {
  const out: string[] = [];
  for (const m of history) readUserMessages(out, m);
  return out;
}

/** userMessagesOf's step: one message's user messages into `out`. */
export function readUserMessages(out: string[], m: Message): void {
  if (m.role !== "user") return;
  if (typeof m.content === "string") {
    const carried = carriedText(m.content);
    if (carried !== undefined) out.push(carried);
    else if (m.content.trim() !== "" && !isLetheText(m.content)) out.push(m.content);
    return;
  }
  // Block order is time order: typed text before a carried block is older than it. (A loop, not
  // a closure per message: a snip reads every user message of what it removes.)
  let typed: string[] | undefined;
  for (const b of m.content) {
    if (b.type !== "text") continue;
    const carried = carriedText(b.text);
    if (carried !== undefined) {
      if (typed !== undefined) out.push(typed.join("\n"));
      typed = undefined;
      out.push(carried);
    } else if (b.text.trim() !== "" && !isLetheText(b.text)) (typed ??= []).push(b.text);
  }
  if (typed !== undefined) out.push(typed.join("\n"));
}

/**
 * The messages to keep, oldest first: the newest ones whose total fits `budget` tokens.
 * The latest is always kept (cut to the budget if it alone is larger, head and tail).
 */
export function selectUserMessages(
  all: readonly string[],
  budget: number,
  counter: TokenCounter,
  /** The latest request is kept whole up to this size even beyond `budget`. */
  latestMax = budget,
): { kept: string[]; latest: string | undefined; dropped: number } {
  if (all.length === 0) return { kept: [], latest: undefined, dropped: 0 };
  let latest = all[all.length - 1]!;
  let used = counter.text(latest);
  const cap = Math.max(budget, latestMax);
  if (used > cap) {
    const keep = Math.max(200, Math.floor((latest.length * cap) / used / 2));
    latest = `${latest.slice(0, keep)}\n[... ${latest.length - 2 * keep} characters of this message are in the transcript ...]\n${latest.slice(-keep)}`;
    used = counter.text(latest);
  }
  const kept: string[] = [];
  let i = all.length - 2;
  for (; i >= 0; i--) {
    const t = counter.text(all[i]!);
    if (used + t > budget) break;
    used += t;
    kept.unshift(all[i]!);
  }
  return { kept, latest, dropped: i + 1 };
}

const TODO_TOOLS = new Set(["todo_write", "todowrite", "update_plan", "todo"]);

/** The newest todo list the model wrote, as it wrote it (or the one an earlier rebuild carried). */
export function todosOf(history: readonly Message[]): string | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (m.role === "assistant") {
      const uses = toolUsesOf(m).filter((u) => TODO_TOOLS.has(u.name.toLowerCase()));
      const last = uses[uses.length - 1];
      if (last) return renderTodos(last.input);
    } else {
      for (const b of blocksOf(m)) if (b.type === "text" && b.text.startsWith(TODO_TAG)) return b.text;
    }
  }
  return undefined;
}

function renderTodos(input: unknown): string {
  const todos = (input as { todos?: unknown })?.todos;
  const lines = [TODO_TAG, "The todo list as last written:"];
  if (Array.isArray(todos)) {
    for (const t of todos as Record<string, unknown>[]) {
      const status = String(t.status ?? "pending");
      const mark = status === "completed" ? "x" : status === "in_progress" ? "~" : " ";
      lines.push(`- [${mark}] ${String(t.content ?? t.text ?? t.title ?? JSON.stringify(t))}`);
    }
  } else {
    lines.push(JSON.stringify(input));
  }
  lines.push(TODO_CLOSE);
  return lines.join("\n");
}

const NOT_IN_CONTEXT = "not in context now";
const MAX_TOOL_MEDIA_NAMED = 5;

/**
 * The user's attachments (images, documents, uploads: any non-text block of a user message,
 * outside tool results) in `scope`, for a compaction that removes it: the newest whole ones that
 * fit `budget` tokens go back in, and one note names every attachment, kept or not, with where the
 * rest are (the session transcript). Notes an earlier compaction left in `scope` carry on.
 */
export function carryAttachments(scope: readonly Message[], budget: number, counter: TokenCounter, where: string): { blocks: ContentBlock[]; kept: number; noted: number } {
  const a = attachmentsReading();
  for (const m of scope) readAttachments(a, m);
  return carryAttachmentsRead(a, budget, counter, where);
}

/** The attachments read so far: notes of earlier ones, the blocks themselves, and media tools returned. */
export interface AttachmentsReading {
  earlier: string[];
  found: ContentBlock[];
  /** Images tools returned (screenshots): named, not attached again (the agent can take another). */
  fromTools: string[];
}

export const attachmentsReading = (): AttachmentsReading => ({ earlier: [], found: [], fromTools: [] });

/** carryAttachments' step: one message's attachments into `a`. */
export function readAttachments(a: AttachmentsReading, m: Message): void {
  if (m.role !== "user" || typeof m.content === "string") return;
  for (const b of m.content) {
    if (b.type === "text") {
      if (b.text.startsWith(ATTACHMENTS_TAG)) for (const line of b.text.split("\n")) if (line.startsWith("- ") && line.includes(NOT_IN_CONTEXT)) a.earlier.push(line);
    } else if (b.type === "tool_result") {
      if (Array.isArray(b.content)) for (const inner of b.content) if (inner.type !== "text") a.fromTools.push(describeMedia(inner));
    } else if (b.type !== "thinking" && b.type !== "redacted_thinking" && b.type !== "tool_use") a.found.push(b);
  }
}

/** carryAttachments of what was read (`a`, not changed). */
export function carryAttachmentsRead(a: AttachmentsReading, budget: number, counter: TokenCounter, where: string): { blocks: ContentBlock[]; kept: number; noted: number } {
  const { earlier, found, fromTools } = a;
  if (found.length === 0 && earlier.length === 0 && fromTools.length === 0) return { blocks: [], kept: 0, noted: 0 };
  const keep = new Set<ContentBlock>();
  let used = 0;
  for (let i = found.length - 1; i >= 0; i--) {
    const t = counter.block(found[i]!);
    if (used + t > budget) break;
    used += t;
    keep.add(found[i]!);
  }
  const lines = [...earlier];
  for (const b of found) {
    const what = describeMedia(b as { type: string; source?: unknown; title?: unknown });
    lines.push(keep.has(b) ? `- ${what} - attached again below` : `- ${what} - ${NOT_IN_CONTEXT}; kept in full in the session transcript${where}`);
  }
  if (fromTools.length > 0) {
    const named = fromTools.slice(-MAX_TOOL_MEDIA_NAMED);
    const more = fromTools.length - named.length;
    lines.push(`- from tool results: ${named.join("; ")}${more > 0 ? ` (and ${more} earlier)` : ""} - ${NOT_IN_CONTEXT}; kept in the session transcript${where}`);
  }
  const note = `${ATTACHMENTS_TAG}: ${lines.length} in all]\n${lines.join("\n")}`;
  return { blocks: [{ type: "text", text: note }, ...found.filter((b) => keep.has(b))], kept: keep.size, noted: lines.length };
}

/** The summary an earlier rebuild carried, to fold into the next one. */
export function previousSummaryOf(history: readonly Message[]): string | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    for (const b of blocksOf(history[i]!)) {
      if (b.type !== "text" || !b.text.startsWith(REBUILD_TAG)) continue;
      const found = summary.parse(b.text);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
