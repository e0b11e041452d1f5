// The work record's text (./work.ts says what goes in it): one line per command and its outcome,
// then the agent's notes, in a tagged block each later snip reads back and folds forward. Fitting
// it to its budget: with a counter that counts lethe's records line by line, each candidate is
// priced from its lines' counts (a command's line counted once, when its result arrived:
// ./prime.ts) and only the one that fits is rendered.
import { blocksOf } from "../../messages/blocks.ts";
import type { Message } from "../../messages/types.ts";
import type { TokenCounter } from "../../tokens/count.ts";
import { WORK_CLOSE, WORK_OPEN } from "./tags.ts";

/** One shell command and how it ended. */
export interface CommandOutcome {
  /** The command's first line, trimmed, at most COMMAND_CHARS characters (./work.ts). */
  command: string;
  /** Exit status as reported ("0", "1", "ok", "error"). */
  exit: string;
  /** The line that says what went wrong, when it failed. */
  error?: string;
}

export interface WorkRecord {
  commands: CommandOutcome[];
  /** The assistant's own latest words in the removed part (what it concluded). */
  notes: string[];
}

function outcomeText(o: CommandOutcome): string {
  if (!o.error && (o.exit === "0" || o.exit === "ok")) return "ok";
  return o.error ? `exit ${o.exit}: ${o.error}` : `exit ${o.exit}`;
}

/**
 * Between a command and its outcome on a record's line (the first one on the line: errors are the
 * likelier to hold one). ASCII, as all of lethe's own words in the context: one character beyond
 * Latin-1 makes the record, the message carrying it and every boundary line written with it
 * two-byte strings (twice the memory, slower to count, serialise and write). Records carried by
 * an earlier version have "  → ", which reads back too.
 */
const ARROW = "  -> ";
const ARROW_BEFORE = "  → ";

/** The record's first line after its tag. */
const WORK_INTRO = "Work done in the removed part (newest last; do not repeat what failed the same way):";

/** A command's line in a rendered record. */
export const commandRecordLine = (o: CommandOutcome): string => `$ ${o.command}${ARROW}${outcomeText(o)}`;
/** A note's line in a rendered record. */
export const noteRecordLine = (note: string): string => `noted: ${note}`;

/** Render as a tagged block a later snip parses back. One line per command: `$ <command>  -> <outcome>`. */
export function renderWork(w: WorkRecord): string {
  const lines = [WORK_OPEN, WORK_INTRO];
  for (const o of w.commands) lines.push(commandRecordLine(o));
  for (const n of w.notes) lines.push(noteRecordLine(n));
  lines.push(WORK_CLOSE);
  return lines.join("\n");
}

/** A command's outcome from its line in a record (`$ <command>  -> <outcome>`: commandRecordLine's inverse). */
function parseCommandLine(l: string): CommandOutcome {
  let at = l.indexOf(ARROW), arrow = ARROW;
  if (at < 0) at = l.indexOf((arrow = ARROW_BEFORE));
  const o: CommandOutcome = { command: at < 0 ? l.slice(2) : l.slice(2, at), exit: "ok" };
  const outcome = at < 0 ? "" : l.slice(at + arrow.length);
  // Most lines end "ok", which sets nothing (no match of the pattern for it to run).
  const m = at < 0 || outcome === "ok" ? null : /^(?:ok|exit (\S+?)(?:: (.*))?)$/.exec(outcome);
  if (m?.[1] !== undefined) o.exit = m[1];
  if (m?.[2] !== undefined) o.error = m[2];
  return o;
}

/** The record carried in a text, if any (the inverse of renderWork). */
export function parseWork(text: string): WorkRecord | undefined {
  const start = text.indexOf(WORK_OPEN);
  const end = text.indexOf(WORK_CLOSE, start);
  if (start < 0 || end < 0) return undefined;
  const lines = text.slice(start + WORK_OPEN.length, end).split("\n");
  const w: WorkRecord = { commands: [], notes: [] };
  for (const l of lines) {
    if (l.startsWith("$ ")) {
      w.commands.push(parseCommandLine(l));
    } else if (l.startsWith("noted: ")) {
      w.notes.push(l.slice(7));
    }
  }
  return w;
}

// Each snip reads back the record the last one carried, the same text: the last few texts'
// records are kept, their outcomes the same (frozen) objects, so their lines' counts are found by
// object (lineTokensOf) and not by building and hashing each line again.
const CARRIED_KEPT = 8;
const CARRIED_MAX_CHARS = 256_000;
const carried = new Map<string, WorkRecord | undefined>();

/**
 * A record just rendered as `text` is what reading `text` back gives, if each of its lines reads
 * back as itself (`back`: each command's does, the pricer found) and it is not too long: then the
 * next snip, which reads `text` back, finds these outcomes.
 */
function rendered(text: string, w: WorkRecord, back: boolean): void {
  if (!back || text.length > CARRIED_MAX_CHARS || w.notes.some((n) => n.includes("\n"))) return;
  if (carried.size >= CARRIED_KEPT) carried.clear();
  carried.set(text, w); // its lists are its own (the caller's cut)
}

/** Whether a command's line (`l`, commandRecordLine's) reads back as a command whose line is the same (no arrow in the command, no newline, …). */
const readsBack = (l: string): boolean => !l.includes("\n") && commandRecordLine(parseCommandLine(l)) === l;

function carriedRecord(text: string): WorkRecord | undefined {
  let w = carried.get(text);
  if (w === undefined && !carried.has(text)) {
    w = parseWork(text);
    if (w) for (const o of w.commands) Object.freeze(o);
    if (carried.size >= CARRIED_KEPT) carried.clear();
    if (text.length <= CARRIED_MAX_CHARS) carried.set(text, w);
  }
  return w && { commands: w.commands.slice(), notes: w.notes.slice() };
}

/** The newest work record carried in a history's text (an earlier snip's or rebuild's), if any. */
export function carriedWorkOf(history: readonly Message[]): WorkRecord | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (m.role !== "user") continue;
    const blocks = blocksOf(m);
    for (let k = blocks.length - 1; k >= 0; k--) {
      const b = blocks[k]!;
      if (b.type === "text" && b.text.startsWith(WORK_OPEN)) return carriedRecord(b.text);
    }
  }
  return undefined;
}

/** The record rendered within `tokens`: the oldest commands go first, then the notes. */
export function renderWorkWithin(w: WorkRecord, tokens: number, counter: TokenCounter): string | undefined {
  const price = recordPricer(w, counter);
  let c = 0, n = 0; // commands, then notes, dropped from the front
  for (;;) {
    if (w.commands.length - c + w.notes.length - n === 0) return undefined;
    if (price) {
      const priced = price.tokens(c, n);
      if (priced <= tokens) {
        const kept = { commands: w.commands.slice(c), notes: w.notes.slice(n) };
        const text = renderWork(kept);
        rendered(text, kept, price.back);
        counter.rememberRecord?.(text, priced);
        return text;
      }
    } else {
      const text = renderWork({ commands: w.commands.slice(c), notes: w.notes.slice(n) });
      if (counter.text(text) <= tokens) return text;
    }
    // Drop about a fifth at a time: a 30-line record fits in a few tries, not thirty.
    const left = w.commands.length - c;
    if (left > 0) c += Math.max(1, Math.floor(left / 5));
    else n++;
  }
}

// A command's line's count, per counter and outcome (outcomes are the same objects from their
// result's arrival, ./prime.ts, to each snip that carries them: outcomeOf's and carriedRecord's),
// with whether the line reads back as itself (asked of every outcome a record renders, rendered).
type RecordLine = NonNullable<TokenCounter["recordLine"]>;
interface LineFacts {
  /** Unrounded tokens of the line, or null when it holds a newline. */
  tokens: number | null;
  /** The outcome is frozen (it never changes) and its line reads back as itself. */
  back: boolean;
}
const factsOf = new WeakMap<RecordLine, WeakMap<CommandOutcome, LineFacts>>();

function lineFacts(o: CommandOutcome, line: RecordLine): LineFacts {
  let known = factsOf.get(line);
  if (!known) factsOf.set(line, (known = new WeakMap()));
  let f = known.get(o);
  if (f === undefined) {
    const text = commandRecordLine(o);
    f = { tokens: text.includes("\n") ? null : line(text), back: Object.isFrozen(o) && readsBack(text) };
    known.set(o, f);
  }
  return f;
}

/** The unrounded tokens of `o`'s line in a record (by `line`, a counter's recordLine), or null when the line holds a newline. */
export function commandLineTokens(o: CommandOutcome, line: RecordLine): number | null {
  return lineFacts(o, line).tokens;
}

/**
 * With a counter that counts records line by line: `tokens(c, n)` is what text() gives the record
 * less its first `c` commands and `n` notes, from its lines' counts summed in the record's order
 * (as text() sums them), so no candidate is rendered but the one that fits; `back`, whether every
 * command's line reads back as itself. Undefined for another counter, or a line holding a newline
 * (it would be counted as two).
 */
function recordPricer(w: WorkRecord, counter: TokenCounter): RecordPrice | undefined {
  const line = counter.recordLine;
  if (!line) return undefined;
  const commandTokens: number[] = [];
  let back = true;
  for (const o of w.commands) {
    const f = lineFacts(o, line);
    if (f.tokens === null) return undefined;
    commandTokens.push(f.tokens);
    back &&= f.back;
  }
  const notes = w.notes.map(noteRecordLine);
  if (notes.some((l) => l.includes("\n"))) return undefined;
  return new RecordPrice([line(WORK_OPEN), line(WORK_INTRO), line(WORK_CLOSE, true)], commandTokens, notes.map((l) => line(l)), back);
}

/** A record's lines' counts (recordPricer's). */
class RecordPrice {
  constructor(
    private readonly frame: readonly [number, number, number],
    private readonly commands: readonly number[],
    private readonly notes: readonly number[],
    /** Every command's line reads back as itself. */
    readonly back: boolean,
  ) {}
  /** The record less its first `c` commands and `n` notes: its lines' counts summed in its order, rounded once. */
  tokens(c: number, n: number): number {
    let sum = 0;
    sum += this.frame[0];
    sum += this.frame[1];
    for (let i = c; i < this.commands.length; i++) sum += this.commands[i]!;
    for (let i = n; i < this.notes.length; i++) sum += this.notes[i]!;
    sum += this.frame[2];
    return Math.round(sum) + 0;
  }
}
