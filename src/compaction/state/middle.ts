// What a snip reads of the part of the history it removes (the user's messages, the file ledger,
// the commands with their outcomes, the agent's notes, the attachments), read a few messages at a
// time as they age into that part, so that the request that snips finishes a reading every request
// did a little of, instead of walking the whole part (at a 200k window, ~80 messages) at once.
//
// A cache, owned by the engine: a snip writes the same boundary with or without it. The part is
// read as the same message objects; when the history differs at any message read (a snip cut
// it, a summary replaced it, micro cleared a result in it, a host passed new objects), the
// reading starts over from there at the next request.
import type { ContentBlock, Message } from "../../messages/types.ts";
import { type FileLedger, type LedgerReading, ledgerOf, ledgerReading, readLedger } from "./ledger.ts";
import { type AttachmentsReading, attachmentsReading, readAttachments, readUserMessages } from "./retain.ts";
import { type CommandOutcome, WORK_LIMITS, readCommands } from "./work.ts";

/** Messages read ahead per request at most: starting over never makes one request read the whole part. */
const STEP_MESSAGES = 4;

export interface MiddleReading {
  /** Where the part starts (the snip's head), and the messages read from there on, in order. */
  start: number;
  read: Message[];
  users: string[];
  ledger: LedgerReading;
  /** Shell calls awaiting their result, and the outcomes read (the newest WORK_LIMITS.commands at least). */
  pending: Map<string, string>;
  commands: CommandOutcome[];
  /** The assistant messages read: a record's notes are the newest of them that say something. */
  assistants: Message[];
  attachments: AttachmentsReading;
  /** The next snip's boundary, worked out after the last reply (../layers/snip-ahead.ts). */
  plan?: CarryPlan;
}

/** What a snip leaves in the head's last message: its own blocks, then the carried ones; and the ledger of what it removes. */
export interface Carry {
  own: ContentBlock[];
  carried: ContentBlock[];
  ledger: FileLedger;
}

/**
 * A snip's carry worked out ahead for the cut [head, tail): it holds while the head's last message
 * and the part are the same objects (`messages`), fitted to the same budgets (`key`) and counted
 * by the same counter.
 */
export interface CarryPlan {
  head: number;
  tail: number;
  messages: readonly Message[];
  key: string;
  counter: object;
  carry: Carry;
}

/** The plan's carry when it was made for this cut of these messages (used once), else undefined. */
export function plannedCarry(r: MiddleReading, history: readonly Message[], cut: { head: number; tail: number }, key: () => string, counter: object): Carry | undefined {
  const p = r.plan;
  if (p === undefined) return undefined;
  r.plan = undefined;
  // The same cut gives the same number of messages (history[head - 1 .. tail)): compared one by one.
  if (p.head !== cut.head || p.tail !== cut.tail || p.counter !== counter) return undefined;
  for (let k = 0; k < p.messages.length; k++) if (history[cut.head - 1 + k] !== p.messages[k]) return undefined;
  return p.key === key() ? p.carry : undefined;
}

/** What the part from a snip's head to its tail holds (the removed part, without what the head carried). */
export interface MiddleRead {
  users: string[];
  ledger: FileLedger;
  commands: readonly CommandOutcome[];
  assistants: readonly Message[];
  attachments: AttachmentsReading;
}

export function middleReading(): MiddleReading {
  return { start: -1, read: [], users: [], ledger: ledgerReading(), pending: new Map(), commands: [], assistants: [], attachments: attachmentsReading() };
}

function startOver(r: MiddleReading, start: number): void {
  r.start = start;
  r.read = [];
  r.users = [];
  r.ledger = ledgerReading();
  r.pending = new Map();
  r.commands = [];
  r.assistants = [];
  r.attachments = attachmentsReading();
}

/** Keeps what was read if it is `history` from `start` on (the same objects); else starts over. */
function matches(r: MiddleReading, history: readonly Message[], start: number): void {
  let same = r.start === start && r.read.length <= history.length - start;
  for (let k = 0; same && k < r.read.length; k++) same = history[start + k] === r.read[k];
  if (!same) startOver(r, start);
}

/** Reads one message (`next`, the one after it, holds its calls' results when it is in the part). */
function readOne(r: MiddleReading, m: Message, next: Message | undefined): void {
  r.read.push(m);
  readUserMessages(r.users, m);
  readLedger(r.ledger, m, next);
  readCommands(r.pending, r.commands, m);
  if (r.commands.length > 2 * WORK_LIMITS.commands) r.commands.splice(0, r.commands.length - WORK_LIMITS.commands);
  if (m.role === "assistant") r.assistants.push(m);
  readAttachments(r.attachments, m);
}

/**
 * Reads ahead, a few messages, in `history[start..limit)`: the part a snip of this history or of
 * one appended to would remove at the least (`limit` is where its tail starts at the earliest).
 * A message is read with the one after it (its calls' results), so both must be in that part.
 */
export function readAhead(r: MiddleReading, history: readonly Message[], start: number, limit: number): void {
  matches(r, history, start);
  for (let n = 0; n < STEP_MESSAGES; n++) {
    const i = start + r.read.length;
    if (i + 1 >= limit) return;
    readOne(r, history[i]!, history[i + 1]);
  }
}

/**
 * The part `history[start..end)`, its reading finished; undefined when what was read goes past
 * `end` (the caller reads the part itself). What is returned is the reading's own: read it before
 * the next request.
 */
export function readMiddle(r: MiddleReading, history: readonly Message[], start: number, end: number): MiddleRead | undefined {
  matches(r, history, start);
  if (start + r.read.length > end) {
    startOver(r, start);
    return undefined;
  }
  // The last message of the part has no next one in it (its calls' results are not removed with it).
  for (let i = start + r.read.length; i < end; i++) readOne(r, history[i]!, i + 1 < end ? history[i + 1] : undefined);
  // A reading finished ahead of its snip (../layers/snip-ahead.ts) may go on to a longer part: it
  // can, but from a last message read without its calls' results (an assistant's), not.
  if (end > start && history[end - 1]!.role === "assistant") r.start = -1;
  return { users: r.users, ledger: r.ledger.ledger, commands: r.commands, assistants: r.assistants, attachments: r.attachments };
}

/** The part read in one go (a snip without the engine's reading). */
export function readPart(part: readonly Message[]): MiddleRead {
  return readMiddle(middleReading(), part, 0, part.length)!;
}

/** The ledger of the head's carried blocks (`carried`) and then the part's: as ledgerOf reads them one after the other. */
export function ledgerAfter(carried: Message, part: FileLedger): FileLedger {
  const l = ledgerOf([carried]);
  for (const p of part.read) l.read.add(p);
  for (const p of part.modified) l.modified.add(p);
  return l;
}

/** The attachments of the head's carried blocks (`carried`) and then the part's. */
export function attachmentsAfter(carried: Message, part: AttachmentsReading): AttachmentsReading {
  const a = attachmentsReading();
  readAttachments(a, carried);
  return { earlier: [...a.earlier, ...part.earlier], found: [...a.found, ...part.found], fromTools: [...a.fromTools, ...part.fromTools] };
}
