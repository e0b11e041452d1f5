// The estimator's long [A-Za-z0-9+/] and [A-Za-z0-9+/,;] runs (./estimate.ts): base64, keys and
// hashes, source maps' "mappings". The scan notes each run of 20 (64) chars or more as it ends
// and prices it here, after the loop (rare work, kept out of the loop for the compiler).
import * as classes from "./estimate-classes.ts";
import * as weights from "./estimate-weights.ts";

/** Called on the string, never looked up on it (see charCodeAt in ./estimate.ts); a module constant (ibid.). */
const charCodeAt = String.prototype.charCodeAt;

// Module constants, not imported bindings (see ./estimate.ts).
const { CLASS, DIGIT, LOWER, UPPER } = classes;
const { W } = weights;

/** Per class, its chars in the run randomRunExtra is reading. */
const COUNTS = new Int32Array(256);

/**
 * Extra cost of a finished [A-Za-z0-9+/] run text[from, to) that looks random (base64, keys,
 * hashes): its per-char cost minus what its pieces were charged (`charged`). Runs shorter than
 * 20 chars or without a mix of digits, capitals and small letters are left alone.
 */
export function randomRunExtra(text: string, from: number, to: number, charged: number, w: Float64Array, replace: boolean): number {
  const len = to - from;
  if (len < 20) return 0;
  // Counted without a branch per char: in a random run the class of the next char is a coin
  // toss, and a branch on it is mispredicted about every other char.
  const n = COUNTS;
  n[DIGIT] = n[UPPER] = n[LOWER] = 0;
  let prevC = charCodeAt.call(text, from), prevK = CLASS[prevC]!, switches = 0, repeats = 0, same = 1;
  n[prevK]! += 1;
  for (let i = from + 1; i < to; i++) {
    const c = charCodeAt.call(text, i);
    const k = CLASS[c]!;
    n[k]! += 1;
    switches += +(k !== prevK);
    same = c === prevC ? same + 1 : 1;
    if (same >= 3) repeats++;
    prevK = k;
    prevC = c;
  }
  const digits = n[DIGIT]!, upper = n[UPPER]!, lower = n[LOWER]!;
  if (digits < 2 || upper < 4 || lower < 4 || switches < 8) return 0;
  const r = w[W.RANDOM]! * (len - repeats) + w[W.REPEAT_LETTER]! * repeats + w[W.RANDOM_SWITCH]! * switches;
  return replace ? r - charged : Math.max(0, r - charged);
}

/**
 * Extra cost of a finished [A-Za-z0-9+/,;] run text[from, to) that looks like a source map's
 * "mappings" (VLQ segments: "AAAA,SAAS;KAAK"): per char, as BPE splits the segments into 1–3
 * char tokens. Runs under 64 chars, or with fewer than 16 "A"s or 6 separators, are left alone
 * (absolute counts, so that a run growing never stops qualifying: the estimate stays monotone).
 */
export function vlqRunExtra(text: string, from: number, to: number, charged: number, w: Float64Array, replace: boolean): number {
  if (to - from < 64) return 0;
  let seps = 0, repeats = 0, a = 0, prev = -1;
  for (let i = from; i < to; i++) {
    const c = charCodeAt.call(text, i);
    if (c === 0x2c || c === 0x3b) {
      if (c === prev) repeats++; // ";;;;;;" (lines without mappings) merges into few tokens
      else seps++;
    } else if (c === 0x41) a++;
    prev = c;
  }
  if (seps < 6 || a < 16) return 0;
  const r = w[W.VLQ]! * (to - from - seps - repeats) + w[W.VLQ_SEP]! * seps + w[W.REPEAT_LONG]! * repeats;
  return replace ? r - charged : Math.max(0, r - charged);
}

/** (start, end, cost charged, kind: 0 random, 1 mappings) of the runs met in one call: the
 * first `used` entries. */
const RUNS = new Float64Array(4 * 256);
let used = 0;

/** The scan's total (in and out) and the total before the run, for noteRun: doubles in a typed
 * array stay unboxed, where a double passed to or returned from a call is a heap number, which
 * the scan then made ready ahead of the call for every char that is not a letter. */
export const RUN_TOTALS = new Float64Array(2);

/**
 * Notes the run text[start, end) of `kind` for flushRuns; its charge is the total less the total
 * before it (RUN_TOTALS), and the total grows by the extra cost of the runs noted before when
 * there is no room for more. (Here, not in the scan: a branch the scan meets first long after it
 * was compiled costs it its code.)
 */
export function noteRun(text: string, start: number, end: number, kind: number, w: Float64Array, replace: boolean): void {
  let t = RUN_TOTALS[0]!;
  if (used === RUNS.length) t += flushRuns(text, w, replace);
  RUNS[used++] = start;
  RUNS[used++] = end;
  RUNS[used++] = t - RUN_TOTALS[1]!;
  RUNS[used++] = kind;
  RUN_TOTALS[0] = t;
}

/** The extra cost of the runs noted since the last flush (and none noted after it). */
export function flushRuns(text: string, w: Float64Array, replace: boolean): number {
  let extra = 0;
  for (let j = 0; j < used; j += 4) {
    // A mappings run that is the random run noted before it holds no "," or ";": nothing extra.
    if (RUNS[j + 3] === 1 && j > 0 && RUNS[j - 4] === RUNS[j] && RUNS[j - 3] === RUNS[j + 1]) continue;
    extra += RUNS[j + 3] === 0 ? randomRunExtra(text, RUNS[j]!, RUNS[j + 1]!, RUNS[j + 2]!, w, replace) : vlqRunExtra(text, RUNS[j]!, RUNS[j + 1]!, RUNS[j + 2]!, w, replace);
  }
  used = 0;
  return extra;
}
