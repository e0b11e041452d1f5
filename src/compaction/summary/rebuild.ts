// rebuild: the history that replaces the old one after a summary. One user message
// carries the continuation note, the summary, and what must survive verbatim (the user's
// own messages, the file ledger, restored files, todos); then the newest rounds, whole.
import { toolResultsOf, toolUsesOf } from "../../messages/blocks.ts";
import { leadingCompaction } from "../../messages/compaction.ts";
import type { CompactionBlock, ContentBlock, Message } from "../../messages/types.ts";
import type { TokenCounter } from "../../tokens/count.ts";
import { type FileLedger, callFiles, ledgerOf, renderLedgerWithin } from "../state/ledger.ts";
import { carriedWorkOf, renderWorkWithin, workRecordOf } from "../state/work.ts";
import { carryAttachments, selectUserMessages, todosOf, userMessagesOf } from "../state/retain.ts";
import { CONTINUE_TAG, FILES_RESTORED_TAG, REBUILD_TAG, latestRequest, restoredFile, summary, userMessage } from "../state/tags.ts";

export interface RebuildBudgets {
  /** The user's own messages, newest first (the latest always). */
  userMessagesTokens: number;
  /** The latest request is kept whole up to this size. */
  latestRequestTokens?: number;
  /** Newest whole rounds kept verbatim after the summary. */
  keepTailTokens: number;
  restoreFiles: number;
  restoreFileTokens: number;
  restoreTotalTokens: number;
  /** Cap on the ledger block (paths only; modified first). */
  ledgerTokens: number;
  /** The user's newest attachments (images, documents) kept whole within this (default: restoreTotalTokens). */
  attachmentTokens?: number;
  /** Cap on the work record (commands with outcomes; the oldest go first). Default 1,000. */
  workTokens?: number;
}

export interface RebuildInput {
  /** The history being compacted (as sent: after the cheap layers). */
  history: readonly Message[];
  summary: string;
  kind: string;
  budgets: RebuildBudgets;
  counter: TokenCounter;
  archivePath?: string;
  /** Reads a file fresh from disk (undefined if missing or unreadable). */
  readFile?: (path: string) => string | undefined;
  /** Keep every message from this index on verbatim (what a pre-summary did not cover). */
  keepFrom?: number;
  /** The server wrote the summary as its own compaction block: it goes first, and the note does not repeat it. */
  server?: CompactionBlock;
}

export interface RebuildResult {
  history: Message[];
  /** Index in the input where the verbatim tail starts (history.length when none). */
  tailStart: number;
  restored: string[];
  ledger: FileLedger;
  userMessagesKept: number;
  userMessagesDropped: number;
}


/**
 * Where the verbatim tail starts: the newest whole rounds (starting at an assistant
 * message) within the budget. Pending tool results are always kept with their call.
 */
export function tailStart(history: readonly Message[], budget: number, counter: TokenCounter): number {
  const n = history.length;
  const last = history[n - 1];
  if (!last || last.role !== "user") return n;
  let start = n;
  let used = 0;
  let pending = counter.message(last);
  for (let i = n - 2; i >= 1; i--) {
    pending += counter.message(history[i]!);
    if (history[i]!.role !== "assistant") continue;
    const mustKeep = start === n && toolResultsOf(last).length > 0;
    if (used + pending > budget && !mustKeep) break;
    used += pending;
    pending = 0;
    start = i;
  }
  return start;
}

function recentlyRead(history: readonly Message[], ledger: FileLedger): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (let i = history.length - 1; i >= 0; i--) {
    const uses = toolUsesOf(history[i]!);
    for (let j = uses.length - 1; j >= 0; j--) {
      // Only what a read that ran gave the model (never a file a permission rule kept from it).
      for (const p of callFiles(uses[j]!).read) if (ledger.read.has(p) && !seen.has(p)) (seen.add(p), out.push(p));
    }
  }
  for (const p of [...ledger.read].reverse()) if (!seen.has(p)) (seen.add(p), out.push(p));
  return out;
}

function restoreFiles(paths: string[], input: RebuildInput): { blocks: ContentBlock[]; restored: string[] } {
  const { budgets: b, counter, readFile } = input;
  const blocks: ContentBlock[] = [];
  const restored: string[] = [];
  if (!readFile || b.restoreFiles <= 0) return { blocks, restored };
  let total = 0;
  for (const path of paths) {
    if (restored.length >= b.restoreFiles) break;
    const text = readFile(path);
    if (text === undefined || text.includes("\u0000")) continue;
    const lines = text.split("\n");
    let shown = lines.length;
    let body = text;
    const cap = Math.min(b.restoreFileTokens, b.restoreTotalTokens - total);
    if (cap <= 200) break;
    while (counter.text(body) > cap && shown > 1) {
      shown = Math.floor(shown * 0.7);
      body = lines.slice(0, shown).join("\n");
    }
    const block = restoredFile.render(path, body, shown < lines.length ? `1-${shown} of ${lines.length}` : undefined);
    total += counter.text(block);
    blocks.push({ type: "text", text: block });
    restored.push(path);
  }
  if (blocks.length) {
    blocks.unshift({ type: "text", text: FILES_RESTORED_TAG });
  }
  return { blocks, restored };
}

/** The history after a summary: continuation note, summary, the user's messages, ledger, restored files, todos, attachments, and the newest rounds whole. */
export function rebuild(input: RebuildInput): RebuildResult {
  const { history, counter, budgets } = input;
  let start = tailStart(history, budgets.keepTailTokens, counter);
  if (input.keepFrom !== undefined && input.keepFrom < start) {
    let k = input.keepFrom;
    while (k > 1 && history[k]?.role !== "assistant") k--;
    if (k >= 1) start = k;
  }
  const before = history.slice(0, start);
  const tail = history.slice(start);

  const tailTyped = userMessagesOf(tail);
  const carried = userMessagesOf(before);
  const sel = selectUserMessages(carried, budgets.userMessagesTokens, counter, budgets.latestRequestTokens);
  const ledger = ledgerOf(history);
  const todos = todosOf(history);

  const where = input.archivePath ? ` The full transcript is at ${input.archivePath};` : " The full transcript is kept on disk;";
  const head = input.server
    ? `${REBUILD_TAG} an earlier conversation that was compacted (${input.kind}, ${before.length} messages summarised by the server, above).${where} use the recall tool to search it or read any part of it.]`
    : `${REBUILD_TAG} an earlier conversation that was compacted (${input.kind}, ${before.length} messages summarised).${where} ` +
      `use the recall tool to search it or read any part of it. Summary of the conversation so far:]\n\n` +
      summary.render(input.summary);

  const blocks: ContentBlock[] = [{ type: "text", text: head }];
  const kept = sel.latest !== undefined && tailTyped.length > 0 ? [...sel.kept, sel.latest] : sel.kept;
  for (const t of kept) blocks.push({ type: "text", text: userMessage.render(t) });
  if (sel.latest !== undefined && tailTyped.length === 0) blocks.push({ type: "text", text: latestRequest.render(sel.latest) });
  const attachments = carryAttachments(before, budgets.attachmentTokens ?? budgets.restoreTotalTokens, counter, input.archivePath ? ` (${input.archivePath})` : "");
  blocks.push(...attachments.blocks);
  if (ledger.read.size + ledger.modified.size > 0) blocks.push({ type: "text", text: renderLedgerWithin(ledger, budgets.ledgerTokens, counter) });
  // The commands run in the summarised part and how they ended, verbatim (a summary may not say).
  const work = workRecordOf(before, carriedWorkOf(before));
  const workText = renderWorkWithin(work, budgets.workTokens ?? 1_000, counter);
  if (workText) blocks.push({ type: "text", text: workText });
  const files = restoreFiles(recentlyRead(history, ledger), input);
  blocks.push(...files.blocks);
  if (todos) blocks.push({ type: "text", text: todos });
  if (tail.length === 0) {
    blocks.push({ type: "text", text: `${CONTINUE_TAG}, following the user's latest request; do not ask the user to repeat anything.]` });
  }

  // The server's own compaction block stays first, verbatim: it is the server's summary of what
  // came before it (never summarised over), and the API ignores whatever precedes it.
  const server = input.server ?? leadingCompaction(history);
  return {
    history: [...(server ? [{ role: "assistant" as const, content: [server] }] : []), { role: "user", content: blocks }, ...tail],
    tailStart: start,
    restored: files.restored,
    ledger,
    userMessagesKept: kept.length + (sel.latest !== undefined && tailTyped.length === 0 ? 1 : 0),
    userMessagesDropped: sel.dropped,
  };
}
