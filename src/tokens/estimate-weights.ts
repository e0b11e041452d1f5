// The token estimator's weights (./estimate.ts): the layout of the weight vector, the values
// fitted against exact o200k. (Letters are priced by o200k's own vocabulary: ./vocab.ts.)

/** Index of each weight (tokens) in the weight vector. */
export const W = {
  WS: 0, // a run of spaces/tabs (one piece whatever its length)
  NL: 1, // a run of newlines (with the blank-line spaces between them)
  NL_AFTER_PUNCT: 2, // newlines directly after punctuation join its piece ("{\n", ");\n")
  DIGITS: 3, // each group of up to 3 digits
  SYM: 4, // per token (./estimate-symbols.ts) of a non-ASCII symbol starting a punctuation run (→, —, “, │)
  SYM_NEXT: 5, // ... of a further one in the run ("├──")
  EMOJI: 6, // ... of an astral char (emoji) or a lone surrogate
  KANA: 7, // each hiragana char
  HAN: 8, // each han char before any kana in the text (Chinese)
  HANGUL: 9, // each hangul syllable
  CJK_START: 10, // extra per kana/han piece
  APOS: 11, // an apostrophe right after a letter, until the next char is known ("don't": none)
  APOS_REST: 12, // ... when no contraction follows it ("'key']": the apostrophe is a token)
  REPEAT_LETTER: 13, // in a base64-like run, a letter equal to the two before it ("AAAAAAAA")
  CONTROL: 14, // each control char (ESC of terminal colours)
  RANDOM: 15, // per char of a base64-like run
  RANDOM_SWITCH: 16, // per change between lower case, upper case, digits and +/ in such a run
  REPEAT_PUNCT: 17, // a punctuation char equal to the two before it, 3rd to 8th of the run
  REPEAT_LONG: 18, // ... beyond the 8th ("^" × 64 is 8 tokens)
  RULER: 19, // a repeated char of "=-#*./_~+%─", 3rd to 8th: the vocabulary has 16–64-char runs
  RULER_LONG: 20, // ... beyond the 8th
  ESCAPE: 21, // the letter of a backslash escape ("\\n" in JSON strings is one token; the word after it another)
  PUNCT: 22, // 4 entries: the 1st, 2nd, 3rd and each further char of a punctuation run
  KATAKANA: 26, // each katakana char
  HAN_JA: 27, // each han char after a kana in the text (Japanese kanji)
  HANGUL_START: 28, // extra per hangul piece (Korean words are short, space-separated pieces)
  RARE: 29, // each char of a script o200k has few merges for (Tamil, Lao, Khmer, Tifinagh, ...)
  VLQ: 30, // per letter, digit, "+" or "/" of a source map's "mappings" run ("AAAA,SAAS;...")
  VLQ_SEP: 31, // per "," or ";" in it (a repeated one costs REPEAT_LONG)
  DIGITS_AFTER_LETTER: 32, // each group of up to 3 digits right after a letter ("6ffe1d005")
  CJK_AFTER_SYM: 33, // extra per kana/han piece right after a symbol ("，我们", "。この")
  BYTE_SCRIPT: 34, // each char of a script o200k has next to no merges for (Lao, Ethiopic, Tifinagh, ...)
  VOCAB: 35, // each token of a letter piece (its lead char included): greedy longest match in o200k's vocabulary
  VOCAB_MISS: 36, // each char of a letter piece that starts no token of the vocabulary
  SIZE: 37,
} as const;

// Weights in tokens, fitted by bench/calibrate-estimator.ts against exact o200k on the benchmark
// material (least absolute relative error per document, every category weighing the same), the
// CJK ones on CJK runs alone, a few by hand (noted). Zeros are real: that char adds nothing.
const FITTED = {
  WS: 0.95, // every whitespace run is a single token
  NL: 1.1, // "\n", "\n\n", "  \n" likewise
  NL_AFTER_PUNCT: 0.08, // "{\n", ");\n", "',\n" are single tokens
  DIGITS: 1.03, // each 1–3 digit group is a token (a bit more: numbers come with separators)
  // By hand: a symbol costs the tokens o200k makes of it alone ("→" 1, "⟶" 2, "🎉" 2, "🇫" 2);
  // fitted below 1, the estimate would run under on runs of them (the unsafe side).
  SYM: 1,
  SYM_NEXT: 1,
  EMOJI: 1,
  RARE: 0.5, // Tamil, Gurmukhi, Khmer, Myanmar, ...: per char wherever it is
  VOCAB: 1, // a letter piece costs the tokens o200k's vocabulary spells it in ...
  VOCAB_MISS: 2.17, // ... and a char that begins no token of it (a rare letter) about its UTF-8 bytes
  BYTE_SCRIPT: 3.15, // Lao ~2, Ethiopic ~2.3, Tifinagh 3 tokens per char
  // The per-char CJK weights come from a fit on the CJK runs alone (bench/calibrate-estimator.ts).
  KANA: 0.57, // hiragana: okurigana and particles merge with little
  KATAKANA: 0.66, // loanwords: common ones merge in pairs or threes
  HAN_JA: 0.92, // kanji in Japanese text: mostly a token each
  HAN: 0.68, // Chinese characters: common ones merge in pairs
  CJK_START: 0.64, // each kana/han run starts a new piece ...
  CJK_AFTER_SYM: 0, // ... but not after "，" "。" "「": o200k's piece takes one leading symbol
  HANGUL: 0.66, // Korean syllables
  HANGUL_START: 0.14, // each hangul piece (a space-separated word)
  DIGITS_AFTER_LETTER: 0.99, // hex digests and ids: each digit group is a piece of its own
  VLQ: 0.73, // source maps' mappings ("AAAA,SAAS;"): ~2.8 tokens per 4-char segment, separator included
  VLQ_SEP: 0,
  APOS: 0, // an apostrophe after a word: nothing until the next char says ("don't" is one token) ...
  APOS_REST: 0.79, // ... and a token when no contraction follows ("'key'")
  REPEAT_LETTER: 0.13, // "AAAAAAAA" (base64 of zeros) is one token
  CONTROL: 1.8, // ESC of terminal colours: "\u001b" "[" "36" "m" are 4 tokens
  RANDOM: 0.49, // base64 and ids: ~1.5 chars per token overall ...
  RANDOM_SWITCH: 0.28, // ... more where case and digits alternate
  REPEAT_PUNCT: 0.22, // "^^^^", "((((": short merges only
  REPEAT_LONG: 0.15, // by hand: 1,000 "^" are 125 tokens, ";" 63, "," 250
  RULER: 0.05, // by hand: "=====", "-----", "#####" up to ~16 chars are one token
  RULER_LONG: 0.02, // by hand: 1,000 "=" or "-" are 16 tokens
  ESCAPE: 0.34, // "\n" in a JSON string is a token; "\nimport" is two
  // The 1st, 2nd, 3rd and further chars of a punctuation run: "(", "()", "());" are 1 token each.
  PUNCT: [0.98, 0.03, 0, 0.71],
};

/** The fitted weights as a vector (the default for estimateWith). */
export const WEIGHTS = new Float64Array(W.SIZE);
for (const [name, value] of Object.entries(FITTED)) {
  if (typeof value === "number") WEIGHTS[W[name as keyof typeof W]] = value;
}
FITTED.PUNCT.forEach((x, i) => (WEIGHTS[W.PUNCT + i] = x));

