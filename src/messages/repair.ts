// Repair: fix what can be fixed so that validate() reports nothing, without losing text.
import type { ContentBlock, Message, Role, ToolResultBlock } from "./types.ts";
import { type ValidateOptions, isBlankText, isValid } from "./validate.ts";
// ---------------------------------------------------------------------------------------------
// repair

export type FixKind =
  | "dropped_empty_text"
  | "dropped_empty_message"
  | "dropped_misplaced_tool_use"
  | "moved_misplaced_tool_result"
  | "dropped_orphan_tool_result"
  | "dropped_duplicate_tool_result"
  | "merged_messages"
  | "prepended_user_message"
  | "renamed_duplicate_tool_use_id"
  | "moved_tool_result_first"
  | "answered_tool_use";

export interface Fix {
  kind: FixKind;
  /** Index in the INPUT history of the message concerned (the first one, for merged messages). */
  index: number;
  toolUseId?: string;
  /** One line, human-readable. */
  message: string;
}

export interface RepairOptions extends ValidateOptions {
  /** Text of the user message prepended when the history starts with an assistant message. */
  continuationText?: string;
}

export interface RepairResult {
  history: Message[];
  fixes: Fix[];
}

export const CONTINUATION_TEXT = "[conversation continues]";

/** The text of the error result given to a tool_use that has none. */
export function missingResultText(name: string | undefined): string {
  return `[lethe] no result was recorded for this ${name ? `${name} ` : ""}tool call (it may have been interrupted); run it again if the result is still needed.`;
}

interface Entry {
  role: Role;
  blocks: ContentBlock[];
  /** The input message, while this entry is exactly it (then it is reused as is). */
  orig: Message | null;
  /** First input message of this entry (extra fields are kept from it). */
  base: Message | null;
  src: number;
  /** tool_result blocks found in this assistant message, to move into the next user message. */
  misplaced: ToolResultBlock[];
  /** tool_use ids of this assistant entry (an array: a Set per message was a tenth of a 100k repair's heap). */
  useIds: string[];
  /** Built on demand for lookups in an entry with many ids. */
  useSet: Set<string> | null;
  /** `blocks` is this entry's own array (safe to append to), not an input message's. */
  owned: boolean;
}

/**
 * Fix what can be fixed so that validate() reports nothing; never mutates the input.
 * A valid history is returned as is (same array). Untouched messages keep their identity.
 * Never drops text other than blank text. Idempotent.
 */
export function repair(history: readonly Message[], opts: RepairOptions = {}): RepairResult {
  if (isValid(history, opts)) return { history: history as Message[], fixes: [] };

  const fixes: Fix[] = [];
  const out: Entry[] = [];
  let mergeRun: { entry: Entry; first: number } | undefined;

  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    const role: Role = m.role === "assistant" ? "assistant" : "user";
    let changed = role !== m.role;
    const content = m.content as unknown;

    let blocks: ContentBlock[];
    // Allocated on first use: most messages have none (a 100k-message repair is GC-bound otherwise).
    let misplaced: ToolResultBlock[] = NONE;
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
      const last = out[out.length - 1];
      const answering = role === "user" && last ? (last.role === "assistant" ? last : out[out.length - 2]) : undefined;
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
        } else if (b.type === "tool_result" && !(answering && hasUse(answering, b.tool_use_id))) {
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
      const last = out[out.length - 1];
      if (misplaced.length > 0 && last?.role === "assistant") {
        addMisplaced(last, misplaced);
      } else {
        for (const r of misplaced) dropOrphan(fixes, i, r);
      }
      fixes.push({ kind: "dropped_empty_message", index: i, message: `dropped ${role} message ${i}: nothing left in it` });
      continue;
    }

    if (out.length === 0 && role === "assistant") {
      const text = opts.continuationText ?? CONTINUATION_TEXT;
      out.push(entry("user", [{ type: "text", text }], null, null, i));
      fixes.push({
        kind: "prepended_user_message",
        index: i,
        message: `the history started with an assistant message; prepended a user message "${text}"`,
      });
    }

    const last = out[out.length - 1];
    if (last && last.role === role) {
      // Appended in place (copied once, on the first merge): a run of k same-role messages is O(k).
      if (!last.owned) {
        last.blocks = last.blocks.slice();
        last.owned = true;
      }
      for (const b of blocks) last.blocks.push(b);
      last.orig = null;
      addMisplaced(last, misplaced);
      if (role === "assistant") addUseIds(last, blocks);
      // One fix per run of merges (a run of 100k same-role messages is one fix, not 100k).
      const prev = fixes[fixes.length - 1];
      if (prev?.kind === "merged_messages" && prev.index === last.src && mergeRun?.entry === last) {
        prev.message = `merged ${role} messages ${mergeRun.first}–${i} into the ${role} message before them (${last.src})`;
      } else {
        mergeRun = { entry: last, first: i };
        fixes.push({ kind: "merged_messages", index: last.src, message: `merged ${role} message ${i} into the ${role} message before it (${last.src})` });
      }
    } else {
      const e = entry(role, blocks, changed ? null : m, m, i);
      addMisplaced(e, misplaced);
      if (role === "assistant") addUseIds(e, blocks);
      out.push(e);
    }
  }

  // Pairing: every tool_use answered exactly once, right after; results first; unique ids.
  // A new name `<id>_dup<n>` can only collide with an id of the input: two (id, n) pairs never
  // spell the same name (the digits after the last "_dup" give n, the rest the id). So only input
  // ids that already look like one need checking, and names made here need no set of their own.
  const dupLike = new Set<string>();
  for (const e of out) if (e.role === "assistant") for (const id of e.useIds) if (DUP_NAME.test(id)) dupLike.add(id);
  const seen = new Set<string>();
  // Per id, the next suffix to try: k duplicates of one id cost O(k), not O(k²).
  const nextDup = new Map<string, number>();
  const freshId = (id: string): string => {
    for (let n = nextDup.get(id) ?? 1; ; n++) {
      const candidate = `${id}_dup${n}`;
      if (dupLike.size === 0 || !dupLike.has(candidate)) {
        nextDup.set(id, n + 1);
        return candidate;
      }
    }
  };

  const renames = new Map<string, { fix: Fix; count: number; first: string; last: string }>();
  const waiting: Waiting = new Map();
  const order: Use[] = [];
  const st: PairState = { waiting, fixes, results: [], e: out[0]!, next: out[0]!, changed: false };
  for (let j = 0; j < out.length; j++) {
    const e = out[j]!;
    if (e.role !== "assistant") continue;

    // Rename duplicate ids; remember, per original id, the uses still waiting for a result.
    // Per original id, the uses in order and how many are claimed (a cursor, not a scan).
    // One map and list for the whole pass, emptied per message: no allocation per message.
    waiting.clear();
    order.length = 0;
    let renamed: ContentBlock[] | null = null;
    for (let k = 0; k < e.blocks.length; k++) {
      const b = e.blocks[k]!;
      if (b.type !== "tool_use") continue;
      let id = b.id;
      if (seen.has(id)) {
        id = freshId(b.id);
        renamed ??= e.blocks.slice();
        renamed[k] = { ...b, id };
        // One fix per duplicated id, however many times it recurs (its line is written at the end).
        const run = renames.get(b.id);
        if (run) {
          run.count++;
          run.last = id;
        } else {
          const fix: Fix = { kind: "renamed_duplicate_tool_use_id", index: e.src, toolUseId: b.id, message: "" };
          fixes.push(fix);
          renames.set(b.id, { fix, count: 1, first: id, last: id });
        }
      }
      // A name made here cannot be any later id (see freshId): only ids as given need remembering.
      if (id === b.id) seen.add(id);
      const w = { id, name: b.name, claimed: false };
      order.push(w);
      const list = waiting.get(b.id);
      if (list) list.list.push(w);
      else waiting.set(b.id, { list: [w], next: 0 });
    }
    if (renamed) {
      e.blocks = renamed;
      e.orig = null;
    }

    if (order.length === 0) {
      for (const r of e.misplaced) dropOrphan(fixes, e.src, r);
      continue;
    }

    let next = out[j + 1];
    if (!next) {
      if (opts.allowTrailingToolUse && e.misplaced.length === 0) continue;
      next = entry("user", [], null, null, e.src);
      out.push(next);
    }

    // One state object for the whole pass and a module-level claim(): no closure per message
    // (a 100k-message repair was spending more time collecting garbage than pairing).
    const results: ContentBlock[] = [];
    const rest: ContentBlock[] = [];
    st.results = results;
    st.e = e;
    st.next = next;
    st.changed = e.misplaced.length > 0;
    let reordered = false;
    for (const r of e.misplaced) claimResult(st, r, true);
    for (const b of next.blocks) {
      if (b.type !== "tool_result") {
        rest.push(b);
        continue;
      }
      if (rest.length > 0) reordered = true;
      claimResult(st, b, false);
    }
    for (const w of order) {
      if (w.claimed) continue;
      st.changed = true;
      results.push({
        type: "tool_result",
        tool_use_id: w.id,
        content: missingResultText(w.name),
        is_error: true,
      });
      fixes.push({
        kind: "answered_tool_use",
        index: e.src,
        toolUseId: w.id,
        message: `tool_use ${w.id} had no result; answered it with an error result`,
      });
    }
    if (reordered) {
      st.changed = true;
      fixes.push({
        kind: "moved_tool_result_first",
        index: next.src,
        message: `moved tool_result blocks before the other blocks of a user message`,
      });
    }
    if (st.changed) {
      next.blocks = rest.length > 0 ? results.concat(rest) : results;
      next.orig = null;
    }
  }

  for (const [id, r] of renames) {
    r.fix.message =
      r.count === 1
        ? `tool_use id ${id} was already used; renamed to ${r.first}`
        : `tool_use id ${id} was used ${r.count + 1} times; renamed the ${r.count} later uses to ${r.first} … ${r.last}`;
  }
  const repaired = out.map((e): Message => {
    if (e.orig) return e.orig;
    return e.base ? { ...e.base, role: e.role, content: e.blocks } : { role: e.role, content: e.blocks };
  });
  return { history: repaired, fixes };
}

type Use = { id: string; name: string; claimed: boolean };
type Waiting = Map<string, { list: Use[]; next: number }>;
interface PairState {
  waiting: Waiting;
  fixes: Fix[];
  results: ContentBlock[];
  e: Entry;
  next: Entry;
  changed: boolean;
}

/** A tool_result claims the first unanswered use of its id (renamed ids follow), or is dropped. */
function claimResult(st: PairState, b: ToolResultBlock, moved: boolean): void {
  const q = st.waiting.get(b.tool_use_id);
  const w = q && q.next < q.list.length ? q.list[q.next++] : undefined;
  if (!w) {
    st.changed = true;
    if (q) {
      st.fixes.push({
        kind: "dropped_duplicate_tool_result",
        index: st.next.src,
        toolUseId: b.tool_use_id,
        message: `dropped a second tool_result for tool_use ${b.tool_use_id}`,
      });
    } else {
      dropOrphan(st.fixes, st.next.src, b);
    }
    return;
  }
  w.claimed = true;
  if (moved) {
    st.fixes.push({
      kind: "moved_misplaced_tool_result",
      index: st.e.src,
      toolUseId: b.tool_use_id,
      message: `moved tool_result ${b.tool_use_id} from an assistant message to the user message after it`,
    });
  }
  if (w.id !== b.tool_use_id) {
    st.changed = true;
    st.results.push({ ...b, tool_use_id: w.id });
  } else {
    st.results.push(b);
  }
}

function entry(role: Role, blocks: ContentBlock[], orig: Message | null, base: Message | null, src: number): Entry {
  return { role, blocks, orig, base, src, misplaced: NONE, useIds: role === "assistant" ? [] : NO_IDS, useSet: null, owned: false };
}

/** A name repair might have made (`<id>_dup<n>`). */
const DUP_NAME = /_dup\d+$/;

/** Shared empties: user entries never hold tool_use ids, and most entries no misplaced results. */
const NONE: ToolResultBlock[] = [];
const NO_IDS: string[] = [];

function addMisplaced(e: Entry, results: readonly ToolResultBlock[]): void {
  if (results.length === 0) return;
  if (e.misplaced === NONE) e.misplaced = [];
  for (const r of results) e.misplaced.push(r);
}

function addUseIds(e: Entry, blocks: readonly ContentBlock[]): void {
  for (const b of blocks) {
    if (b.type !== "tool_use") continue;
    e.useIds.push(b.id);
    e.useSet?.add(b.id);
  }
}

/** Few ids: a scan; many (a merged run): a Set, built once and kept up to date. */
function hasUse(e: Entry, id: string): boolean {
  if (e.useIds.length <= 8) return e.useIds.includes(id);
  e.useSet ??= new Set(e.useIds);
  return e.useSet.has(id);
}

function dropOrphan(fixes: Fix[], index: number, r: ToolResultBlock): void {
  fixes.push({
    kind: "dropped_orphan_tool_result",
    index,
    toolUseId: r.tool_use_id,
    message: `dropped tool_result ${r.tool_use_id}: no matching tool_use in the preceding assistant message`,
  });
}
