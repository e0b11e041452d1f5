// Fast token estimate calibrated against exact o200k (bench/tokens.ts, bench/calibrate-estimator.ts).
//
// o200k first splits text with a regex into "pieces", then runs BPE inside each piece. This
// estimator follows the same split in one pass over charCodeAt (a class lookup table, no regex):
//   - letter pieces, with at most one leading space or punctuation char (" foo", "(foo", "/usr"),
//     split at lower→upper case changes ("getElement" → "get" "Element"), in any alphabet: when a
//     piece ends it costs the tokens o200k's own vocabulary spells it in, by greedy longest match
//     (./vocab.ts). A model by length was right for English and code and 8-30% under on words o200k
//     saw less of (Italian, Finnish, Klingon, package names);
//   - digits in groups of up to 3;
//   - whitespace runs (indentation, blank lines) are one piece; the last space before a word or
//     punctuation joins that piece; newlines right after punctuation join it ("{\n", "')\n");
//   - ASCII punctuation runs by length; runs of one repeated char ("=====") cost little; other
//     symbols (emoji, flags, arrows, box drawing) the tokens o200k makes of each alone;
//   - CJK per char, each script at its own rate: hiragana ~0.6, katakana ~0.65, kanji (han after
//     any kana) ~0.9, Chinese han ~0.7, hangul ~0.65 plus a little per space-separated word;
//     scripts with few merges (Tamil, Khmer, ...) per char, and those with next to none (Lao,
//     Ethiopic, Tifinagh) at ~3 per char;
//   - digit groups right after a letter (hex digests, ids) at their own rate;
//   - long [A-Za-z0-9+/] runs that look random (base64, keys, ids) per char: BPE finds no long
//     merges in them; likewise [A-Za-z0-9+/,;] runs that look like a source map's "mappings".
// Every char adds a non-negative amount or moves cost between pieces in a way that never lowers
// the total, so appending text never lowers the estimate (a piece the text ends in is priced
// "open": see greedyTokens).
//
// Layout: ./estimate-classes.ts holds the character classes and per-char tables, ./estimate-weights.ts
// the weight vector and its fitted values, ./estimate-symbols.ts the symbols, ./estimate-runs.ts the
// long base64-like runs, ./vocab-cache.ts the pieces already priced, ./estimate-warmup.ts what the
// scan reads before its first estimate; this file the scan.
import * as classes from "./estimate-classes.ts";
import * as weights from "./estimate-weights.ts";
import { type Vocab, greedyTokens } from "./vocab.ts";
import { keyedTokens, pieceCache } from "./vocab-cache.ts";
import { o200kVocab } from "./vocab-o200k.ts";
import { codePointAt, symbolEnds, symbolTokens } from "./estimate-symbols.ts";
import { RUN_TOTALS as runTotals, flushRuns, noteRun, randomRunExtra, vlqRunExtra } from "./estimate-runs.ts";
import { warmUp } from "./estimate-warmup.ts";
import { LetheInputError } from "../messages/input.ts";

export { W } from "./estimate-weights.ts";

// Module constants, not imported bindings: TurboFan folds this module's own constants into the
// scan's code, but reads an import through its module cell at every use (with named imports the
// scan ran ~50% more instructions). The helpers below stay in this file for the same reason.
const {
  APOS, CLASS, CONTROL, DIGIT, EMOJI, HAN, HANGUL, KANA, KATA, LOWER,
  NEWLINE, PUNCT, SLASHPLUS, SPACE, SYM, UPPER, XBYTE, XCYR, XCYR2, XGRC, XIND, XLAT, XRARE,
} = classes;
const { W, WEIGHTS } = weights;
const RUN_TOTALS = runTotals;
/** Called on the text (`charCodeAt.call(text, i)`), never looked up on it: a host hands over
 * strings of every kind V8 has (slices, concatenations, internalized ones), and a lookup met with
 * them all is compiled megamorphic, made again for every char (bench:tokens: 48 MB/s, not 84). */
const charCodeAt = String.prototype.charCodeAt;

/** Chars whose long runs are few tokens: "=-#*./_~+%" ("=" × 64 is one token, "(" × 64 sixteen). */
const isRuler = (c: number): boolean =>
  c === 0x3d || c === 0x2d || c === 0x23 || c === 0x2a || c === 0x2e || c === 0x2f || c === 0x5f || c === 0x7e || c === 0x2b || c === 0x25;
const isLetterClass = (k: number): boolean => k <= UPPER || (k >= XLAT && k <= XBYTE);
/** A letter that goes into letter pieces (the rare scripts are priced per char instead). */
const isPieceLetter = (k: number): boolean => k <= UPPER || (k >= XLAT && k <= XIND);
/** Whether a piece letter of class `k` continues the piece of the char before it: not after an
 * escape's letter ("\\nfoo"), not at a small→capital change ("get|Element"). */
const continuesPiece = (k: number, prev: number, afterEscape: boolean): boolean =>
  isLetterClass(prev) && !afterEscape && !(k === UPPER && (prev === LOWER || prev === XLAT || prev === XGRC || prev === XCYR || prev === XCYR2));
const isPunctClass = (k: number): boolean => k === SLASHPLUS || (k >= PUNCT && k <= CONTROL);
const isSymbolClass = (k: number): boolean => k === SYM || k === EMOJI;
/** A word of a piece's key (./vocab-cache.ts): 4 chars of 7 bits. */
const KEY = 0xfffffff;

function isContractionLetter(c: number): boolean {
  const l = c | 0x20; // 's 't 'd 'm 'll 've 're
  return l === 0x73 || l === 0x74 || l === 0x64 || l === 0x6d || l === 0x6c || l === 0x76 || l === 0x72;
}

/** o200k's letter tokens (./vocab.ts), loaded by the first estimate, which first warms the scan
 * up (./estimate-warmup.ts; ~5 ms). */
let vocab: Vocab | undefined;
function firstVocab(): Vocab {
  const v = (vocab = o200kVocab());
  warmUp(estimateWith, WEIGHTS);
  return v;
}

/**
 * The unrounded estimate under weights `w`. `replace` charges random runs at their per-char
 * cost alone, which is linear in `w` (for calibration); the default charges the larger of that
 * and their piece cost, which keeps the estimate monotone under appending.
 * @internal exported for bench/calibrate-estimator.ts
 */
export function estimateWith(text: string, w: Float64Array, replace = false): number {
  // Every weight in a local: loads at entry always run, so the compiler has type feedback for
  // them (a first load inside a rare branch deoptimizes the loop, and at worst keeps doing so).
  const wWs = w[W.WS]!, wNl = w[W.NL]!, wNlAfterPunct = w[W.NL_AFTER_PUNCT]!, wDigits = w[W.DIGITS]!;
  const wEscape = w[W.ESCAPE]!;
  const wApos = w[W.APOS]!, wAposRest = w[W.APOS_REST]!, wControl = w[W.CONTROL]!, wEmoji = w[W.EMOJI]!, wCjkStart = w[W.CJK_START]!;
  const wPunct1 = w[W.PUNCT]!, wPunct2 = w[W.PUNCT + 1]!, wPunct3 = w[W.PUNCT + 2]!, wPunct4 = w[W.PUNCT + 3]!;
  const wKana = w[W.KANA]!, wKatakana = w[W.KATAKANA]!, wHan = w[W.HAN]!, wHanJa = w[W.HAN_JA]!, wHangul = w[W.HANGUL]!, wRare = w[W.RARE]!;
  const wByte = w[W.BYTE_SCRIPT]!;
  const wDigitsAfterLetter = w[W.DIGITS_AFTER_LETTER]!, wCjkAfterSym = w[W.CJK_AFTER_SYM]!;
  const wHangulStart = w[W.HANGUL_START]!, wSym = w[W.SYM]!, wSymNext = w[W.SYM_NEXT]!;
  // (A miss never costs less than a token: see greedyTokens. Not in calibration, which needs the
  // estimate linear in the weights.)
  const wVocab = w[W.VOCAB]!, wVocabMiss = replace ? w[W.VOCAB_MISS]! : Math.max(w[W.VOCAB_MISS]!, wVocab);
  const v = vocab ?? firstVocab();
  const pc = pieceCache(v, wVocab, wVocabMiss), costs = pc.costs;
  const wRuler = w[W.RULER]!, wRulerLong = w[W.RULER_LONG]!, wRepeatPunct = w[W.REPEAT_PUNCT]!, wRepeatLong = w[W.REPEAT_LONG]!;
  // -0, not 0: doubles from the start, so the compiler keeps them unboxed (a small-integer start
  // sometimes makes it box every addition).
  let t = -0;
  let prev = NEWLINE; // the start of text behaves like the start of a line
  let prevCode = -1, same = 0; // length of the run of identical chars ending here
  let pl = 0, plSpace = false, lastPunct = -0, lastCode = 0; // punctuation run: length, led by a space, last char's cost and code
  let aposWord = false; // the last char is an apostrophe right after a letter
  let esc = false; // the last char is the letter of a backslash escape
  let sp = 0, nl = 0, tab = false; // pending spaces (after the last pending newline) and newlines; the last space is a tab
  let absorbNl = false; // newlines now join the preceding punctuation piece
  let symEnd = 0; // what no token joins to the last symbol (symbolEnds)
  let runStart = -1, runT0 = -0; // the current [A-Za-z0-9+/] run and the total before its first char
  let vlqStart = -1, vlqT0 = -0; // likewise for [A-Za-z0-9+/,;] (source map mappings)
  let ja = false; // a kana char was seen: han chars are Japanese kanji from here on
  // The letter piece being read (its lead char included) and the total before it: when it ends
  // its cost is replaced by its tokens in the vocabulary (greedy longest match).
  let pieceStart = -1, pieceT0 = -0;
  // An apostrophe right after a piece, waiting for the next char: a contraction ("don't", "it's",
  // "we'll") is one piece with the word before it in o200k's split. Its index and the total before it.
  let aposAt = -1, tApos = -0;
  // The piece's last 8 chars, 7 bits each (key1: the older four), and whether one is not ASCII:
  // the key of a piece of up to 8 chars in the cache of priced pieces (./vocab-cache.ts), built
  // as the scan reads it. (28-bit words: a call the compiler does not inline takes them as small
  // integers; a full 32-bit word would be boxed, an allocation per piece.)
  let key0 = 0, key1 = 0, wide = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    let c = charCodeAt.call(text, i);
    const k = CLASS[c]!;
    if (k <= UPPER) {
      if (prev <= UPPER && !esc) {
        // Hot path: ASCII letters continuing a piece (split at small→capital: "get|Element"). The
        // piece is priced when it ends, so nothing is charged here.
        if (pieceStart < 0) {
          pieceStart = i;
          pieceT0 = t;
          key0 = key1 = 0;
          wide = false;
        }
        let kk: number = k;
        for (;;) {
          if (kk === UPPER && prev === LOWER) {
            t = pieceT0 + costs[keyedTokens(pc, text, pieceStart, i, key0, key1, wide)]!;
            pieceStart = i;
            pieceT0 = t;
            key0 = key1 = 0;
            wide = false;
          }
          key1 = ((key1 << 7) | (key0 >>> 21)) & KEY;
          key0 = ((key0 << 7) | c) & KEY;
          prev = kk;
          if (i + 1 >= n) break;
          const c1 = charCodeAt.call(text, i + 1);
          kk = CLASS[c1]!;
          if (kk > UPPER) break;
          c = c1;
          i++;
        }
        same = c === prevCode ? same + 1 : 1;
        prevCode = c;
        aposWord = false;
        continue;
      }
      // The commonest classes each have a path of their own: the steps of the general path
      // (below) that concern them, in the same order, without its tests for every other class.
      // An ASCII letter after anything but a letter (or after an escape's letter): the piece
      // ends before an apostrophe not followed by a contraction, or here. (One call of
      // keyedTokens for both, as in the path below: the compiler inlines only so many.)
      const goesOn = continuesPiece(k, prev, esc);
      if (aposAt >= 0 ? !isContractionLetter(c) : pieceStart >= 0 && !goesOn) {
        const cost = costs[keyedTokens(pc, text, pieceStart, aposAt >= 0 ? aposAt : i, key0, key1, wide)]!;
        t = aposAt >= 0 ? pieceT0 + cost + (t - tApos) : pieceT0 + cost;
        pieceStart = -1;
      }
      aposAt = -1;
      same = c === prevCode ? same + 1 : 1;
      prevCode = c;
      esc = false;
      // Pending newlines are settled here; pending spaces never are: a letter after them takes
      // the space path below.
      if (nl > 0) {
        t += wNl * (1 + (nl >> 4));
        nl = 0;
      }
      absorbNl = false;
      let own = -0;
      if (goesOn || (aposWord && isContractionLetter(c))) {
        // The piece goes on, or a contraction ("don't", "it's") goes on with the piece before
        // the apostrophe (kept open above) or, where there was none, starts one at it.
        if (pieceStart < 0) {
          key0 = key1 = 0;
          wide = false;
          pieceStart = i;
          pieceT0 = t;
          if (!goesOn) {
            pieceStart = i - 1;
            pieceT0 = t - lastPunct;
          }
        }
        if (!goesOn) {
          key1 = ((key1 << 7) | (key0 >>> 21)) & KEY;
          key0 = ((key0 << 7) | 0x27) & KEY;
        }
      } else if (prev === PUNCT && lastCode === 0x5c && pl === 1 && !plSpace) {
        own = wEscape; // "\\n", "\\t": the next letter starts a word of its own
        esc = true;
      } else {
        // A new piece, led by one punctuation char ("(foo", ".bar", "/usr", "\ud800a": "�a").
        pieceStart = i;
        key0 = key1 = 0;
        wide = false;
        if ((prev === PUNCT || prev === SLASHPLUS || prev === APOS || (lastCode === 0xfffd && isSymbolClass(prev))) && pl === 1 && !plSpace) {
          t -= lastPunct;
          pieceStart = i - 1;
        }
        if (pieceStart < i) {
          key0 = charCodeAt.call(text, i - 1);
          wide = key0 > 0x7f;
        }
        pieceT0 = t;
      }
      if (!esc) {
        key1 = ((key1 << 7) | (key0 >>> 21)) & KEY;
        key0 = ((key0 << 7) | c) & KEY;
      }
      aposWord = false;
      if (runStart < 0) {
        runStart = i;
        runT0 = t;
      }
      if (vlqStart < 0) {
        vlqStart = i;
        vlqT0 = t;
      }
      t += own;
      prev = k;
      continue;
    }
    if (k === SPACE || k === PUNCT || k === NEWLINE || k === DIGIT) {
      // What ends here: an apostrophe's piece, the piece, the runs.
      if (pieceStart >= 0) {
        const cost = costs[keyedTokens(pc, text, pieceStart, aposAt >= 0 ? aposAt : i, key0, key1, wide)]!;
        t = aposAt >= 0 ? pieceT0 + cost + (t - tApos) : pieceT0 + cost;
        pieceStart = -1;
        aposAt = -1;
      }
      const inVlq = k === DIGIT || c === 0x2c || c === 0x3b;
      // A long run is priced after the loop (./estimate-runs.ts); the totals go by RUN_TOTALS.
      if (k !== DIGIT && runStart >= 0) {
        if (i - runStart >= 20) {
          RUN_TOTALS[0] = t;
          RUN_TOTALS[1] = runT0;
          noteRun(text, runStart, i, 0, w, replace);
          t = RUN_TOTALS[0]!;
        }
        runStart = -1;
      }
      if (!inVlq && vlqStart >= 0) {
        if (i - vlqStart >= 64) {
          RUN_TOTALS[0] = t;
          RUN_TOTALS[1] = vlqT0;
          noteRun(text, vlqStart, i, 1, w, replace);
          t = RUN_TOTALS[0]!;
        }
        vlqStart = -1;
      }
      // An apostrophe after a word is a token of its own only when no letter follows: a contraction
      // keeps it in the word's piece, any other letter takes it as its lead ("O'Brien", "'a'a").
      if (aposWord) t += wAposRest;
      if (k === SPACE) {
        // A whitespace run is priced when the char after it is known.
        sp++;
        tab = c === 0x09;
        while (i + 1 < n && CLASS[(c = charCodeAt.call(text, i + 1))] === SPACE) {
          i++;
          sp++;
          tab = c === 0x09;
        }
        same = 1;
        prevCode = 0x20;
        absorbNl = aposWord = esc = false;
        prev = SPACE;
        if (i + 1 < n && CLASS[c]! <= UPPER) {
          // An ASCII letter next (c): a word led by the last space. The letter path above, for
          // this case (nothing pending but whitespace), here: one dispatch fewer a word.
          const lead = charCodeAt.call(text, i);
          i++;
          if (nl > 0) t += wNl * (1 + (nl >> 4));
          if (sp >= 2) t += wWs * (1 + (sp >> 7));
          sp = nl = 0;
          pieceStart = runStart = vlqStart = i;
          pieceStart--;
          pieceT0 = runT0 = vlqT0 = t;
          key1 = 0;
          key0 = ((lead << 7) | c) & KEY;
          wide = lead > 0x7f;
          prevCode = c;
          prev = CLASS[c]!;
        }
        continue;
      }
      same = c === prevCode ? same + 1 : 1;
      prevCode = c;
      esc = false;
      aposWord = false;
      if (k === NEWLINE) {
        if (absorbNl || (isPunctClass(prev) && !(isSymbolClass(prev) && (symEnd & 2) !== 0))) {
          absorbNl = true;
          t += wNlAfterPunct;
        } else {
          nl++;
          sp = 0; // spaces before a newline belong to the newline piece
        }
        prev = k;
        continue;
      }
      // Settle pending whitespace now that the next piece is known.
      // A whitespace piece is one token up to ~100 spaces or 16 newlines, then one more per as many.
      let led = false; // the last pending space leads this piece
      if (sp > 0 || nl > 0) {
        if (nl > 0) t += wNl * (1 + (nl >> 4));
        if (sp > 0) {
          // Digits take no leading space, punctuation no leading tab.
          if (k === DIGIT || tab) t += wWs * ((sp >= 2 ? 2 : 1) + (sp >> 7));
          else {
            if (sp >= 2) t += wWs * (1 + (sp >> 7));
            led = true;
          }
        }
        sp = nl = 0;
      }
      absorbNl = false;
      const at = i;
      let own: number;
      if (k === DIGIT) {
        // Groups of up to 3 digits, counted from the start of the run.
        // After a letter (hex digests, ids: "6ffe1d005") each group is one piece and one token.
        const wD = prev <= UPPER ? wDigitsAfterLetter : wDigits;
        let dl = 1;
        own = wD;
        while (i + 1 < n && (c = charCodeAt.call(text, i + 1)) >= 0x30 && c <= 0x39) {
          i++;
          if (++dl % 3 === 1) own += wD;
        }
        prevCode = charCodeAt.call(text, i);
        if (runStart < 0) {
          runStart = at;
          runT0 = t;
        }
      } else {
        // ASCII punctuation ("/" is not of this class: a slash glued to newlines is not either).
        if (isPunctClass(prev)) pl++;
        else {
          pl = 1;
          plSpace = led;
        }
        if (same >= 3) own = isRuler(c) ? (same > 8 ? wRulerLong : wRuler) : same > 8 ? wRepeatLong : wRepeatPunct;
        else own = pl === 1 || (isSymbolClass(prev) && (symEnd & 1) !== 0) ? wPunct1 : pl === 2 ? wPunct2 : pl === 3 ? wPunct3 : wPunct4;
        lastPunct = own;
        lastCode = c;
      }
      if (inVlq && vlqStart < 0) {
        vlqStart = at;
        vlqT0 = t;
      }
      t += own;
      prev = k;
      continue;
    }
    // The general path: every other class ("/", "+", "'", symbols, control chars, other scripts).
    if (k === EMOJI) c = codePointAt(text, i, c) | 0; // (its low surrogate is skipped below; "| 0": a number, for the compiler)
    if (aposAt >= 0) {
      // Not a contraction: the piece ended before the apostrophe, which keeps its own charge.
      t = pieceT0 + costs[keyedTokens(pc, text, pieceStart, aposAt, key0, key1, wide)]! + (t - tApos);
      pieceStart = -1;
      aposAt = -1;
    }
    if (k === APOS && pieceStart >= 0 && isPieceLetter(prev) && !(runStart >= 0 && i - runStart >= 20) && !(vlqStart >= 0 && i - vlqStart >= 64)) {
      // (Not after a long base64-like run: that run's price is settled at this char.)
      aposAt = i;
      tApos = t;
    } else if (pieceStart >= 0 && !(isPieceLetter(k) && continuesPiece(k, prev, esc))) {
      // The piece ends here: its tokens replace what its chars were charged.
      t = pieceT0 + costs[keyedTokens(pc, text, pieceStart, i, key0, key1, wide)]!;
      pieceStart = -1;
    }
    const inRun = k === SLASHPLUS; // (letters and digits take the paths above; "," and ";" are PUNCT)
    if (!inRun && runStart >= 0) {
      if (i - runStart >= 20) {
        RUN_TOTALS[0] = t;
        RUN_TOTALS[1] = runT0;
        noteRun(text, runStart, i, 0, w, replace);
        t = RUN_TOTALS[0]!;
      }
      runStart = -1;
    }
    if (!inRun && vlqStart >= 0) {
      if (i - vlqStart >= 64) {
        RUN_TOTALS[0] = t;
        RUN_TOTALS[1] = vlqT0;
        noteRun(text, vlqStart, i, 1, w, replace);
        t = RUN_TOTALS[0]!;
      }
      vlqStart = -1;
    }
    if (aposWord && !isPieceLetter(k)) t += wAposRest;
    same = c === prevCode ? same + 1 : 1;
    prevCode = c;
    const escaped = esc;
    esc = false;
    let led = false; // the last pending space leads this piece
    if (sp > 0 || nl > 0) {
      if (nl > 0) t += wNl * (1 + (nl >> 4));
      if (sp > 0) {
        // Punctuation takes no leading tab, groff's hyphen no space.
        if ((k === CONTROL && c === 0x2010) || (tab && isPunctClass(k))) t += wWs * ((sp >= 2 ? 2 : 1) + (sp >> 7));
        else {
          if (sp >= 2) t += wWs * (1 + (sp >> 7));
          led = true;
        }
      }
      sp = nl = 0;
    }
    const glued = absorbNl; // "[\r\n/]*" after punctuation takes slashes too: "});\n\n//"
    absorbNl = false;
    const at = i;
    let own = -0; // this char's own cost
    if (isPieceLetter(k)) {
      // A letter of another alphabet: the piece goes on, or a new one starts, led by the space
      // before it or by one punctuation char ("(été", "\ud800é": "�é"), whose cost it takes over.
      if (continuesPiece(k, prev, escaped)) {
        if (pieceStart < 0) {
          pieceStart = at; // after a char priced on its own (Tamil, Lao, ...)
          pieceT0 = t;
          key0 = key1 = 0;
          wide = false;
        }
      } else {
        pieceStart = at;
        key0 = key1 = 0;
        wide = false;
        if (led) pieceStart = at - 1;
        else if ((prev === PUNCT || prev === SLASHPLUS || prev === APOS || (lastCode === 0xfffd && isSymbolClass(prev))) && pl === 1 && !plSpace) {
          t -= lastPunct;
          pieceStart = at - 1;
        }
        if (pieceStart < at) {
          key0 = charCodeAt.call(text, at - 1);
          wide = key0 > 0x7f;
        }
        pieceT0 = t;
      }
      key1 = ((key1 << 7) | (key0 >>> 21)) & KEY;
      key0 = ((key0 << 7) | c) & KEY;
      if (c > 0x7f) wide = true;
      aposWord = false;
    } else if (isPunctClass(k)) {
      if (isPunctClass(prev) || (glued && c === 0x2f)) pl++;
      else {
        pl = 1;
        plSpace = led;
      }
      aposWord = k === APOS && pl === 1 && !plSpace && isPieceLetter(prev);
      if (isSymbolClass(k)) {
        own = symbolTokens(v, c, same, led, plSpace && same === pl, pl > 1 && isSymbolClass(prev) ? lastCode : -1) * (k === EMOJI ? wEmoji : pl === 1 ? wSym : wSymNext);
        symEnd = symbolEnds(v, c, same);
        if (c > 0xffff) i++;
      } else if (same >= 3) own = isRuler(c) ? (same > 8 ? wRulerLong : wRuler) : same > 8 ? wRepeatLong : wRepeatPunct;
      else if (aposWord) own = wApos;
      else if (k === CONTROL) own = wControl;
      else own = pl === 1 || (isSymbolClass(prev) && (symEnd & 1) !== 0) ? wPunct1 : pl === 2 ? wPunct2 : pl === 3 ? wPunct3 : wPunct4;
      lastPunct = own;
      lastCode = c;
      if (k === CONTROL) pl = 0; // BPE never merges across it: the next char starts afresh
    } else if (k === HANGUL) {
      // A hangul piece (Korean words are short and space-separated: the piece start matters).
      own = (prev === HANGUL ? 0 : wHangulStart) + wHangul;
      aposWord = false;
    } else if (k >= XRARE) {
      own = k === XRARE ? wRare : wByte; // scripts with few or no merges: per char, wherever it is
      aposWord = false;
    } else {
      // Kana and han: a CJK piece; a char leading it stays its own token. Han after any kana
      // is Japanese, which o200k merges differently from Chinese.
      if (k !== HAN) ja = true;
      own = (prev >= KANA && prev <= HAN ? 0 : prev === SYM ? wCjkAfterSym : wCjkStart) + (k === KANA ? wKana : k === KATA ? wKatakana : ja ? wHanJa : wHan);
      aposWord = false;
    }
    if (inRun) {
      if (runStart < 0) {
        runStart = at;
        runT0 = t;
      }
      if (vlqStart < 0) {
        vlqStart = at;
        vlqT0 = t;
      }
    }
    t += own;
    prev = k;
  }
  // Straight-line code, no rare branches: a branch first taken here, after a long loop, sends the
  // compiler's loop code into a deoptimization loop.
  // Each extra is added to t on its own: a sum of the extras is speculated to be a small integer
  // (they are 0 for most texts) and deoptimizes the whole scan whenever one is not.
  if (aposAt >= 0) {
    // The text ends in the apostrophe: the piece before it may yet grow into a contraction.
    t = pieceT0 + greedyTokens(v, text, pieceStart, aposAt, true, wVocab, wVocabMiss) + (t - tApos);
    pieceStart = -1;
  }
  if (pieceStart >= 0) t = pieceT0 + greedyTokens(v, text, pieceStart, n, true, wVocab, wVocabMiss);
  const t1 = t;
  t += randomRunExtra(text, runStart >= 0 ? runStart : n, n, t1 - runT0, w, replace);
  // (A mappings run that is the random run holds no separator: nothing to price.)
  t += vlqRunExtra(text, vlqStart >= 0 && vlqStart !== runStart ? vlqStart : n, n, t1 - vlqT0, w, replace);
  t += flushRuns(text, w, replace);
  // Trailing whitespace is a token of its own; a single trailing space is charged no more than
  // whatever could absorb it next, so appending text never lowers the estimate.
  const wWsEnd = replace ? wWs : Math.min(wWs, wPunct1, wSym, wEmoji, wControl, Math.min(wCjkStart, wCjkAfterSym) + Math.min(wKana, wKatakana, wHan, wHanJa), wDigitsAfterLetter, wHangulStart + wHangul, wRare, wByte, wVocab);
  const spaces = sp >= 2 ? wWs * (1 + (sp >> 7)) : sp > 0 ? wWsEnd : 0;
  // Spaces that end the text may yet join a newline's piece (`\s*[\r\n]+`: "\n  " is two tokens,
  // "\n  \n" one): they are charged no more than that newline would add.
  const joinNewline = nl > 0 ? wNl * (((nl + 1) >> 4) - (nl >> 4)) : wNl;
  t += (nl > 0 ? wNl * (1 + (nl >> 4)) : 0) + (replace ? spaces : Math.min(spaces, joinNewline));
  return t + 0; // never -0
}

/** Estimated o200k token count of `text` (an integer; 0 for ""). */
export function estimateTokens(text: string): number {
  // The scan reads any string, and only strings: charCodeAt.call would read anything else as the
  // string it makes of it, as long as its `length` says ({ length: 1e9 }: a billion reads).
  if (typeof text !== "string") throw new LetheInputError("estimateTokens", `needs a string, got ${text === null ? "null" : Array.isArray(text) ? "an array" : typeof text}`);
  return Math.round(estimateWith(text, WEIGHTS));
}

/** The estimate before rounding (a record counted line by line sums its lines' and rounds once: ./count.ts). */
export function estimateUnrounded(text: string): number {
  return estimateWith(text, WEIGHTS);
}

/** @internal the weights in use, for the calibration script. */
export function currentWeights(): Float64Array {
  return WEIGHTS.slice();
}
