// Fast token estimate calibrated against exact o200k (bench/tokens.ts, bench/calibrate-estimator.ts).
//
// o200k first splits text with a regex into "pieces", then runs BPE inside each piece; on
// ordinary text most pieces are one token. So this estimator follows the same split in one pass
// over charCodeAt (a class lookup table, no regex) and charges each piece by class and length:
//   - letter runs, with at most one leading space or punctuation char (" foo", "(foo", "/usr"),
//     split at lower→upper case changes ("getElement" → "get" "Element"): cost by length, lead,
//     capitals and consonant clusters (abbreviations and random letters are not in the vocabulary);
//   - digits in groups of up to 3;
//   - whitespace runs (indentation, blank lines) are one piece; the last space before a word or
//     punctuation joins that piece; newlines right after punctuation join it ("{\n", "')\n");
//   - punctuation runs by length; runs of one repeated char ("=====", "────") cost little;
//   - non-Latin scripts per char (Greek/Cyrillic ~0.4, Indic ~0.5, Japanese/Chinese ~0.7–0.9);
//   - long [A-Za-z0-9+/] runs that look random (base64, keys, ids) per char: BPE finds no long
//     merges in them.
// Every char adds a non-negative amount or moves cost between pieces in a way that never lowers
// the total, so appending text never lowers the estimate.

// Character classes.
const LOWER = 0, UPPER = 1, DIGIT = 2, SLASHPLUS = 3, SPACE = 4, NEWLINE = 5, PUNCT = 6, APOS = 7;
const SYM = 8, EMOJI = 9, CONTROL = 10, XLAT = 11, XGRC = 12, XOTH = 13, XIND = 14, KANA = 15, HAN = 16, HANGUL = 17, LOWSUR = 18;

const CLASS = new Uint8Array(65536).fill(SYM);
(() => {
  const set = (from: number, to: number, k: number): void => void CLASS.fill(k, from, to + 1);
  set(0, 127, PUNCT);
  set(0, 0x1f, CONTROL); // ESC in terminal colours: "\u001b" "[" "36" "m" are 4 tokens
  CLASS[0x7f] = CONTROL;
  set(0x61, 0x7a, LOWER);
  set(0x41, 0x5a, UPPER);
  set(0x30, 0x39, DIGIT);
  // JavaScript's \s, which the o200k regex uses.
  for (const c of [0x09, 0x0b, 0x0c, 0x20, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff]) CLASS[c] = SPACE;
  set(0x2000, 0x200a, SPACE);
  CLASS[0x0a] = CLASS[0x0d] = NEWLINE;
  CLASS[0x2b] = CLASS[0x2f] = SLASHPLUS; // '+' and '/': punctuation that also occurs in base64
  CLASS[0x27] = APOS;
  // Letters: Latin with accents, Greek/Cyrillic, other alphabets (Armenian, Hebrew, Arabic,
  // Georgian), Indic and South-East Asian scripts (their vowel signs included), CJK.
  set(0xc0, 0x2af, XLAT);
  CLASS[0xd7] = CLASS[0xf7] = SYM;
  CLASS[0xaa] = CLASS[0xb5] = CLASS[0xba] = XLAT;
  set(0x300, 0x36f, XLAT); // combining accents
  set(0x1e00, 0x1eff, XLAT);
  set(0xff21, 0xff3a, XLAT);
  set(0xff41, 0xff5a, XLAT);
  set(0x370, 0x52f, XGRC);
  CLASS[0x37e] = CLASS[0x387] = SYM;
  set(0x1f00, 0x1fff, XGRC);
  set(0x531, 0x8ff, XOTH);
  set(0x10a0, 0x10ff, XOTH);
  set(0x900, 0xeff, XIND);
  set(0x1000, 0x109f, XIND);
  set(0x1780, 0x17ff, XIND);
  set(0x3041, 0x30ff, KANA);
  CLASS[0x30fb] = SYM; // ・
  set(0xff66, 0xff9f, KANA);
  set(0x3400, 0x4dbf, HAN);
  set(0x4e00, 0x9fff, HAN);
  set(0xf900, 0xfaff, HAN);
  set(0x1100, 0x11ff, HANGUL);
  set(0xac00, 0xd7af, HANGUL);
  set(0xd800, 0xdbff, EMOJI); // astral chars are mostly emoji
  set(0xdc00, 0xdfff, LOWSUR);
})();

/** Index of each weight (tokens) in the weight vector. */
export const W = {
  WS: 0, // a run of spaces/tabs (one piece whatever its length)
  NL: 1, // a run of newlines (with the blank-line spaces between them)
  NL_AFTER_PUNCT: 2, // newlines directly after punctuation join its piece ("{\n", ");\n")
  DIGITS: 3, // each group of up to 3 digits
  SYM: 4, // a non-ASCII symbol starting a punctuation run (→, —, “, │)
  SYM_NEXT: 5, // a further one in the run ("├──")
  EMOJI: 6, // each astral char (emoji)
  LATIN: 7, // each accented Latin letter after the first of a piece
  GREEK_CYRILLIC: 8, // each Greek/Cyrillic letter after the first of a piece
  ALPHABET: 9, // each Armenian/Hebrew/Arabic/Georgian letter after the first of a piece
  INDIC: 10, // each Indic/Thai char (letters and vowel signs) after the first of a piece
  KANA: 11,
  HAN: 12,
  HANGUL: 13,
  CJK_START: 14, // extra per CJK piece
  UPPER: 15, // extra per capital that is not the first of its piece ("HTTP", "XMLHttp")
  CONSONANT: 16, // extra per letter from the 4th of a run of consonants ("xcvbn", "strptime")
  APOS: 17, // an apostrophe right after a letter ("don't", "it's" are one token)
  APOS_REST: 18, // ... when no contraction follows it ("'key']": the apostrophe is a token)
  REPEAT_LETTER: 19, // a letter equal to the two before it ("AAAAAAAA" is one token)
  CONTROL: 20, // each control char (ESC of terminal colours)
  RANDOM: 21, // per char of a base64-like run
  RANDOM_SWITCH: 22, // per change between lower case, upper case, digits and +/ in such a run
  REPEAT_PUNCT: 23, // a punctuation char equal to the two before it, 3rd to 8th of the run
  REPEAT_LONG: 24, // ... beyond the 8th ("^" × 64 is 8 tokens)
  RULER: 25, // a repeated char of "=-#*./_~+%─", 3rd to 8th: the vocabulary has 32–64-char runs
  RULER_LONG: 26, // ... beyond the 8th
  ESCAPE: 27, // the letter of a backslash escape ("\\n" in JSON strings is one token; the word after it another)
  PUNCT: 28, // 4 entries: the 1st, 2nd, 3rd and each further char of a punctuation run
  WORD: 32, // 5 leads × 6 entries: a letter piece by lead (none, space, cheap punct, other punct,
  //           tab), its 1st letter, then each letter at positions 2–4, 5–6, 7–8, 9–10, 11+
  SIZE: 62,
} as const;
const PUNCT_STEPS = 4;
const WORD_STEPS = 6;
const LEADS = 5;
/** Letter position (1-based, capped at 11) → entry of the word table. */
const WORD_STEP = Uint8Array.from([0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5]);
const LEAD_NONE = 0, LEAD_SPACE = 1, LEAD_CHEAP = 2, LEAD_PUNCT = 3, LEAD_TAB = 4;
/** How a single ASCII punctuation char joins the word after it: ".foo" "_foo" "(foo" are often
 * one token, "/usr" "=value" "-name" usually two. */
const LEAD = new Uint8Array(128).fill(LEAD_PUNCT);
for (const ch of "._([#@$`") LEAD[ch.charCodeAt(0)] = LEAD_CHEAP;
/** Chars whose long runs are few tokens ("=" × 64 is one token, "(" × 64 sixteen). */
const RULER = new Uint8Array(65536);
for (const ch of "=-#*./_~+%─") RULER[ch.charCodeAt(0)] = 1;
/** ASCII consonants (y counts as a vowel). */
const CONSONANT = new Uint8Array(65536);
for (const ch of "bcdfghjklmnpqrstvwxzBCDFGHJKLMNPQRSTVWXZ") CONSONANT[ch.charCodeAt(0)] = 1;
/** Per-char weight of the non-Latin alphabetic classes. */
const SCRIPT_WEIGHT = new Uint8Array(LOWSUR + 1);
SCRIPT_WEIGHT[XLAT] = W.LATIN;
SCRIPT_WEIGHT[XGRC] = W.GREEK_CYRILLIC;
SCRIPT_WEIGHT[XOTH] = W.ALPHABET;
SCRIPT_WEIGHT[XIND] = W.INDIC;

const isLetterClass = (k: number): boolean => k <= UPPER || (k >= XLAT && k <= HANGUL);
const isPunctClass = (k: number): boolean => k === SLASHPLUS || (k >= PUNCT && k <= CONTROL);

function isContractionLetter(c: number): boolean {
  const l = c | 0x20; // 's 't 'd 'm 'll 've 're
  return l === 0x73 || l === 0x74 || l === 0x64 || l === 0x6d || l === 0x6c || l === 0x76 || l === 0x72;
}

/** Word costs expanded to one entry per (lead, letter position 1..11). */
function expandWords(w: Float64Array): Float64Array {
  const x = new Float64Array(LEADS * 12);
  for (let lead = 0; lead < LEADS; lead++) for (let pos = 1; pos <= 11; pos++) x[lead * 12 + pos] = w[W.WORD + lead * WORD_STEPS + WORD_STEP[pos]!]!;
  return x;
}

/**
 * Extra cost of a finished [A-Za-z0-9+/] run text[from, to) that looks random (base64, keys,
 * hashes): its per-char cost minus what its pieces were charged (`charged`). Runs shorter than
 * 20 chars or without a mix of digits, capitals and small letters are left alone.
 */
function randomRunExtra(text: string, from: number, to: number, charged: number, w: Float64Array, replace: boolean): number {
  const len = to - from;
  if (len < 20) return 0;
  let digits = 0, upper = 0, lower = 0, switches = 0, repeats = 0, prevK = -1, prevC = -1, same = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    const k = CLASS[c]!;
    if (k === DIGIT) digits++;
    else if (k === UPPER) upper++;
    else if (k === LOWER) lower++;
    if (prevK >= 0 && k !== prevK) switches++;
    same = c === prevC ? same + 1 : 1;
    if (same >= 3) repeats++;
    prevK = k;
    prevC = c;
  }
  if (digits < 2 || upper < 4 || lower < 4 || switches < 8) return 0;
  const r = w[W.RANDOM]! * (len - repeats) + w[W.REPEAT_LETTER]! * repeats + w[W.RANDOM_SWITCH]! * switches;
  return replace ? r - charged : Math.max(0, r - charged);
}

/**
 * The unrounded estimate under weights `w`. `replace` charges random runs at their per-char
 * cost alone, which is linear in `w` (for calibration); the default charges the larger of that
 * and their piece cost, which keeps the estimate monotone under appending.
 * @internal exported for bench/calibrate-estimator.ts
 */
export function estimateWith(text: string, w: Float64Array, replace = false): number {
  const words = w === WEIGHTS ? WORDS : expandWords(w);
  const wRepeatLetter = w[W.REPEAT_LETTER]!, wConsonant = w[W.CONSONANT]!, wUpper = w[W.UPPER]!;
  let t = 0;
  let prev = NEWLINE; // the start of text behaves like the start of a line
  let prevCode = -1, same = 0; // length of the run of identical chars ending here
  let wl = 0, wordBase = 0, cons = 0; // letters in the current piece, its row in `words`, trailing consonants
  let pl = 0, plSpace = false, lastPunct = 0, lastCode = 0; // punctuation run: length, led by a space, last char's cost and code
  let aposWord = false; // the last char is an apostrophe right after a letter
  let esc = false; // the last char is the letter of a backslash escape
  let dl = 0; // digits so far in the current digit run
  let sp = 0, nl = false, tab = false; // pending spaces (after the last pending newline), newline piece; the last space is a tab
  let absorbNl = false; // newlines now join the preceding punctuation piece
  let runStart = -1, runT0 = 0; // the current [A-Za-z0-9+/] run and the total before its first char
  let longRuns: number[] | undefined; // (start, end, cost charged) of runs of 20+ chars
  const n = text.length;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    const k = CLASS[c]!;
    if (k <= UPPER && prev <= UPPER && !esc) {
      // Hot path: ASCII letters continuing a word (split at small→capital: "get|Element").
      let kk: number = k;
      for (;;) {
        same = c === prevCode ? same + 1 : 1;
        prevCode = c;
        let own: number;
        if (kk === UPPER && prev === LOWER) {
          wordBase = wl = cons = 0; // a new piece without lead
          own = words[++wl]!;
        } else {
          wl++;
          own = words[wordBase + (wl < 11 ? wl : 11)]!;
          if (kk === UPPER) own += wUpper;
        }
        if (CONSONANT[c] === 1) {
          if (++cons >= 4) own += wConsonant;
        } else cons = 0;
        t += same >= 3 ? wRepeatLetter : own;
        prev = kk;
        if (i + 1 >= n) break;
        c = text.charCodeAt(i + 1);
        kk = CLASS[c]!;
        if (kk > UPPER) break;
        i++;
      }
      aposWord = false;
      continue;
    }
    if (k === LOWSUR) continue;
    const inRun = k <= SLASHPLUS;
    if (!inRun && runStart >= 0) {
      if (i - runStart >= 20) (longRuns ??= []).push(runStart, i, t - runT0); // priced after the loop
      runStart = -1;
    }
    if (aposWord && !((k === LOWER || k === UPPER) && isContractionLetter(c))) t += w[W.APOS_REST]!;
    if (k === SPACE) {
      // A whitespace run is priced when the char after it is known.
      sp++;
      tab = c === 0x09;
      while (i + 1 < n && CLASS[(c = text.charCodeAt(i + 1))] === SPACE) {
        i++;
        sp++;
        tab = c === 0x09;
      }
      same = 1;
      prevCode = 0x20;
      absorbNl = aposWord = esc = false;
      prev = SPACE;
      continue;
    }
    same = c === prevCode ? same + 1 : 1;
    prevCode = c;
    const escaped = esc;
    esc = false;
    if (k === NEWLINE) {
      if (absorbNl || isPunctClass(prev)) {
        absorbNl = true;
        t += w[W.NL_AFTER_PUNCT]!;
      } else {
        nl = true;
        sp = 0; // spaces before a newline belong to the newline piece
      }
      aposWord = false;
      prev = k;
      continue;
    }
    // Settle pending whitespace now that the next piece is known.
    let led = false; // the last pending space leads this piece
    if (sp > 0 || nl) {
      if (nl) t += w[W.NL]!;
      if (sp > 0) {
        // Digits take no leading space, punctuation no leading tab.
        if (k === DIGIT || (tab && isPunctClass(k))) t += sp >= 2 ? 2 * w[W.WS]! : w[W.WS]!;
        else {
          if (sp >= 2) t += w[W.WS]!;
          led = true;
        }
      }
      sp = 0;
      nl = false;
    }
    const glued = absorbNl; // "[\r\n/]*" after punctuation takes slashes too: "});\n\n//"
    absorbNl = false;
    let own = 0; // this char's own cost
    if (k <= UPPER || (k >= XLAT && k <= XIND)) {
      if (isLetterClass(prev) && !escaped && !(k === UPPER && (prev === LOWER || prev === XLAT || prev === XGRC))) {
        wl++;
        own = k <= UPPER ? words[wordBase + (wl < 11 ? wl : 11)]! : w[SCRIPT_WEIGHT[k]!]!;
        if (k === UPPER) own += w[W.UPPER]!;
      } else if (aposWord && k <= UPPER && isContractionLetter(c)) {
        wl++; // "don't", "it's": the suffix continues the word
        own = words[wordBase + (wl < 11 ? wl : 11)]!;
      } else if (k <= UPPER && prev === PUNCT && lastCode === 0x5c && pl === 1 && !plSpace) {
        own = w[W.ESCAPE]!; // "\\n", "\\t": the next letter starts a word of its own
        esc = true;
        wl = 0;
      } else {
        let lead = LEAD_NONE;
        if (led) lead = tab ? LEAD_TAB : LEAD_SPACE;
        else if ((prev === PUNCT || prev === SLASHPLUS || prev === APOS) && pl === 1 && !plSpace) {
          // One ASCII punctuation char leads the word: ".foo", "(bar", "/usr".
          lead = LEAD[lastCode]!;
          t -= lastPunct;
        }
        wordBase = lead * 12;
        wl = 1;
        cons = 0;
        own = words[wordBase + 1]!;
      }
      if (c < 128 && CONSONANT[c] === 1) {
        if (++cons >= 4) own += wConsonant;
      } else cons = 0;
      if (same >= 3 && k <= UPPER) own = wRepeatLetter;
      aposWord = false;
    } else if (k === DIGIT) {
      dl = prev === DIGIT ? dl + 1 : 1;
      if (dl % 3 === 1) own = w[W.DIGITS]!;
      wl = 0;
      aposWord = false;
    } else if (isPunctClass(k)) {
      if (isPunctClass(prev) || (glued && c === 0x2f)) pl++;
      else {
        pl = 1;
        plSpace = led;
      }
      aposWord = k === APOS && pl === 1 && !plSpace && (prev <= UPPER || (prev >= XLAT && prev <= XIND));
      if (same >= 3) own = w[(RULER[c] === 1 ? W.RULER : W.REPEAT_PUNCT) + (same > 8 ? 1 : 0)]!;
      else if (aposWord) own = w[W.APOS]!;
      else if (k === CONTROL) own = w[W.CONTROL]!;
      else if (k === SYM) own = w[pl === 1 ? W.SYM : W.SYM_NEXT]!;
      else if (k === EMOJI) own = w[W.EMOJI]!;
      else own = w[W.PUNCT + (pl < PUNCT_STEPS ? pl : PUNCT_STEPS) - 1]!;
      lastPunct = own;
      lastCode = c;
      if (k === CONTROL) pl = 0; // BPE never merges across it: the next char starts afresh
      if (k !== APOS) wl = 0;
    } else {
      // Kana, han, hangul: a CJK piece; a char leading it stays its own token.
      own = (prev === KANA || prev === HAN || prev === HANGUL ? 0 : w[W.CJK_START]!) + w[k === KANA ? W.KANA : k === HAN ? W.HAN : W.HANGUL]!;
      wl = 0;
      aposWord = false;
    }
    if (inRun && runStart < 0) {
      runStart = i;
      runT0 = t;
    }
    t += own;
    prev = k;
  }
  if (runStart >= 0 && n - runStart >= 20) (longRuns ??= []).push(runStart, n, t - runT0);
  if (longRuns) for (let j = 0; j < longRuns.length; j += 3) t += randomRunExtra(text, longRuns[j]!, longRuns[j + 1]!, longRuns[j + 2]!, w, replace);
  if (nl) t += w[W.NL]!;
  if (sp > 0) t += w[W.WS]!;
  return t;
}

// Calibrated weights (bench/calibrate-estimator.ts): provisional until fitted.
const WEIGHTS = new Float64Array(W.SIZE);
(() => {
  const v = WEIGHTS;
  v[W.WS] = 1; v[W.NL] = 1; v[W.NL_AFTER_PUNCT] = 0.05; v[W.DIGITS] = 1; v[W.SYM] = 1; v[W.SYM_NEXT] = 0.5;
  v[W.EMOJI] = 1.5; v[W.LATIN] = 0.4; v[W.GREEK_CYRILLIC] = 0.4; v[W.ALPHABET] = 0.5; v[W.INDIC] = 0.5;
  v[W.KANA] = 0.7; v[W.HAN] = 0.85; v[W.HANGUL] = 0.8; v[W.CJK_START] = 0.2;
  v[W.UPPER] = 0.2; v[W.CONSONANT] = 0.5; v[W.APOS] = 0.1; v[W.APOS_REST] = 0.9;
  v[W.REPEAT_LETTER] = 0.12; v[W.REPEAT_PUNCT] = 0.3; v[W.REPEAT_LONG] = 0.03; v[W.RANDOM] = 0.66;
  v[W.RANDOM_SWITCH] = 0; v[W.CONTROL] = 1; v[W.RULER] = 0.1; v[W.RULER_LONG] = 0.03; v[W.ESCAPE] = 0;
  [1, 0.02, 0.25, 0.45].forEach((x, i) => (v[W.PUNCT + i] = x));
  const word = [
    [1, 0, 0.03, 0.08, 0.15, 0.25],
    [1, 0, 0.01, 0.04, 0.05, 0.15],
    [1.05, 0.01, 0.04, 0.1, 0.2, 0.3],
    [1.2, 0.05, 0.15, 0.25, 0.3, 0.3],
    [1.5, 0, 0.03, 0.08, 0.15, 0.25],
  ];
  word.forEach((row, lead) => row.forEach((x, i) => (v[W.WORD + lead * WORD_STEPS + i] = x)));
})();

const WORDS = expandWords(WEIGHTS);

// Run every branch once at load, so that the optimizing compiler sees type feedback for all of
// them: otherwise a rarely taken branch (a CJK char, an emoji) deoptimizes the hot loop later and
// its speed varies 2× from run to run.
estimateWith(
  "Hi it's \tx\n\\n\"q\" O'Brien don'\n {\n\t}\n// ===== ^^^^ ──── 12345 a+b/c \u001b[1m→ é ж א ক 日本語 かな 한 😀 \r\n" +
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  WEIGHTS,
);

/** Estimated o200k token count of `text` (an integer; 0 for ""). */
export function estimateTokens(text: string): number {
  return Math.round(estimateWith(text, WEIGHTS));
}

/** @internal the weights in use, for the calibration script. */
export function currentWeights(): Float64Array {
  return WEIGHTS.slice();
}
