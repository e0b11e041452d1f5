// A snip boundary's `removed` as the writer puts it on disk: the runs of message lines it took out
// (RemovedLines, ../compaction/state/boundary.ts), not every uuid and tool result. Readers give it
// back whole when they parse, with `carried` read off the head, as they rebuild a head written as
// a diff (./transcript-heads.ts): everything above them sees the boundaries as before. The lines
// come from the messages parsed so far, or from the file at the bytes each run names.
import type { Message } from "../messages/types.ts";
import { type LineRun, type RemovedLines, expandRemoved, headCarried } from "../compaction/state/boundary.ts";

/** The message lines parsed so far, in file order, and where each uuid is among them. */
export interface MessageIndex {
  list: { uuid: string; message: Message }[];
  at: Map<string, number>;
}

/** Runs longer than this in all are not read (a damaged or hostile line would have a reader load the file, or more, run by run). */
const MAX_RUN_BYTES = 256 << 20;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const offset = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;

/** Why `removed` in its on-disk form is unusable, or null (also when it is the whole form or absent). */
function removedLinesProblem(r: Record<string, unknown>): string | null {
  if (!Number.isSafeInteger(r.messages) || (r.messages as number) < 0) return "its removed lines have no message count";
  const runs = r.lines as unknown[];
  let bytes = 0;
  for (const run of runs) {
    if (!isObject(run) || typeof run.first !== "string" || typeof run.last !== "string" || !offset(run.at) || !offset(run.end) || (run.end as number) <= (run.at as number)) return "its removed lines are not runs of {first, last, at, end}";
    bytes += (run.end as number) - (run.at as number);
  }
  if (bytes > MAX_RUN_BYTES) return "its removed lines are longer than a reader reads";
  if (runs.length > (r.messages as number)) return "its removed lines are more runs than messages";
  if (r.persisted !== undefined && !(Array.isArray(r.persisted) && r.persisted.every((p) => isObject(p) && typeof p.tool_use_id === "string" && typeof p.full_text === "string"))) return "its removed results' places are not a list of {tool_use_id, full_text}";
  return null;
}

/** The run's lines among those parsed so far. */
function fromIndex(known: MessageIndex | undefined, run: LineRun): MessageIndex["list"] | undefined {
  const i = known?.at.get(run.first);
  const j = known?.at.get(run.last);
  return i === undefined || j === undefined || j < i ? undefined : known!.list.slice(i, j + 1);
}

/**
 * The run's lines read from the file, if the bytes it names hold them (first and last its uuids;
 * the caller checks their count). A line that is not a message, or not whole (a write a crash
 * cut short, never acknowledged), is passed over, as a parse passes it over.
 */
function fromBytes(text: string | undefined, run: LineRun): MessageIndex["list"] | undefined {
  if (text === undefined) return undefined;
  const list: MessageIndex["list"] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith('{"type":"message"')) continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      continue;
    }
    const e = v as { uuid?: unknown; message?: unknown };
    const m = e.message as { role?: unknown; content?: unknown } | undefined;
    if (typeof e.uuid !== "string" || !isObject(m) || (m.role !== "user" && m.role !== "assistant") || !(typeof m.content === "string" || Array.isArray(m.content))) continue;
    if (Array.isArray(m.content)) m.content = m.content.filter(isObject);
    list.push({ uuid: e.uuid, message: m as unknown as Message });
  }
  return list.length > 0 && list[0]!.uuid === run.first && list[list.length - 1]!.uuid === run.last ? list : undefined;
}

/**
 * Gives a snip boundary written with RemovedLines its whole `removed` (and `carried`, from its
 * head) back, in place. Lines neither parsed yet nor readable (`readBytes` absent: a part of a
 * file read on its own) leave it as written. Returns a problem to warn of (a damaged line, or
 * lines that are not where it says), else null.
 */
export function fullRemoved(b: Record<string, unknown>, known: MessageIndex | undefined, readBytes?: (at: number, end: number) => string | undefined): string | null {
  const r = b.removed;
  if (!isObject(r) || !Array.isArray(r.lines)) return null;
  const problem = removedLinesProblem(r);
  if (problem) return `this snip boundary's ${problem.replace(/^its /, "")}; kept as written`;
  const lines: MessageIndex["list"] = [];
  for (const run of r.lines as LineRun[]) {
    const got = fromIndex(known, run) ?? (readBytes ? fromBytes(readBytes(run.at, run.end), run) : undefined);
    if (!got) return readBytes ? `this snip boundary's removed lines ${JSON.stringify(run.first)}…${JSON.stringify(run.last)} are not where it says; kept as written` : null;
    for (const l of got) lines.push(l);
  }
  const expanded = expandRemoved(r as unknown as RemovedLines, lines);
  if (expanded.uuids.length !== r.messages) return `this snip boundary's removed lines hold ${expanded.uuids.length} messages, not ${String(r.messages)}; kept as written`;
  b.removed = expanded;
  if (b.carried === undefined && Array.isArray(b.head) && b.head.length > 0) b.carried = headCarried(b.head as Message[]);
  return null;
}
