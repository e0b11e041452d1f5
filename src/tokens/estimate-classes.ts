// Character classes and per-char lookup tables of the token estimator (./estimate.ts).
// Plain numbers and typed arrays: the scan reads them for every char. It copies them into
// module constants of its own (see there); the class predicates live there too.

// Character classes. The order matters: the scanner tests ranges ("k <= UPPER" is an ASCII
// letter, "k <= SLASHPLUS" a char of a base64-like run, XLAT..XIND the other alphabets,
// KANA..HANGUL the CJK scripts, XLAT..XBYTE every letter).
export const LOWER = 0, UPPER = 1, DIGIT = 2, SLASHPLUS = 3, SPACE = 4, NEWLINE = 5, PUNCT = 6, APOS = 7;
export const SYM = 8, EMOJI = 9, CONTROL = 10, XLAT = 11, XGRC = 12, XCYR = 13, XCYR2 = 14, XOTH = 15, XIND = 16;
export const KANA = 17, KATA = 18, HAN = 19, HANGUL = 20, XRARE = 21, XBYTE = 22;

/** UTF-16 code unit → character class. */
export const CLASS = new Uint8Array(65536).fill(SYM);
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
  // groff's hyphen (every "-" of a rendered man page): o200k has no merge with it, not even
  // with a space before it (" ‐l" is " " "‐" "l"), so it is priced like a control char.
  CLASS[0x2010] = CONTROL;
  // Letters: Latin with accents, Greek/Cyrillic, other alphabets (Armenian, Hebrew, Arabic,
  // Georgian), Indic and South-East Asian scripts (their vowel signs included), CJK.
  set(0xc0, 0x2af, XLAT);
  CLASS[0xd7] = CLASS[0xf7] = SYM;
  CLASS[0xaa] = CLASS[0xb5] = CLASS[0xba] = XLAT;
  set(0x300, 0x36f, XLAT); // combining accents
  set(0x1e00, 0x1eff, XLAT);
  set(0xff21, 0xff3a, XLAT);
  set(0xff41, 0xff5a, XLAT);
  set(0x370, 0x3ff, XGRC);
  CLASS[0x37e] = CLASS[0x387] = SYM;
  set(0x1f00, 0x1fff, XGRC);
  set(0x400, 0x52f, XCYR);
  // Cyrillic letters Russian lacks (Ukrainian і ї є ґ, Belarusian ў, Kazakh, Chuvash, ...). (Once
  // priced apart; letters now cost what o200k's vocabulary says, see ./vocab.ts.)
  set(0x460, 0x52f, XCYR2);
  for (const c of [0x404, 0x406, 0x407, 0x40e, 0x454, 0x456, 0x457, 0x45e]) CLASS[c] = XCYR2;
  set(0x531, 0x8ff, XOTH);
  set(0x10a0, 0x10ff, XOTH);
  // Devanagari, Bengali and Thai have many o200k merges; the other South and South-East Asian
  // scripts, Tibetan, Ethiopic, Cherokee, Mongolian and Tifinagh few: about a token per char.
  set(0x900, 0x9ff, XIND);
  set(0xe00, 0xe7f, XIND);
  set(0xa00, 0xdff, XRARE);
  set(0xf00, 0xfff, XRARE);
  set(0x1000, 0x109f, XRARE);
  set(0x1780, 0x17ff, XRARE);
  // Scripts o200k has next to no merges for: one token per UTF-8 byte or so (Lao, Ethiopic,
  // Cherokee, Mongolian, Tifinagh).
  set(0xe80, 0xeff, XBYTE);
  set(0x1200, 0x139f, XBYTE);
  set(0x13a0, 0x13ff, XBYTE);
  set(0x1800, 0x18af, XBYTE);
  set(0x2d30, 0x2d7f, XBYTE);
  set(0x3041, 0x309f, KANA); // hiragana
  set(0x30a0, 0x30ff, KATA); // katakana
  CLASS[0x30fb] = SYM; // ・
  set(0xff66, 0xff9f, KATA);
  set(0x3400, 0x4dbf, HAN);
  set(0x4e00, 0x9fff, HAN);
  set(0xf900, 0xfaff, HAN);
  set(0x1100, 0x11ff, HANGUL);
  set(0xac00, 0xd7af, HANGUL);
  set(0xd800, 0xdfff, EMOJI); // astral chars (mostly emoji) and lone surrogates: ./estimate-symbols.ts
})();
