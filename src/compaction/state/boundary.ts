// What a compaction boundary records beyond its numbers: what it removed (the transcript's message
// uuids, each tool call whose result left the context and where its full text lives now) and what
// it carried into the new context (the user's messages, the file ledger, restored files, todos,
// attachments). Pure: the transcript's uuid lookup is passed in.
import type { Message } from "../../messages/types.ts";
import { ledgerSizes } from "./ledger-record.ts";
import { ledgerTag, persisted, restoredFile, tagOf } from "./tags.ts";

export interface RemovedToolResult {
  tool_use_id: string;
  name?: string;
  /** Where the full output is now: "transcript" (the session transcript), or the saved file's path. */
  full_text: string;
  /** The transcript line (message uuid) that holds the result, when known. */
  message_uuid?: string;
}

export interface BoundaryDetails {
  removed: { messages: number; uuids: string[]; tool_results: RemovedToolResult[] };
  carried: { user_messages: number; latest_request: boolean; ledger: { read: number; modified: number }; restored_files: string[]; todos: boolean; attachments: number };
}

const blocks = (m: Message) => (typeof m.content === "string" ? [{ type: "text" as const, text: m.content }] : m.content);

/**
 * boundaryDetails of a snip, looking only at what it removed (`before[from..to)`) and the message
 * it rewrote (`before[from - 1]`, now `after[from - 1]`). That holds when `after` is exactly
 * `before` with that range cut out and that one message replaced, cut where snip cuts, its tool
 * calls unique and each result answering the call just before it (as repair leaves a history):
 * nothing else can differ, so a snip in a long history no longer walks all of both. Any other
 * shape gets boundaryDetails itself.
 */
export function snipDetails(before: readonly Message[], after: readonly Message[], from: number, to: number, uuidOf?: (m: Message) => string | undefined): BoundaryDetails {
  const generic = () => boundaryDetails(before, after, uuidOf);
  // Cut as snip cuts (../layers/snip.ts): after a user message, before an assistant one, so no
  // result outside answers a call inside.
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to <= from || to >= before.length || before[from - 1]!.role !== "user" || before[to]!.role !== "assistant" || after.length !== before.length - (to - from)) return generic();
  for (let i = 0; i < from - 1; i++) if (after[i] !== before[i]) return generic();
  for (let i = to, j = from; i < before.length; i++, j++) if (after[j] !== before[i]) return generic();
  const removed = before.slice(from, to);
  const names = new Map<string, string>();
  for (const m of removed) if (typeof m.content !== "string") for (const b of m.content) if (b.type === "tool_use") {
    if (names.has(b.id)) return generic();
    names.set(b.id, b.name);
  }
  // The rewritten message keeps its own blocks: a call in it is still in the context.
  const bounded = after[from - 1]!;
  if (before.includes(bounded)) return generic();
  if (typeof bounded.content !== "string") for (const b of bounded.content) if (b.type === "tool_use" && names.has(b.id)) return generic();
  for (const m of removed) if (typeof m.content !== "string") for (const b of m.content) if (b.type === "tool_result" && !names.has(b.tool_use_id)) return generic();
  // The message it rewrote is gone too (its blocks live on in the new one): its results answer
  // the call just before it, which stays.
  const was = before[from - 1]!;
  if (typeof was.content !== "string" && was.content.some((b) => b.type === "tool_result")) {
    const prev = before[from - 2];
    const asked = new Set<string>();
    if (prev && typeof prev.content !== "string") for (const b of prev.content) if (b.type === "tool_use") asked.add(b.id);
    if (was.content.some((b) => b.type === "tool_result" && !asked.has(b.tool_use_id))) return generic();
  }
  const gone = [was, ...removed];
  const tool_results = removedResults(gone, (id) => names.has(id), names, uuidOf);
  const carried = carriedBy([bounded], new Set([was]));
  const uuids = uuidOf ? gone.map(uuidOf).filter((u): u is string => typeof u === "string") : [];
  return { removed: { messages: gone.length, uuids, tool_results }, carried };
}

export function boundaryDetails(before: readonly Message[], after: readonly Message[], uuidOf?: (m: Message) => string | undefined): BoundaryDetails {
  // Tool calls whose call or result is no longer in the context, with where the result is kept.
  const keptIds = new Set<string>();
  for (const m of after) if (typeof m.content !== "string") for (const b of m.content) if (b.type === "tool_use") keptIds.add(b.id);
  // A call still in the context is never listed: its name and result are not looked up (a snip
  // keeps most calls; a result's marker and message uuid cost more than the test).
  const names = new Map<string, string>();
  for (const m of before) if (typeof m.content !== "string") for (const b of m.content) if (b.type === "tool_use" && !keptIds.has(b.id)) names.set(b.id, b.name);
  const tool_results = removedResults(before, (id) => !keptIds.has(id), names, uuidOf);
  const carried = carriedBy(after, new Set<Message>(before));
  const kept = new Set<Message>(after);
  const removed: Message[] = [];
  for (const m of before) if (!kept.has(m)) removed.push(m);
  const uuids = uuidOf ? removed.map(uuidOf).filter((u): u is string => typeof u === "string") : [];
  return { removed: { messages: removed.length, uuids, tool_results }, carried };
}

/** The results in `messages` whose call left the context (`gone`), with where each is kept now. */
function removedResults(messages: readonly Message[], gone: (id: string) => boolean, names: ReadonlyMap<string, string>, uuidOf?: (m: Message) => string | undefined): RemovedToolResult[] {
  const results = new Map<string, { where: string; uuid?: string }>();
  for (const m of messages) {
    if (typeof m.content === "string") continue;
    let uuid: string | undefined | null = null;
    for (const b of m.content) {
      if (b.type !== "tool_result" || !gone(b.tool_use_id)) continue;
      const where = typeof b.content === "string" && persisted.is(b.content) ? (persisted.path(b.content) ?? "transcript") : "transcript";
      if (uuid === null) uuid = uuidOf?.(m);
      results.set(b.tool_use_id, uuid ? { where, uuid } : { where });
    }
  }
  const out: RemovedToolResult[] = [];
  for (const [id, r] of results) {
    // Keys in this order: tool_use_id, name?, full_text, message_uuid? (the line's JSON).
    const t = { tool_use_id: id } as RemovedToolResult;
    const name = names.get(id);
    if (name !== undefined) t.name = name;
    t.full_text = r.where;
    if (r.uuid) t.message_uuid = r.uuid;
    out.push(t);
  }
  return out;
}

/** What the messages of `after` that are not in `was` carry (carried means written by the compaction). */
function carriedBy(after: readonly Message[], was: ReadonlySet<Message>): BoundaryDetails["carried"] {
  const carried: BoundaryDetails["carried"] = { user_messages: 0, latest_request: false, ledger: { read: 0, modified: 0 }, restored_files: [], todos: false, attachments: 0 };
  for (const m of after) {
    if (was.has(m)) continue;
    for (const b of blocks(m)) {
      if (b.type !== "text") continue;
      const tag = tagOf(b.text);
      if (tag === "user_message") carried.user_messages++;
      else if (tag === "latest_request") carried.latest_request = true;
      else if (tag === "todos") carried.todos = true;
      else if (tag === "attachments") carried.attachments += b.text.split("\n").filter((l) => l.startsWith("- ")).length;
      else if (tag === "ledger") carried.ledger = ledgerSizes(b.text);
      else {
        const restored = restoredFile.path(b.text);
        if (restored !== undefined) carried.restored_files.push(restored);
        // A snip's note carries the ledger inside its text.
        if (tag === "lethe_note" && ledgerTag.in(b.text)) carried.ledger = ledgerSizes(b.text);
      }
    }
  }
  return carried;
}
