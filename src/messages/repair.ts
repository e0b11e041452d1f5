// Repair: fix what can be fixed so that validate() reports nothing, without losing text.
import { leadingCompaction } from "./compaction.ts";
import { dropOrphan, missingResultText, pairToolUses } from "./repair-pairs.ts";
import { type Fix, NONE, type RepairOptions, addMisplaced, appendToRow, hasUse, newTable, pushRow, rowsToMessages } from "./repair-table.ts";
import type { ContentBlock, Message, Role, ToolResultBlock } from "./types.ts";
import { isBlankText, isValid } from "./validate.ts";

export { missingResultText };
export type { Fix, FixKind, RepairOptions } from "./repair-table.ts";

export interface RepairResult {
  history: Message[];
  fixes: Fix[];
}

export const CONTINUATION_TEXT = "[conversation continues]";

/**
 * Fix what can be fixed so that validate() reports nothing; never mutates the input.
 * A valid history is returned as is (same array). Untouched messages keep their identity.
 * Never drops text other than blank text. Idempotent.
 *
 * Two passes: the first drops what is empty or misplaced and merges same-role runs (so roles
 * alternate), the second pairs every tool_use with its result (repair-pairs.ts).
 */
export function repair(history: readonly Message[], opts: RepairOptions = {}): RepairResult {
  if (isValid(history, opts)) return { history: history as Message[], fixes: [] };

  const fixes: Fix[] = [];
  const t = newTable(history.length + 2);
  let mergeRun: MergeRun | undefined;
  const mergeRuns: MergeRun[] = [];

  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    const role: Role = m.role === "assistant" ? "assistant" : "user";
    let changed = role !== m.role;
    const content = m.content as unknown;

    let blocks: ContentBlock[];
    // Allocated on first use: most messages have none (a 100k-message repair is GC-bound otherwise).
    let misplaced = NONE as ToolResultBlock[];
    if (typeof content === "string") {
      if (isBlankText(content)) {
        fixes.push({ kind: "dropped_empty_message", index: i, message: `dropped empty ${role} message ${i}` });
        continue;
      }
      blocks = [{ type: "text", text: content }];
    } else if (!Array.isArray(content) || content.length === 0) {
      fixes.push({ kind: "dropped_empty_message", index: i, message: `dropped empty ${role} message ${i}` });
      continue;
    } else {
      const src = content as ContentBlock[];
      // The assistant entry whose tool_use blocks a tool_result here may answer.
      const n = t.rows;
      const answering = role === "user" && n > 0 ? (t.assistant[n - 1] === 1 ? n - 1 : n - 2) : -1;
      let kept: ContentBlock[] | null = null; // allocated on the first dropped block
      for (let k = 0; k < src.length; k++) {
        const b = src[k]!;
        let drop = false;
        if (b.type === "text" && isBlankText(b.text)) {
          drop = true;
          fixes.push({ kind: "dropped_empty_text", index: i, message: `dropped empty text block ${k} of message ${i}` });
        } else if (b.type === "tool_use" && role === "user") {
          drop = true;
          fixes.push({
            kind: "dropped_misplaced_tool_use",
            index: i,
            toolUseId: b.id,
            message: `dropped tool_use ${b.id} found in user message ${i}`,
          });
        } else if (b.type === "tool_result" && role === "assistant") {
          drop = true;
          if (misplaced === NONE) misplaced = [];
          misplaced.push(b);
        } else if (b.type === "tool_result" && !(answering >= 0 && hasUse(t, answering, b.tool_use_id))) {
          drop = true;
          fixes.push({
            kind: "dropped_orphan_tool_result",
            index: i,
            toolUseId: b.tool_use_id,
            message: `dropped tool_result ${b.tool_use_id} in message ${i}: no matching tool_use in the preceding assistant message`,
          });
        }
        if (drop) kept ??= src.slice(0, k);
        else kept?.push(b);
      }
      if (kept) changed = true;
      blocks = kept ?? src;
    }

    if (blocks.length === 0) {
      const last = t.rows - 1;
      if (misplaced.length > 0 && last >= 0 && t.assistant[last] === 1) {
        addMisplaced(t, last, misplaced);
      } else {
        for (const r of misplaced) dropOrphan(fixes, i, r);
      }
      fixes.push({ kind: "dropped_empty_message", index: i, message: `dropped ${role} message ${i}: nothing left in it` });
      continue;
    }

    // A history the server compacted starts with its compaction block, as the API wants it.
    if (t.rows === 0 && role === "assistant" && !leadingCompaction([{ role, content: blocks }])) {
      const text = opts.continuationText ?? CONTINUATION_TEXT;
      pushRow(t, "user", [{ type: "text", text }], null, null, i);
      fixes.push({
        kind: "prepended_user_message",
        index: i,
        message: `the history started with an assistant message; prepended a user message "${text}"`,
      });
    }

    const last = t.rows - 1;
    if (last >= 0 && t.assistant[last] === (role === "assistant" ? 1 : 0)) {
      // Appended in place (copied once, on the first merge): a run of k same-role messages is O(k).
      appendToRow(t, last, blocks);
      addMisplaced(t, last, misplaced);
      // One fix per run of merges (a run of 100k same-role messages is one fix, not 100k); its
      // line is written once the run is known (runLine), not rebuilt for every message.
      if (mergeRun?.row === last && fixes[fixes.length - 1] === mergeRun.fix) {
        mergeRun.last = i;
      } else {
        const fix: Fix = { kind: "merged_messages", index: t.src[last]!, message: "" };
        fixes.push(fix);
        mergeRuns.push((mergeRun = { row: last, role, first: i, last: i, fix }));
      }
    } else {
      addMisplaced(t, pushRow(t, role, blocks, changed ? null : m, m, i), misplaced);
    }
  }

  for (const run of mergeRuns) run.fix.message = runLine(run, t.src[run.row]!);
  pairToolUses(t, fixes, opts);
  return { history: rowsToMessages(t), fixes };
}

interface MergeRun {
  row: number;
  role: Role;
  first: number;
  last: number;
  fix: Fix;
}

function runLine(r: MergeRun, into: number): string {
  return r.first === r.last
    ? `merged ${r.role} message ${r.first} into the ${r.role} message before it (${into})`
    : `merged ${r.role} messages ${r.first}–${r.last} into the ${r.role} message before them (${into})`;
}
