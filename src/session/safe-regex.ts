// Patterns the model chooses (grep, recall) run on RE2's linear-time engine (re2js, a pure-JS port
// of RE2): `^(a+)+$` against a long line returns at once instead of spinning the CPU with SIGINT
// ignored. RE2 has no lookaround or backreferences; those patterns get a clear error instead.
import { RE2JS } from "re2js";

export interface SafeRegex {
  /** Is there a match anywhere in `text`? */
  test(text: string): boolean;
  /** Every match, as [start, end) character offsets, left to right. */
  matches(text: string): Generator<[number, number]>;
}

export class RegexError extends Error {}

export function compileSafe(pattern: string, opts: { ignoreCase?: boolean; multiline?: boolean; dotAll?: boolean } = {}): SafeRegex {
  let src = pattern;
  let flags = 0;
  if (src.startsWith("(?i)")) {
    src = src.slice(4);
    flags |= RE2JS.CASE_INSENSITIVE;
  }
  if (opts.ignoreCase) flags |= RE2JS.CASE_INSENSITIVE;
  if (opts.multiline) flags |= RE2JS.MULTILINE;
  if (opts.dotAll) flags |= RE2JS.DOTALL;
  let re: RE2JS;
  try {
    // JavaScript's named groups (?<n>…) are RE2's (?P<n>…).
    re = RE2JS.compile(src.replace(/\(\?<(?![=!])/g, "(?P<"), flags);
  } catch (err) {
    const msg = (err as Error).message.replace(/^error parsing regexp: /, "");
    const why = /\\\d|\(\?[=!<]|invalid or unsupported Perl syntax/.test(msg + src)
      ? " (lookaround and backreferences are not supported: lethe runs patterns on a linear-time engine; rewrite the pattern without them)"
      : "";
    throw new RegexError(`invalid regular expression ${JSON.stringify(pattern)}: ${msg}${why}`);
  }
  return {
    test: (text) => re.matcher(text).find(),
    *matches(text) {
      const m = re.matcher(text);
      let from = 0;
      while (from <= text.length && m.find(from)) {
        const start = m.start();
        const end = m.end();
        yield [start, end];
        from = end > start ? end : end + 1;
      }
    },
  };
}
