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

export function boundaryDetails(before: readonly Message[], after: readonly Message[], uuidOf?: (m: Message) => string | undefined): BoundaryDetails {
  // Tool calls whose call or result is no longer in the context, with where the result is kept.
  const keptIds = new Set<string>();
  for (const m of after) if (typeof m.content !== "string") for (const b of m.content) if (b.type === "tool_use") keptIds.add(b.id);
  // A call still in the context is never listed: its name and result are not looked up (a snip
  // keeps most calls; a result's marker and message uuid cost more than the test).
  const names = new Map<string, string>();
  const results = new Map<string, { where: string; uuid?: string }>();
  for (const m of before) {
    if (typeof m.content === "string") continue;
    let uuid: string | undefined | null = null;
    for (const b of m.content) {
      if (b.type === "tool_use") {
        if (!keptIds.has(b.id)) names.set(b.id, b.name);
      } else if (b.type === "tool_result" && !keptIds.has(b.tool_use_id)) {
        const where = typeof b.content === "string" && persisted.is(b.content) ? (persisted.path(b.content) ?? "transcript") : "transcript";
        if (uuid === null) uuid = uuidOf?.(m);
        results.set(b.tool_use_id, uuid ? { where, uuid } : { where });
      }
    }
  }
  const tool_results: RemovedToolResult[] = [];
  for (const [id, r] of results) {
    // Keys in this order: tool_use_id, name?, full_text, message_uuid? (the line's JSON).
    const t = { tool_use_id: id } as RemovedToolResult;
    const name = names.get(id);
    if (name !== undefined) t.name = name;
    t.full_text = r.where;
    if (r.uuid) t.message_uuid = r.uuid;
    tool_results.push(t);
  }

  const carried: BoundaryDetails["carried"] = { user_messages: 0, latest_request: false, ledger: { read: 0, modified: 0 }, restored_files: [], todos: false, attachments: 0 };
  const was = new Set<Message>(before);
  for (const m of after) {
    if (was.has(m)) continue; // carried means written by the compaction
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
  const kept = new Set<Message>(after);
  const removed: Message[] = [];
  for (const m of before) if (!kept.has(m)) removed.push(m);
  const uuids = uuidOf ? removed.map(uuidOf).filter((u): u is string => typeof u === "string") : [];
  return { removed: { messages: removed.length, uuids, tool_results }, carried };
}
