// The working state of repair(): the messages being built, one row per output message, held as
// parallel arrays indexed by row rather than one object per message. At 100k messages the
// per-message objects were a third of what the garbage collector had to copy.
//
// A plain object made by a literal, not a class instance: a class's fields give its instances a
// map reached only through transitions, which a full collection with no instance alive may clear,
// and then every optimised function that used it is thrown away (repair ran 3-5× slower after).
import type { ContentBlock, Message, Role, ToolResultBlock } from "./types.ts";
import type { ValidateOptions } from "./validate.ts";

// What repair() reports and takes (here, so that repair.ts and repair-pairs.ts both import them
// from the module below them rather than from each other).
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


/** Shared empty list: most rows have no misplaced results. */
export const NONE: readonly ToolResultBlock[] = [];

export interface RepairTable {
  /** Rows so far. */
  rows: number;
  /** 1 for an assistant row, 0 for a user row. Typed arrays sized once: no growth, nothing to scan. */
  assistant: Uint8Array;
  blocks: ContentBlock[][];
  /** The input message, while the row is exactly it (then it is reused as is). */
  orig: (Message | null)[];
  /** First input message of the row (its extra fields are kept). */
  base: (Message | null)[];
  /** Index in the input of the row's first message. */
  src: Int32Array;
  /** 1 when `blocks[row]` is the row's own array (safe to append to), not an input message's. */
  owned: Uint8Array;
  /** tool_result blocks found in an assistant row, to move into the user row after it. */
  misplaced: Map<number, ToolResultBlock[]>;
  /** tool_use ids of large (merged) assistant rows, built on demand and kept up to date. */
  useSets: Map<number, Set<string>>;
}

/** A table for at most `capacity` rows (repair adds at most two: a first user message, a last answer). */
export function newTable(capacity: number): RepairTable {
  return {
    rows: 0,
    assistant: new Uint8Array(capacity),
    blocks: [],
    orig: [],
    base: [],
    src: new Int32Array(capacity),
    owned: new Uint8Array(capacity),
    misplaced: new Map(),
    useSets: new Map(),
  };
}

export function pushRow(t: RepairTable, role: Role, blocks: ContentBlock[], orig: Message | null, base: Message | null, src: number): number {
  const row = t.rows++;
  t.assistant[row] = role === "assistant" ? 1 : 0;
  t.blocks.push(blocks);
  t.orig.push(orig);
  t.base.push(base);
  t.src[row] = src;
  return row;
}

/** Append blocks to a row (copying the row's array once, on the first append). */
export function appendToRow(t: RepairTable, row: number, blocks: readonly ContentBlock[]): void {
  if (!t.owned[row]) {
    t.blocks[row] = t.blocks[row]!.slice();
    t.owned[row] = 1;
  }
  const into = t.blocks[row]!;
  for (const b of blocks) into.push(b);
  t.orig[row] = null;
  const set = t.useSets.get(row);
  if (set) for (const b of blocks) if (b.type === "tool_use") set.add(b.id);
}

/** Replace a row's blocks (the row no longer is its input message). */
export function replaceRow(t: RepairTable, row: number, blocks: ContentBlock[]): void {
  t.blocks[row] = blocks;
  t.owned[row] = 1;
  t.orig[row] = null;
}

export function misplacedOf(t: RepairTable, row: number): readonly ToolResultBlock[] {
  return t.misplaced.get(row) ?? NONE;
}

export function addMisplaced(t: RepairTable, row: number, results: readonly ToolResultBlock[]): void {
  if (results.length === 0) return;
  const list = t.misplaced.get(row);
  if (list) for (const r of results) list.push(r);
  else t.misplaced.set(row, results.slice());
}

/** Whether the row has a tool_use with this id. Few blocks: a scan; many (a merged run): a Set. */
export function hasUse(t: RepairTable, row: number, id: string): boolean {
  const blocks = t.blocks[row]!;
  if (blocks.length <= 16) {
    for (const b of blocks) if (b.type === "tool_use" && b.id === id) return true;
    return false;
  }
  let set = t.useSets.get(row);
  if (!set) {
    set = new Set();
    for (const b of blocks) if (b.type === "tool_use") set.add(b.id);
    t.useSets.set(row, set);
  }
  return set.has(id);
}

/** The rows as messages: untouched ones are the input's own objects. */
export function rowsToMessages(t: RepairTable): Message[] {
  const out: Message[] = [];
  for (let row = 0; row < t.rows; row++) {
    const orig = t.orig[row];
    if (orig) {
      out.push(orig);
      continue;
    }
    const base = t.base[row];
    const role: Role = t.assistant[row] === 1 ? "assistant" : "user";
    const content = t.blocks[row]!;
    out.push(base ? { ...base, role, content } : { role, content });
  }
  return out;
}
