// `seed`: the course's s08 rules (learn-claude-code, s08_context_compact, the code as shipped),
// implemented here as the baseline. Sizes are characters of the JSON serialisation of the whole
// message list, re-computed wherever the course re-computes them; one fixed limit whatever the
// model's window, so the seed behaves the same at every window.
//
//   prepare = tool_result_budget → snip_compact
//             → estimate_chars > 50,000 ? micro_compact(target 40,000)
//             → still > 50,000 ? fit_tool_results(40,000)
//             → still > 50,000 ? compact_history (one summary call)
//
// - estimate_chars(messages) = len(json.dumps(messages, ensure_ascii=False)): JSON.stringify of the
//   whole list + the characters Python's default separators (", " and ": ") add, counted per
//   message and memoised (the serialisation itself is NOT memoised: it is the course's cost).
//   Differences left: Python counts code points, JS UTF-16 units (astral characters count 2 here).
// - tool_result_budget: the LAST message only; over 200,000 chars of tool results → largest first,
//   each result over 30,000 chars goes to tool-results/<id>.txt (a real write) and becomes a
//   <persisted-output> marker with a 2,000-char preview; the total is recomputed after each.
// - snip_compact(max 50): head 3 (extended over tool results that answer its last message), tail
//   46 (moved back by one so it does not start with orphaned results); if the middle is exactly one
//   earlier archive marker, nothing to do; otherwise a transcript of ALL messages is written (JSONL,
//   a new file each time) and the middle becomes one user message "[N messages archived at PATH]".
//   That message follows the head's last message (a user message): two user messages in a row,
//   as in the course; the replay counts those violations.
// - micro_compact(target): tool results the model has already seen (not those after the last
//   assistant message), oldest first, except the newest 3 seen: stop as soon as
//   estimate_chars(messages) ≤ target (the whole history re-serialised on every iteration, as the
//   course does); skip contents ≤ 120 chars (len(str(content))); otherwise save the content to a
//   file (unless it already is a persisted marker) → "[Earlier tool result saved at PATH]".
// - fit_tool_results(target): every tool result, largest first; before each, stop if
//   estimate_chars ≤ target; replace it with a persisted preview of 1,000 chars if that is shorter.
// - compact_history: transcript written, one summary call (a fresh request: the serialised
//   conversation cut to 80,000 chars, its first quarter + its tail, after a short instruction; no
//   cache read), then the history is ONE user message: "[Compacted]", the latest user-typed request,
//   the summary (reference only), the transcript path.
//
// Port notes: the course mutates `messages` in place; the replay must not touch the recorded corpus
// (frozen, shared by every policy), so this port is copy-on-write (a changed message is a new
// object). Paths in markers are relative to the session's work folder (.task_outputs/tool-results/,
// .transcripts/), as short as the course's; the files are written under the policy's folder.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ContentBlock, Message, ToolResultBlock } from "../../../src/messages/types.ts";
import { resultFileName } from "../../../src/session/tool-results.ts";
import type { Policy, PolicySession, SummaryModel } from "../types.ts";

export const SEED = {
  contextCharLimit: 50_000,
  /** micro_compact and fit_tool_results aim under this. */
  compactTargetChars: 40_000,
  budgetMaxChars: 200_000,
  largeResultChars: 30_000,
  previewChars: 2_000,
  fitPreviewChars: 1_000,
  snipMaxMessages: 50,
  snipHead: 3,
  keepRecentResults: 3,
  microMinChars: 120,
  /** The summary request's conversation is cut to this many characters (first quarter + tail). */
  summaryInputChars: 80_000,
  /** Cap on the summary (the course's summary call; assumed, the digest stands in for it). */
  summaryMaxTokens: 2_000,
} as const;

export const SEED_SUMMARY_PROMPT =
  "Summarise the conversation below so the work can continue from the summary alone. Keep: the current goal, " +
  "important findings, files changed, what remains to be done, and any constraint the user stated.\n\n";

const RESULTS_DIR = ".task_outputs/tool-results";
const TRANSCRIPTS_DIR = ".transcripts";
const PERSISTED_OPEN = "<persisted-output>";
const ARCHIVE = /^\[\d+ messages archived at [^\]]*\]$/;
const COMPACTED = "[Compacted]";

// ---- sizes ----------------------------------------------------------------------------------

/** Characters Python's default separators (", " and ": ") add over JSON.stringify's. */
function separators(v: unknown): number {
  if (Array.isArray(v)) {
    let n = v.length > 0 ? v.length - 1 : 0;
    for (const x of v) n += separators(x);
    return n;
  }
  if (v !== null && typeof v === "object") {
    let keys = 0;
    let n = 0;
    for (const k in v as Record<string, unknown>) {
      const x = (v as Record<string, unknown>)[k];
      if (x === undefined || typeof x === "function") continue;
      keys++;
      n += separators(x);
    }
    return n + keys + (keys > 0 ? keys - 1 : 0);
  }
  return 0;
}

const separatorMemo = new WeakMap<Message, number>();
function messageSeparators(m: Message): number {
  let n = separatorMemo.get(m);
  if (n === undefined) {
    n = separators(m);
    separatorMemo.set(m, n);
  }
  return n;
}

/** The course's estimate_chars: len(json.dumps(messages, ensure_ascii=False)), the whole list serialised. */
export function estimateChars(messages: readonly Message[]): number {
  let sep = messages.length > 0 ? messages.length - 1 : 0;
  for (const m of messages) sep += messageSeparators(m);
  return JSON.stringify(messages).length + sep;
}

/** Python's str(content). */
function str(content: ToolResultBlock["content"]): string {
  if (content === undefined) return "";
  return typeof content === "string" ? content : JSON.stringify(content);
}

// ---- shapes ---------------------------------------------------------------------------------

function hasToolUse(m: Message | undefined): boolean {
  return !!m && typeof m.content !== "string" && m.content.some((b) => b.type === "tool_use");
}

function isToolResultMessage(m: Message | undefined): boolean {
  return !!m && m.role === "user" && typeof m.content !== "string" && m.content.some((b) => b.type === "tool_result");
}

function isArchiveMarker(m: Message | undefined): boolean {
  return !!m && m.role === "user" && typeof m.content === "string" && ARCHIVE.test(m.content);
}

export function persistedOutput(path: string, preview: string): string {
  return `${PERSISTED_OPEN}\nFull output: ${path}\nPreview:\n${preview}\n</persisted-output>`;
}

/** A persisted marker's path and preview, or null. */
export function parsePersisted(s: string): { path: string; preview: string } | null {
  if (!s.startsWith(PERSISTED_OPEN)) return null;
  const m = /^<persisted-output>\nFull output: ([^\n]*)\nPreview:\n([\s\S]*)\n<\/persisted-output>$/.exec(s);
  return m ? { path: m[1]!, preview: m[2]! } : null;
}

/** Copy-on-write: `messages` with block j of message i replaced (a new message object). */
function withBlock(messages: Message[], original: readonly Message[], i: number, j: number, block: ContentBlock): Message[] {
  const out = messages === original ? messages.slice() : messages;
  const m = out[i]!;
  const content = (m.content as ContentBlock[]).slice();
  content[j] = block;
  out[i] = { ...m, content };
  return out;
}

/** The newest user-typed request in the course's context (a compacted message carries the one it had). */
export function latestUserRequest(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "user") continue;
    if (typeof m.content === "string") {
      if (m.content.startsWith(COMPACTED)) {
        const s = m.content.indexOf("Current user request:\n");
        const e = m.content.indexOf("\n\nConversation summary (reference only):\n");
        if (s >= 0 && e > s) return m.content.slice(s + "Current user request:\n".length, e);
        continue;
      }
      if (ARCHIVE.test(m.content) || m.content.trim() === "") continue;
      return m.content;
    }
    const typed = m.content.filter((b) => b.type === "text" && b.text.trim() !== "").map((b) => (b as { text: string }).text);
    if (typed.length > 0) return typed.join("\n");
  }
  return "";
}

// ---- the layers -----------------------------------------------------------------------------

export interface SeedIO {
  /** Writes a tool result's full text; returns the path named in markers. */
  save(toolUseId: string, text: string): string;
  /** The path save() would use (no write). */
  pathFor(toolUseId: string): string;
  /** Writes a transcript of all messages (JSONL, a new file each time); returns its path. */
  transcript(messages: readonly Message[]): string;
}

/** tool_result_budget: the last message's results over 200,000 chars → persist those over 30,000, largest first. */
export function toolResultBudget(messages: Message[], io: SeedIO): Message[] {
  const last = messages[messages.length - 1];
  if (!last || typeof last.content === "string") return messages;
  const blocks: number[] = [];
  last.content.forEach((b, j) => {
    if (b.type === "tool_result") blocks.push(j);
  });
  const total = (content: readonly ContentBlock[]) => blocks.reduce((n, j) => n + str((content[j] as ToolResultBlock).content).length, 0);
  let sum = total(last.content);
  if (sum <= SEED.budgetMaxChars) return messages;
  const content = last.content.slice();
  const ranked = blocks.slice().sort((a, b) => str((content[b] as ToolResultBlock).content).length - str((content[a] as ToolResultBlock).content).length);
  for (const j of ranked) {
    if (sum <= SEED.budgetMaxChars) break;
    const b = content[j] as ToolResultBlock;
    const text = str(b.content);
    if (text.length <= SEED.largeResultChars) continue;
    content[j] = { ...b, content: persistedOutput(io.save(b.tool_use_id, text), text.slice(0, SEED.previewChars)) };
    sum = total(content);
  }
  return [...messages.slice(0, -1), { ...last, content }];
}

/** snip_compact(max 50): head 3 + "[N messages archived at PATH]" + tail 46, the whole list written to a transcript. */
export function snipCompact(messages: Message[], io: SeedIO): Message[] {
  const max = SEED.snipMaxMessages;
  if (messages.length <= max) return messages;
  let headEnd = SEED.snipHead;
  let tailStart = messages.length - (max - 4);
  if (hasToolUse(messages[headEnd - 1])) {
    while (headEnd < tailStart && isToolResultMessage(messages[headEnd])) headEnd++;
  }
  if (isToolResultMessage(messages[tailStart]) && hasToolUse(messages[tailStart - 1])) tailStart--;
  if (headEnd >= tailStart) return messages;
  if (tailStart - headEnd === 1 && isArchiveMarker(messages[headEnd])) return messages;
  const path = io.transcript(messages);
  const marker: Message = { role: "user", content: `[${tailStart - headEnd} messages archived at ${path}]` };
  return [...messages.slice(0, headEnd), marker, ...messages.slice(tailStart)];
}

/** micro_compact(target): seen results, oldest first, all but the newest 3 seen → a saved-at placeholder, until estimate_chars ≤ target. */
export function microCompact(messages: Message[], target: number, io: SeedIO): Message[] {
  let lastAssistant = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "assistant") {
      lastAssistant = i;
      break;
    }
  }
  const seen: [number, number][] = [];
  for (let i = 0; i < lastAssistant; i++) {
    const c = messages[i]!.content;
    if (typeof c === "string") continue;
    c.forEach((b, j) => {
      if (b.type === "tool_result") seen.push([i, j]);
    });
  }
  let out = messages;
  for (let k = 0; k < seen.length - SEED.keepRecentResults; k++) {
    if (estimateChars(out) <= target) break;
    const [i, j] = seen[k]!;
    const b = (out[i]!.content as ContentBlock[])[j] as ToolResultBlock;
    const text = str(b.content);
    if (text.length <= SEED.microMinChars) continue;
    const path = parsePersisted(text)?.path ?? io.save(b.tool_use_id, text);
    out = withBlock(out, messages, i, j, { ...b, content: `[Earlier tool result saved at ${path}]` });
  }
  return out;
}

/** fit_tool_results(target): every result, largest first → a 1,000-char persisted preview when shorter, until estimate_chars ≤ target. */
export function fitToolResults(messages: Message[], target: number, io: SeedIO): Message[] {
  const all: { i: number; j: number; len: number }[] = [];
  messages.forEach((m, i) => {
    if (typeof m.content === "string") return;
    m.content.forEach((b, j) => {
      if (b.type === "tool_result") all.push({ i, j, len: str(b.content).length });
    });
  });
  all.sort((a, b) => b.len - a.len);
  let out = messages;
  for (const { i, j } of all) {
    if (estimateChars(out) <= target) break;
    const b = (out[i]!.content as ContentBlock[])[j] as ToolResultBlock;
    const text = str(b.content);
    const persisted = parsePersisted(text);
    const next = persisted
      ? persistedOutput(persisted.path, persisted.preview.slice(0, SEED.fitPreviewChars))
      : persistedOutput(io.pathFor(b.tool_use_id), text.slice(0, SEED.fitPreviewChars));
    if (next.length >= text.length) continue;
    if (!persisted) io.save(b.tool_use_id, text);
    out = withBlock(out, messages, i, j, { ...b, content: next });
  }
  return out;
}

/** The summary request's text: the instruction + the serialised conversation cut to 80,000 chars (first quarter + tail). */
export function seedSummaryRequestText(messages: readonly Message[]): string {
  const all = JSON.stringify(messages);
  const max = SEED.summaryInputChars;
  const convo = all.length <= max ? all : `${all.slice(0, max / 4)}\n…\n${all.slice(all.length - (max - max / 4))}`;
  return SEED_SUMMARY_PROMPT + convo;
}

export function compactedMessage(latest: string, summary: string, transcriptPath: string): Message {
  return {
    role: "user",
    content: `${COMPACTED}\n\nCurrent user request:\n${latest}\n\nConversation summary (reference only):\n${summary}\n\nFull transcript: ${transcriptPath}`,
  };
}

/** compact_history: transcript, one summary call, the history becomes one user message. */
export function compactHistory(messages: Message[], io: SeedIO, model: SummaryModel): Message[] {
  const path = io.transcript(messages);
  const latest = latestUserRequest(messages);
  const text = seedSummaryRequestText(messages);
  const summary = model.summarize({ history: messages, maxTokens: SEED.summaryMaxTokens, request: { kind: "fresh", text } });
  return [compactedMessage(latest, summary, path)];
}

export function seedIO(dir: string): SeedIO {
  let resultsMade = false;
  let transcriptsMade = false;
  let transcripts = 0;
  const pathFor = (id: string) => `${RESULTS_DIR}/${resultFileName(id)}`;
  return {
    pathFor,
    save(id, text) {
      if (!resultsMade) {
        mkdirSync(join(dir, RESULTS_DIR), { recursive: true });
        resultsMade = true;
      }
      const path = pathFor(id);
      writeFileSync(join(dir, path), text);
      return path;
    },
    transcript(messages) {
      if (!transcriptsMade) {
        mkdirSync(join(dir, TRANSCRIPTS_DIR), { recursive: true });
        transcriptsMade = true;
      }
      const path = `${TRANSCRIPTS_DIR}/transcript_${++transcripts}.jsonl`;
      let out = "";
      for (const m of messages) out += `${JSON.stringify(m)}\n`;
      writeFileSync(join(dir, path), out);
      return path;
    },
  };
}

export const seedPolicy: Policy = {
  name: "seed",
  describe:
    "course s08 code in characters, one fixed limit at every window: estimate_chars = len(json.dumps(messages)) re-computed at every check; " +
    "tool_result_budget (last message > 200,000 chars → results > 30,000 persisted, largest first, 2,000-char preview), " +
    "snip_compact (> 50 messages → head 3 + '[N messages archived at PATH]' + tail 46, a full JSONL transcript written each time), " +
    "> 50,000 chars → micro_compact to 40,000 (seen results, oldest first, newest 3 kept, > 120 chars → saved to a file + placeholder; re-serialised each step), " +
    "still > 50,000 → fit_tool_results to 40,000 (largest first → 1,000-char persisted preview), still > 50,000 → compact_history " +
    "(transcript + one fresh summary request of the conversation cut to 80,000 chars; the history becomes one user message: latest request + summary + transcript path); copy-on-write instead of in-place mutation",
  start({ dir, model }): PolicySession {
    const io = seedIO(dir);
    return {
      threshold: SEED.contextCharLimit,
      prepare(live) {
        const acted: string[] = [];
        const step = (name: string, next: Message[], prev: Message[]) => {
          if (next !== prev) acted.push(name);
          return next;
        };
        let messages = live as Message[];
        messages = step("budget", toolResultBudget(messages, io), messages);
        messages = step("snip", snipCompact(messages, io), messages);
        let summaries = 0;
        if (estimateChars(messages) > SEED.contextCharLimit) {
          messages = step("micro", microCompact(messages, SEED.compactTargetChars, io), messages);
          if (estimateChars(messages) > SEED.contextCharLimit) {
            messages = step("fit", fitToolResults(messages, SEED.compactTargetChars, io), messages);
            if (estimateChars(messages) > SEED.contextCharLimit) {
              messages = step("summarize", compactHistory(messages, io, model), messages);
              summaries = 1;
            }
          }
        }
        return { history: messages, summaries, compaction: summaries > 0 ? "summary" : acted.includes("snip") ? "snip" : null, acted };
      },
      observe() {},
    };
  },
};
