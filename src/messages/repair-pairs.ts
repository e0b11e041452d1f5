// repair()'s second pass: every tool_use answered exactly once, right after it, results first,
// ids unique. Runs over rows whose roles already alternate (the first pass merged the rest).
import { type Fix, type RepairOptions, type RepairTable, misplacedOf, pushRow, replaceRow } from "./repair-table.ts";
import type { ContentBlock, ToolResultBlock } from "./types.ts";

/** The text of the error result given to a tool_use that has none. */
export function missingResultText(name: string | undefined): string {
  return `[lethe] no result was recorded for this ${name ? `${name} ` : ""}tool call (it may have been interrupted); run it again if the result is still needed.`;
}

/** A name repair might have made (`<id>_dup<n>`). */
const DUP_NAME = /_dup\d+$/;

type Use = { id: string; name: string; claimed: boolean };
type Waiting = Map<string, { list: Use[]; next: number }>;
interface PairState {
  waiting: Waiting;
  fixes: Fix[];
  results: ContentBlock[];
  /** Input index of the assistant row and of the user row after it (for the fixes). */
  useSrc: number;
  nextSrc: number;
  changed: boolean;
}

export function pairToolUses(t: RepairTable, fixes: Fix[], opts: RepairOptions): void {
  // A new name `<id>_dup<n>` can only collide with an id of the input: two (id, n) pairs never
  // spell the same name (the digits after the last "_dup" give n, the rest the id). So only input
  // ids that already look like one need checking, and names made here need no set of their own.
  const dupLike = new Set<string>();
  for (let j = 0; j < t.rows; j++) {
    if (t.assistant[j] === 1) for (const b of t.blocks[j]!) if (b.type === "tool_use" && DUP_NAME.test(b.id)) dupLike.add(b.id);
  }
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
  // Per row: the ids as given and as they will be (after renaming). Reused: no allocation per row.
  const given: string[] = [];
  const ids: string[] = [];
  const st: PairState = { waiting, fixes, results: [], useSrc: 0, nextSrc: 0, changed: false };
  for (let j = 0; j < t.rows; j++) {
    if (t.assistant[j] !== 1) continue;
    const blocks = t.blocks[j]!;

    // Rename duplicate ids.
    given.length = 0;
    ids.length = 0;
    let renamed: ContentBlock[] | null = null;
    for (let k = 0; k < blocks.length; k++) {
      const b = blocks[k]!;
      if (b.type !== "tool_use") continue;
      let id = b.id;
      if (seen.has(id)) {
        id = freshId(b.id);
        renamed ??= blocks.slice();
        renamed[k] = { ...b, id };
        // One fix per duplicated id, however many times it recurs (its line is written at the end).
        const run = renames.get(b.id);
        if (run) {
          run.count++;
          run.last = id;
        } else {
          const fix: Fix = { kind: "renamed_duplicate_tool_use_id", index: t.src[j]!, toolUseId: b.id, message: "" };
          fixes.push(fix);
          renames.set(b.id, { fix, count: 1, first: id, last: id });
        }
      }
      // A name made here cannot be any later id (see freshId): only ids as given need remembering.
      if (id === b.id) seen.add(id);
      given.push(b.id);
      ids.push(id);
    }
    if (renamed) replaceRow(t, j, renamed);

    const misplaced = misplacedOf(t, j);
    if (ids.length === 0) {
      for (const r of misplaced) dropOrphan(fixes, t.src[j]!, r);
      continue;
    }

    const next = j + 1;
    if (next >= t.rows) {
      if (opts.allowTrailingToolUse && misplaced.length === 0) continue;
      pushRow(t, "user", [], null, null, t.src[j]!);
    }
    const answers = t.blocks[next]!;
    if (misplaced.length === 0 && answeredInOrder(given, answers)) {
      // The usual case: the next message answers each call, in order, results first. Only a
      // renamed id needs its result renamed too.
      if (renamed) {
        let out: ContentBlock[] | null = null;
        for (let k = 0; k < ids.length; k++) {
          if (ids[k] === given[k]) continue;
          out ??= answers.slice();
          out[k] = { ...(answers[k] as ToolResultBlock), tool_use_id: ids[k]! };
        }
        if (out) replaceRow(t, next, out);
      }
      continue;
    }

    // Otherwise: per id as given, the uses in order and how many are claimed (a cursor, not a scan).
    waiting.clear();
    order.length = 0;
    let k = 0;
    for (const b of t.blocks[j]!) {
      if (b.type !== "tool_use") continue;
      const w = { id: ids[k]!, name: b.name, claimed: false };
      order.push(w);
      const list = waiting.get(given[k]!);
      if (list) list.list.push(w);
      else waiting.set(given[k]!, { list: [w], next: 0 });
      k++;
    }

    // One state object for the whole pass and a module-level claim(): no closure per row.
    const results: ContentBlock[] = [];
    const rest: ContentBlock[] = [];
    st.results = results;
    st.useSrc = t.src[j]!;
    st.nextSrc = t.src[next]!;
    st.changed = misplaced.length > 0;
    let reordered = false;
    for (const r of misplaced) claimResult(st, r, true);
    for (const b of answers) {
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
      results.push({ type: "tool_result", tool_use_id: w.id, content: missingResultText(w.name), is_error: true });
      fixes.push({
        kind: "answered_tool_use",
        index: t.src[j]!,
        toolUseId: w.id,
        message: `tool_use ${w.id} had no result; answered it with an error result`,
      });
    }
    if (reordered) {
      st.changed = true;
      fixes.push({
        kind: "moved_tool_result_first",
        index: t.src[next]!,
        message: `moved tool_result blocks before the other blocks of a user message`,
      });
    }
    if (st.changed) replaceRow(t, next, rest.length > 0 ? results.concat(rest) : results);
  }

  for (const [id, r] of renames) {
    r.fix.message =
      r.count === 1
        ? `tool_use id ${id} was already used; renamed to ${r.first}`
        : `tool_use id ${id} was used ${r.count + 1} times; renamed the ${r.count} later uses to ${r.first} … ${r.last}`;
  }
}

/**
 * `blocks` starts with one tool_result per id of `given`, in that order, and has no other
 * tool_result: nothing to claim, move or add. Ids repeated within the message go the long way.
 */
function answeredInOrder(given: readonly string[], blocks: readonly ContentBlock[]): boolean {
  const n = given.length;
  if (blocks.length < n || n > 8) return false;
  for (let k = 0; k < n; k++) {
    const b = blocks[k]!;
    if (b.type !== "tool_result" || b.tool_use_id !== given[k]) return false;
    for (let q = 0; q < k; q++) if (given[q] === given[k]) return false;
  }
  for (let k = n; k < blocks.length; k++) if (blocks[k]!.type === "tool_result") return false;
  return true;
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
        index: st.nextSrc,
        toolUseId: b.tool_use_id,
        message: `dropped a second tool_result for tool_use ${b.tool_use_id}`,
      });
    } else {
      dropOrphan(st.fixes, st.nextSrc, b);
    }
    return;
  }
  w.claimed = true;
  if (moved) {
    st.fixes.push({
      kind: "moved_misplaced_tool_result",
      index: st.useSrc,
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

export function dropOrphan(fixes: Fix[], index: number, r: ToolResultBlock): void {
  fixes.push({
    kind: "dropped_orphan_tool_result",
    index,
    toolUseId: r.tool_use_id,
    message: `dropped tool_result ${r.tool_use_id}: no matching tool_use in the preceding assistant message`,
  });
}
