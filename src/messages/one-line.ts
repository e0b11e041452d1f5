// Text on one line, clipped: a note of the agent's reply in the work record, a call in a cleared
// result's placeholder, a session's preview, an error line. One pass that stops once the line is long enough: what is clipped can be a
// long reply or a heredoc of kilobytes.

/** Whether a UTF-16 unit is one a regular expression's \s matches. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/**
 * `text` on one line (each whitespace run one space, trimmed), and when that is longer than `max`
 * characters, its first `max` less the ellipsis's length and the ellipsis ("..." by default, as
 * lethe's records in the context are ASCII). One pass that stops once the line is longer than
 * `max`: a reply, a heredoc or a first prompt can be long.
 */
export function clippedLine(text: string, max: number, ellipsis = "..."): string {
  let out = "";
  let from = -1; // where the current run of other characters started
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && !isSpace(text.charCodeAt(i))) {
      if (from < 0) from = i;
      continue;
    }
    if (from < 0) continue;
    // At most max + 1 characters of one run: a line longer than max is clipped anyway.
    out += (out ? " " : "") + text.slice(from, Math.min(i, from + max + 1));
    from = -1;
    if (out.length > max) return `${out.slice(0, max - ellipsis.length)}${ellipsis}`;
  }
  return out;
}
