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

/** A transcript message line: its uuid, its place among the message lines its writer wrote (`ord`), and its bytes [at, end) in the file. */
export interface MessageLine {
  uuid: string;
  ord: number;
  at: number;
  end: number;
}

/** Consecutive message lines of a transcript, first to last, in the file's bytes [at, end). */
export interface LineRun {
  first: string;
  last: string;
  at: number;
  end: number;
}

/**
 * A snip's `removed` as its transcript line writes it: the runs of message lines it took out, and
 * the results among them whose full text is in a file rather than the transcript. With the snip's
 * head, that is all of BoundaryDetails: readers rebuild `removed` (expandRemoved, from the lines)
 * and `carried` (headCarried, from the head). Listing every uuid and result in each line cost a
 * snip 4–13% of its time (more the larger the window) and a third of its line or more.
 */
export interface RemovedLines {
  messages: number;
  lines: LineRun[];
  persisted?: { tool_use_id: string; full_text: string }[];
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

/**
 * A snip's `removed` as its boundary line writes it (RemovedLines), from the snip layer's own
 * input and cut (`before[from..to)` removed, `before[from - 1]` rewritten): what
 * expandRemoved and headCarried read back from it is what snipDetails records. Undefined when a
 * removed message has no line (`lineOf`), or the cut is not where snip cuts. It looks at nothing
 * but the messages removed (repair leaves calls unique, each answered right after it: no result
 * among them answers a call outside them).
 */
export function snipLines(before: readonly Message[], from: number, to: number, lineOf: (m: Message) => MessageLine | undefined): { removed: RemovedLines } | undefined {
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to <= from || to >= before.length || before[from - 1]!.role !== "user" || before[to]!.role !== "assistant") return undefined;
  const was = before[from - 1]!;
  // A call in the rewritten message would be read back as removed with it (repair leaves none there).
  if (typeof was.content !== "string" && was.content.some((b) => b.type === "tool_use")) return undefined;
  const gone = before.slice(from - 1, to);
  const lines = lineRuns(gone, lineOf);
  if (!lines) return undefined;
  const saved = persistedOf(gone.slice(1));
  return { removed: saved ? { messages: gone.length, lines, persisted: saved } : { messages: gone.length, lines } };
}

/** The lines of `gone`, in its order, as runs of lines written one after the other (a reordered list gives more runs), or undefined when one has no line. */
function lineRuns(gone: readonly Message[], lineOf: (m: Message) => MessageLine | undefined): LineRun[] | undefined {
  const runs: LineRun[] = [];
  let prev: MessageLine | undefined;
  for (const m of gone) {
    const l = lineOf(m);
    if (!l?.uuid) return undefined;
    if (prev && l.ord === prev.ord + 1) {
      const run = runs[runs.length - 1]!;
      run.last = l.uuid;
      run.end = l.end;
    } else runs.push({ first: l.uuid, last: l.uuid, at: l.at, end: l.end });
    prev = l;
  }
  return runs;
}

/** The results of `removed` removedResults would place in a file (the newest occurrence of each id decides, as there), or undefined if none. */
function persistedOf(removed: readonly Message[]): RemovedLines["persisted"] {
  let saved: Map<string, string> | undefined;
  for (const m of removed) {
    if (typeof m.content === "string") continue;
    for (const b of m.content) {
      if (b.type !== "tool_result") continue;
      const path = typeof b.content === "string" && persisted.is(b.content) ? persisted.path(b.content) : undefined;
      if (path !== undefined) (saved ??= new Map()).set(b.tool_use_id, path);
      else saved?.delete(b.tool_use_id);
    }
  }
  return saved && saved.size > 0 ? [...saved].map(([tool_use_id, full_text]) => ({ tool_use_id, full_text })) : undefined;
}

/**
 * A snip's `removed` as BoundaryDetails records it, from its RemovedLines and the messages of
 * those lines, in file order (what snipDetails would have listed: the results among them whose
 * call is among them too, each where it is kept now).
 */
export function expandRemoved(r: RemovedLines, lines: readonly { uuid: string; message: Message }[]): BoundaryDetails["removed"] {
  // Lines read back may be anything: only string ids and names are taken (a writer's always are).
  const names = new Map<string, string>();
  for (const l of lines) if (typeof l.message.content !== "string") for (const b of l.message.content) if (b.type === "tool_use" && typeof b.id === "string" && typeof b.name === "string") names.set(b.id, b.name);
  const held = new Map<string, string>();
  for (const l of lines) if (typeof l.message.content !== "string") for (const b of l.message.content) if (b.type === "tool_result" && names.has(b.tool_use_id)) held.set(b.tool_use_id, l.uuid);
  const where = new Map((r.persisted ?? []).map((p) => [p.tool_use_id, p.full_text]));
  const tool_results: RemovedToolResult[] = [];
  for (const [id, uuid] of held) tool_results.push({ tool_use_id: id, name: names.get(id)!, full_text: where.get(id) ?? "transcript", message_uuid: uuid });
  return { messages: r.messages, uuids: lines.map((l) => l.uuid), tool_results };
}

/** What a snip carried, from its head (the last message holds its note and what it carries; a head read back may hold a text block without a string, which carries nothing). */
export function headCarried(head: readonly Message[]): BoundaryDetails["carried"] {
  const last = head[head.length - 1];
  const content = !last ? [] : typeof last.content === "string" ? last.content : last.content.filter((b) => b.type !== "text" || typeof b.text === "string");
  return carriedBy(last ? [{ ...last, content } as Message] : [], new Set());
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
