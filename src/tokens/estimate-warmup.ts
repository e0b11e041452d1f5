// Texts the estimator's scan (./estimate.ts) reads before its first estimate (~5 ms), so that
// every path of it has run before the compiler optimizes it. A path first taken later (the first
// "éA", the first text ending in two spaces) throws the optimized scan away; rebuilt in the
// middle of a long text, it may be left with code made for that one loop, which every later call
// enters from the interpreter (in runs of bench:tokens: ~50 MB/s instead of ~75).

/** Bits of text of every class of char and of the neighbourhoods the scan tells apart. */
const ATOMS = [
  "a", "s", "B", "Ab", "é", "É", "Ω", "я", "ठ", "ல", "ລ", "日", "の", "カ", "한", "1", "1234567", " ", "  ",
  "\t", "\u00a0", "\n", "\n\n", ".", ",", "(", "\\", "\\nn", "/", "'", "=====", "((((((((((", "''''''''''",
  "→", "🎉", "══", "❤️", "。”", "\ud800", "\ufffd", "\u001b", "\u2010", "don't",
  "QmFzZTY0IGVuY29kZWQgc3RyaW5nIHdpdGggbWl4ZWQ", "AAAA,SAAS;KAAK,CAAC,EAAE;;;AACA,IAAI,KAAK;MAAM,CAAC,GAAG,EAAE;AAAA,SAAS",
];

/** What may be pending before a char: newlines and spaces, a tab, newlines after punctuation,
 * an escape, an apostrophe after a word, a punctuation run led by a space. */
const CONTEXTS = ["\n ", "\n\n  ", " \t", "{\n", "\\", "x'", " (.", "a\n"];

/**
 * Runs `scan` (./estimate.ts's estimateWith) over every atom after every other and after every
 * context, then every way of ending, in texts of a few hundred chars: the scan is called often
 * enough to record what it meets (a function does from its 8th call or so), never long enough
 * for the engine to compile one long loop on its own. (Flat strings of one or two bytes a char; the
 * scan reads any kind of string the same way: see charCodeAt in ./estimate.ts.)
 */
export function warmUp(scan: (text: string, w: Float64Array, replace?: boolean) => number, w: Float64Array): void {
  const texts = warmupTexts();
  for (const text of texts) scan(text, w);
  // The calibration's way (bench/calibrate-estimator.ts) differs in a few branches only.
  for (let i = 0; i < texts.length; i += 8) scan(texts[i]!, w, true);
}

function warmupTexts(): string[] {
  const texts: string[] = [];
  for (let i = 0; i < 12; i++) texts.push(["a", " b"].join("")); // (calls that record nothing yet)
  let parts: string[] = [];
  let len = 0;
  for (const a of [...ATOMS, ...CONTEXTS]) {
    // (The long runs end at every class of char; what they follow matters less.)
    for (const b of ATOMS.filter((b) => b.length < 12 || a === "a" || a === " ")) {
      parts.push(a, b);
      len += a.length + b.length;
      if (len > 300) {
        texts.push(parts.join(""));
        parts = [];
        len = 0;
      }
    }
  }
  texts.push(parts.join(""));
  // How a text may end: in a word, an apostrophe after one, whitespace, a long run.
  for (const end of ["", "'", " ", "  ", "\n", "\n\n", " 1", " 日", " →", ATOMS.at(-2)!, ATOMS.at(-1)!]) texts.push(["x", end].join(""));
  return texts;
}
