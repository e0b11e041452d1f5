// A unified diff of exact string replacements: the changed lines around each replacement, with
// context, merged into hunks like `diff -u`. No general diff algorithm is needed because the
// positions of the replacements are known.
import { fmt } from "./util.ts";

export interface DiffOptions {
  context?: number;
  /** Bound on lines of diff output. */
  maxLines?: number;
  maxLineChars?: number;
}

type Op = { t: " " | "-" | "+"; line: string };

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * The diff of replacing `oldStr` by `newStr` at the (non-overlapping, ascending) char positions
 * `at` of `before`. Returns the diff text and the counts of removed and added lines.
 */
export function replacementDiff(
  before: string,
  at: readonly number[],
  oldStr: string,
  newStr: string,
  opts: DiffOptions = {},
): { text: string; removed: number; added: number } {
  const context = opts.context ?? 3;
  const maxLines = opts.maxLines ?? 200;
  const maxLineChars = opts.maxLineChars ?? 400;

  // Regions of whole lines touched by replacements; replacements sharing a line share a region.
  const regions: { start: number; end: number; matches: number[] }[] = [];
  for (const idx of at) {
    const start = before.lastIndexOf("\n", idx - 1) + 1;
    const e = idx + oldStr.length;
    let end: number;
    if (e > start && before[e - 1] === "\n") end = e;
    else {
      const nl = before.indexOf("\n", e);
      end = nl === -1 ? before.length : nl + 1;
    }
    const prev = regions[regions.length - 1];
    if (prev && start < prev.end) {
      prev.end = Math.max(prev.end, end);
      prev.matches.push(idx);
    } else regions.push({ start, end, matches: [idx] });
  }

  const ops: Op[] = [];
  let pos = 0;
  let removed = 0;
  let added = 0;
  for (const r of regions) {
    for (const line of splitLines(before.slice(pos, r.start))) ops.push({ t: " ", line });
    let replaced = "";
    let p = r.start;
    for (const m of r.matches) {
      replaced += before.slice(p, m) + newStr;
      p = m + oldStr.length;
    }
    replaced += before.slice(p, r.end);
    const del = splitLines(before.slice(r.start, r.end));
    const add = splitLines(replaced);
    removed += del.length;
    added += add.length;
    for (const line of del) ops.push({ t: "-", line });
    for (const line of add) ops.push({ t: "+", line });
    pos = r.end;
  }
  for (const line of splitLines(before.slice(pos))) ops.push({ t: " ", line });

  // Line numbers before each op.
  const oldNo: number[] = [];
  const newNo: number[] = [];
  let o = 1;
  let n = 1;
  for (const op of ops) {
    oldNo.push(o);
    newNo.push(n);
    if (op.t !== "+") o++;
    if (op.t !== "-") n++;
  }

  const changed = ops.flatMap((op, i) => (op.t === " " ? [] : [i]));
  const out: string[] = [];
  let k = 0;
  while (k < changed.length) {
    const first = changed[k] as number;
    let lastChange = first;
    while (k + 1 < changed.length && (changed[k + 1] as number) - lastChange <= context * 2 + 1) lastChange = changed[++k] as number;
    k++;
    const from = Math.max(0, first - context);
    const to = Math.min(ops.length, lastChange + context + 1);
    let oc = 0;
    let nc = 0;
    for (let i = from; i < to; i++) {
      if ((ops[i] as Op).t !== "+") oc++;
      if ((ops[i] as Op).t !== "-") nc++;
    }
    const os = oc === 0 ? (oldNo[from] as number) - 1 : (oldNo[from] as number);
    const ns = nc === 0 ? (newNo[from] as number) - 1 : (newNo[from] as number);
    const hunk = [`@@ -${os},${oc} +${ns},${nc} @@`];
    for (let i = from; i < to; i++) {
      const op = ops[i] as Op;
      const line = op.line.length > maxLineChars ? `${op.line.slice(0, maxLineChars)}… [${fmt(op.line.length)} chars]` : op.line;
      hunk.push(`${op.t}${line}`);
    }
    out.push(...hunk);
  }
  if (out.length > maxLines) {
    const cut = out.length - maxLines;
    out.length = maxLines;
    out.push(`… [${fmt(cut)} more diff lines not shown]`);
  }
  return { text: out.join("\n"), removed, added };
}
