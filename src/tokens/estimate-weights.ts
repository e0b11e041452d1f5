// The token estimator's weights (./estimate.ts): the layout of the weight vector, the values
// fitted against exact o200k, and the word table expanded for the scanner.

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
  GREEK_CYRILLIC: 8, // each Greek letter after the first of a piece
  ALPHABET: 9, // each Armenian/Hebrew/Arabic/Georgian letter after the first of a piece
  INDIC: 10, // each Indic/Thai char (letters and vowel signs) after the first of a piece
  KANA: 11, // each hiragana char
  HAN: 12, // each han char before any kana in the text (Chinese)
  HANGUL: 13, // each hangul syllable
  CJK_START: 14, // extra per kana/han piece
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
  RULER: 25, // a repeated char of "=-#*./_~+%─", 3rd to 8th: the vocabulary has 16–64-char runs
  RULER_LONG: 26, // ... beyond the 8th
  ESCAPE: 27, // the letter of a backslash escape ("\\n" in JSON strings is one token; the word after it another)
  PUNCT: 28, // 4 entries: the 1st, 2nd, 3rd and each further char of a punctuation run
  WORD: 32, // 5 leads × 6 entries: a letter piece by lead (none, space, cheap punct, other punct,
  //           tab), its 1st letter, then each letter at positions 2–4, 5–6, 7–8, 9–10, 11+
  KATAKANA: 62, // each katakana char
  HAN_JA: 63, // each han char after a kana in the text (Japanese kanji)
  HANGUL_START: 64, // extra per hangul piece (Korean words are short, space-separated pieces)
  CYRILLIC: 65, // each Cyrillic letter after the first of a piece
  RARE: 66, // each char of a script o200k has few merges for (Tamil, Lao, Khmer, Tifinagh, ...)
  VLQ: 67, // per letter, digit, "+" or "/" of a source map's "mappings" run ("AAAA,SAAS;...")
  VLQ_SEP: 68, // per "," or ";" in it (a repeated one costs REPEAT_LONG)
  DIGITS_AFTER_LETTER: 69, // each group of up to 3 digits right after a letter ("6ffe1d005")
  CJK_AFTER_SYM: 70, // extra per kana/han piece right after a symbol ("，我们", "。この")
  CYRILLIC_EXT: 71, // each Cyrillic letter Russian lacks (і ї є ґ ў ә ө ү ҫ ...), after the first of a piece
  BYTE_SCRIPT: 72, // each char of a script o200k has next to no merges for (Lao, Ethiopic, Tifinagh, ...)
  SIZE: 73,
} as const;
const WORD_STEPS = 6;
/** Lead kinds (LEAD_NONE … LEAD_TAB in ./estimate-classes.ts): rows of the word table. */
const LEADS = 5;
/** Letter position (1-based, capped at 11) → entry of the word table. */
const WORD_STEP = Uint8Array.from([0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5]);

/** Word costs expanded to one entry per (lead, letter position 1..11): row `lead * 12`. */
export function expandWords(w: Float64Array): Float64Array {
  const x = new Float64Array(LEADS * 12);
  for (let lead = 0; lead < LEADS; lead++) for (let pos = 1; pos <= 11; pos++) x[lead * 12 + pos] = w[W.WORD + lead * WORD_STEPS + WORD_STEP[pos]!]!;
  return x;
}

// Weights in tokens, fitted by bench/calibrate-estimator.ts against exact o200k on the benchmark
// material (least absolute relative error per document, every category weighing the same; the
// per-script weights on zod's locale messages). Zeros are real: that char or letter adds nothing.
const FITTED = {
  WS: 1.02, // every whitespace run is a single token
  NL: 1.09, // "\n", "\n\n", "  \n" likewise
  NL_AFTER_PUNCT: 0, // "{\n", ");\n", "',\n" are single tokens
  DIGITS: 1.09, // each 1–3 digit group is a token (a bit more: numbers come with separators)
  SYM: 1.03, // "→", "—", "│": one token each (all multi-byte)
  SYM_NEXT: 0.65, // "├──", "…)": some pairs merge
  EMOJI: 1.59, // astral chars are 4 UTF-8 bytes: often 2 tokens
  LATIN: 1.6, // "é" inside a word: most such words are not English and split a lot
  GREEK_CYRILLIC: 0.5, // "χαρακτήρες" 4 tokens; set by hand from moment's Greek names (0.57 tokens/char)
  CYRILLIC: 0.14, // "символов" 2–3
  CYRILLIC_EXT: 0.5, // Ukrainian, Kazakh, Chuvash words split 2–3 times as much; by hand (moment's names)
  ALPHABET: 0.2, // Arabic, Hebrew, Armenian, Georgian: similar
  INDIC: 0.34, // Devanagari, Bengali, Thai: letters and vowel signs
  RARE: 0.64, // Tamil, Gurmukhi, Khmer, Myanmar, ...: per char wherever it is
  BYTE_SCRIPT: 2.5, // Lao ~2, Ethiopic ~2.3, Tifinagh 3 tokens per char; by hand (moment's names)
  // The per-char CJK weights come from a fit on the CJK runs alone (bench/calibrate-estimator.ts).
  KANA: 0.57, // hiragana: okurigana and particles merge with little
  KATAKANA: 0.66, // loanwords: common ones merge in pairs or threes
  HAN_JA: 0.92, // kanji in Japanese text: mostly a token each
  HAN: 0.68, // Chinese characters: common ones merge in pairs
  CJK_START: 0.64, // each kana/han run starts a new piece ...
  CJK_AFTER_SYM: 0, // ... but not after "，" "。" "「": o200k's piece takes one leading symbol
  HANGUL: 0.66, // Korean syllables
  HANGUL_START: 0.14, // each hangul piece (a space-separated word)
  DIGITS_AFTER_LETTER: 1.07, // hex digests and ids: each digit group is a piece of its own
  VLQ: 0.71, // source maps' mappings ("AAAA,SAAS;"): ~2.8 tokens per 4-char segment, separator included
  VLQ_SEP: 0,
  UPPER: 0.13, // "HTTP", "JSON": capitals merge less than small letters
  CONSONANT: 0.58, // "xrng", "strptime": no vowel, no vocabulary entry
  APOS: 0.21, // "don't", "it's" are single tokens ...
  APOS_REST: 1, // ... but "'key'" closes with a token of its own
  REPEAT_LETTER: 0.14, // "AAAAAAAA" (base64 of zeros) is one token
  CONTROL: 1.09, // ESC of terminal colours: "\u001b" "[" "36" "m" are 4 tokens
  RANDOM: 0.45, // base64 and ids: ~1.5 chars per token overall ...
  RANDOM_SWITCH: 0.35, // ... more where case and digits alternate
  REPEAT_PUNCT: 0.54, // "^^^^", "((((": short merges only
  REPEAT_LONG: 0.21,
  RULER: 0.26, // "=====", "-----", "#####": the vocabulary has runs of 16–64
  RULER_LONG: 0.05,
  ESCAPE: 0.41, // "\n" in a JSON string is a token; "\nimport" is two
  // The 1st, 2nd, 3rd and further chars of a punctuation run: "(", "()", "());" are 1 token each.
  PUNCT: [0.95, 0.11, 0, 0.58],
  // A letter piece: its 1st letter, then each letter at positions 2–4, 5–6, 7–8, 9–10, 11+.
  // Most words up to 8 letters are one token; after that they split.
  WORD: {
    none: [1.02, 0, 0, 0, 0.17, 0.62], // at a line start, after digits, "get|Element"
    space: [1.02, 0, 0, 0, 0, 0], // " word": English prose, nearly always one token
    cheap: [0.97, 0.03, 0, 0.21, 0, 0], // ".foo", "_bar", "(baz": usually one token
    punct: [1.15, 0.18, 0, 0, 0.57, 0], // "/usr", "=value", "-name": often two
    tab: [1.33, 0, 0, 0, 0.05, 0.25], // "\tfoo" is two tokens, "\tif" one
  },
};

/** The fitted weights as a vector (the default for estimateWith). */
export const WEIGHTS = new Float64Array(W.SIZE);
for (const [name, value] of Object.entries(FITTED)) {
  if (typeof value === "number") WEIGHTS[W[name as keyof typeof W]] = value;
}
FITTED.PUNCT.forEach((x, i) => (WEIGHTS[W.PUNCT + i] = x));
[FITTED.WORD.none, FITTED.WORD.space, FITTED.WORD.cheap, FITTED.WORD.punct, FITTED.WORD.tab].forEach((row, lead) =>
  row.forEach((x, i) => (WEIGHTS[W.WORD + lead * WORD_STEPS + i] = x)),
);
/** The word table of WEIGHTS, expanded once. */
export const WORDS = expandWords(WEIGHTS);
