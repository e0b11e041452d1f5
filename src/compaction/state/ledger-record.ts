// The file ledger's text (./ledger.ts says what goes in it): the files modified, then the files
// read, one line each, in a tagged block each later compaction reads back and folds in. Fitting it
// to its cap: with a counter that counts lethe's records line by line, each candidate is priced
// from its lines' counts (a path's line counted once, when its call arrived: ./prime.ts), and only
// the one that fits is rendered.
import { LEDGER_CLOSE, LEDGER_OPEN } from "./tags.ts";
import type { TokenCounter } from "../../tokens/count.ts";

/** Every file read and modified in a session, carried across compactions. */
export interface FileLedger {
  /** Paths in first-seen order (Sets keep insertion order). */
  read: Set<string>;
  modified: Set<string>;
}

export const emptyLedger = (): FileLedger => ({ read: new Set(), modified: new Set() });

/** A path's line in a rendered ledger. */
export const modifiedLine = (path: string): string => `modified: ${path}`;
export const readLine = (path: string): string => `read: ${path}`;

const MODIFIED_INTRO = "Files modified so far (re-read before editing again):";
const READ_INTRO = "Files read so far:";

/** Render as a tagged block the next compaction can parse back. */
export function renderLedger(l: FileLedger): string {
  const lines = [LEDGER_OPEN, MODIFIED_INTRO];
  for (const p of l.modified) lines.push(modifiedLine(p));
  lines.push(READ_INTRO);
  for (const p of l.read) lines.push(readLine(p));
  lines.push(LEDGER_CLOSE);
  return lines.join("\n");
}

// A snip parses the ledger the last one carried, the same text, and logging it reads it again:
// the last few texts' paths are kept (their strings then add to a set without being hashed again).
const PARSED_KEPT = 8;
const PARSED_MAX_CHARS = 256_000;
const parsed = new Map<string, FileLedger>();

/** Keep the ledger within its cap (`cap` tokens rendered): modified paths first, then the newest reads. */
export function boundedLedger(l: FileLedger, cap: number, counter: TokenCounter): FileLedger {
  return fitLedger(l, cap, counter).ledger;
}

/** The ledger rendered within its cap (see boundedLedger); a counter that priced it remembers its count. */
export function renderLedgerWithin(l: FileLedger, cap: number, counter: TokenCounter): string {
  const { ledger, tokens } = fitLedger(l, cap, counter);
  const text = renderLedger(ledger);
  if (tokens !== undefined) counter.rememberRecord?.(text, tokens);
  rendered(text, ledger);
  return text;
}

/**
 * A ledger just rendered as `text` is what reading `text` back gives, if each path reads back as
 * itself: then the boundary that logs it, and the next snip, which read `text` back, find it.
 */
function rendered(text: string, l: FileLedger): void {
  if (text.length > PARSED_MAX_CHARS) return;
  for (const set of [l.read, l.modified]) for (const p of set) if (!readsBack(p)) return;
  if (parsed.size >= PARSED_KEPT) parsed.clear();
  parsed.set(text, { read: new Set(l.read), modified: new Set(l.modified) });
}

/** Whether a path's line reads back as the path (readLedgerText drops or splits the others). */
const readsBack = (p: string): boolean =>
  p !== "" && !p.includes("\n") && !p.includes("\r") && !p.includes("\u2028") && !p.includes("\u2029") && !p.includes(LEDGER_CLOSE);

/** `l` less its first `r` reads and `m` modified paths (`read` and `modified` are its lists). */
const cutLedger = (l: FileLedger, read: string[], modified: string[], r: number, m: number): FileLedger =>
  r === 0 && m === 0 ? l : { read: r === 0 ? l.read : new Set(read.slice(r)), modified: m === 0 ? l.modified : new Set(modified.slice(m)) };

function fitLedger(l: FileLedger, cap: number, counter: TokenCounter): { ledger: FileLedger; tokens?: number } {
  const read = [...l.read], modified = [...l.modified];
  const price = ledgerPricer(read, modified, counter);
  let r = 0, m = 0; // reads, then modified paths, dropped from the front (the oldest)
  for (;;) {
    const tokens = price ? price(r, m) : counter.text(renderLedger(cutLedger(l, read, modified, r, m)));
    if (tokens <= cap || read.length - r + modified.length - m <= 1) return price ? { ledger: cutLedger(l, read, modified, r, m), tokens } : { ledger: cutLedger(l, read, modified, r, m) };
    const left = read.length - r;
    if (left > 0) r += Math.ceil(left / 4);
    else m += Math.ceil((modified.length - m) / 4);
  }
}

// A path's line's count, per counter, found by the path: the ledger a snip carries holds the same
// path strings from one snip to the next (parseLedger's), whose hashes are kept with them.
const PATH_COSTS_KEPT = 50_000;
const pathTokensOf = new WeakMap<NonNullable<TokenCounter["recordLine"]>, { read: Map<string, number | null>; modified: Map<string, number | null> }>();

/** The unrounded tokens of `path`'s line in a rendered ledger (by `line`, a counter's recordLine), or null when it holds a newline. */
export function pathLineTokens(path: string, kind: "read" | "modified", line: NonNullable<TokenCounter["recordLine"]>): number | null {
  let known = pathTokensOf.get(line);
  if (!known) pathTokensOf.set(line, (known = { read: new Map(), modified: new Map() }));
  const costs = known[kind];
  let t = costs.get(path);
  if (t === undefined) {
    t = path.includes("\n") ? null : line(kind === "read" ? readLine(path) : modifiedLine(path));
    if (costs.size >= PATH_COSTS_KEPT) costs.clear();
    costs.set(path, t);
  }
  return t;
}

/**
 * With a counter that counts records line by line: the tokens text() gives the rendered ledger
 * less its first `r` reads and `m` modified paths, summed from its lines' counts in the record's
 * order, so no candidate is rendered. Undefined for another counter, or a path holding a newline.
 */
function ledgerPricer(read: readonly string[], modified: readonly string[], counter: TokenCounter): ((r: number, m: number) => number) | undefined {
  const line = counter.recordLine;
  if (!line) return undefined;
  const readTokens: number[] = [], modifiedTokens: number[] = [];
  for (const p of read) {
    const t = pathLineTokens(p, "read", line);
    if (t === null) return undefined;
    readTokens.push(t);
  }
  for (const p of modified) {
    const t = pathLineTokens(p, "modified", line);
    if (t === null) return undefined;
    modifiedTokens.push(t);
  }
  const open = line(LEDGER_OPEN), modifiedIntro = line(MODIFIED_INTRO), readIntro = line(READ_INTRO), close = line(LEDGER_CLOSE, true);
  return (r, m) => {
    let sum = 0;
    sum += open;
    sum += modifiedIntro;
    for (let i = m; i < modifiedTokens.length; i++) sum += modifiedTokens[i]!;
    sum += readIntro;
    for (let i = r; i < readTokens.length; i++) sum += readTokens[i]!;
    sum += close;
    return Math.round(sum) + 0;
  };
}

export function parseLedger(text: string, into: FileLedger = emptyLedger()): FileLedger {
  const l = parsedLedger(text);
  for (const p of l.read) into.read.add(p);
  for (const p of l.modified) into.modified.add(p);
  return into;
}

/** How many paths the ledger in `text` lists of each kind. */
export function ledgerSizes(text: string): { read: number; modified: number } {
  const l = parsedLedger(text);
  return { read: l.read.size, modified: l.modified.size };
}

/** The ledger in `text`, kept for the next call: not to be changed. */
function parsedLedger(text: string): FileLedger {
  let l = parsed.get(text);
  if (l === undefined) {
    l = readLedgerText(text);
    if (parsed.size >= PARSED_KEPT) parsed.clear();
    if (text.length <= PARSED_MAX_CHARS) parsed.set(text, l);
  }
  return l;
}

/** The ledger in `text`, read afresh (parseLedger keeps the last few). */
export function readLedgerText(text: string): FileLedger {
  const into = emptyLedger();
  const start = text.indexOf(LEDGER_OPEN);
  const end = text.indexOf(LEDGER_CLOSE, start);
  if (start < 0 || end < 0) return into;
  for (const line of text.slice(start, end).split("\n")) {
    // `read: <path>` or `modified: <path>`, read as /^(read|modified): (.+)$/ would (no regex
    // match per line: a snip parses the ledger it carried at each snip, and again to log it).
    const kind = line.startsWith("read: ") ? "read" : line.startsWith("modified: ") ? "modified" : undefined;
    if (kind === undefined) continue;
    const path = line.slice(kind.length + 2);
    if (path !== "" && path.indexOf("\r") < 0 && path.indexOf("\u2028") < 0 && path.indexOf("\u2029") < 0) into[kind].add(path);
  }
  return into;
}
