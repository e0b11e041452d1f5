// Which transcript line a message in the context stands for. Budget, micro and the reactive shrink
// rewrite a message in place (a result moved to a file, cleared, or cut): the copy is still that
// line, transformed. A later boundary that removes the copy names the line, so its `removed` lists
// every line it took out of the context and each removed result points at the line holding it.
// (Before, a snip left out every message micro had cleared first: most of them, in a long session.)
import type { Message } from "../messages/types.ts";
import type { MessageLine } from "../compaction/state/boundary.ts";
import type { TranscriptWriter } from "../session/transcript.ts";

/** A rewritten message → the message it replaced, followed back to the one first written (a line). */
export type LineOrigins = WeakMap<Message, Message>;

/**
 * Records what a layer that rewrites in place (same length, same order) made of `before`: each
 * message of `after` that is not the one at its place in `before` stands for that one's line.
 * A different length is not an in-place rewrite, and nothing is recorded.
 */
export function noteRewrites(origins: LineOrigins, before: readonly Message[], after: readonly Message[]): void {
  if (before === after || before.length !== after.length) return;
  for (let i = 0; i < after.length; i++) noteRewrite(origins, before[i]!, after[i]!);
}

/** `now` replaced `was` in place: the same line, transformed (a snip's head message, which keeps its blocks and gains the note, is one). */
export function noteRewrite(origins: LineOrigins, was: Message, now: Message): void {
  if (now !== was) origins.set(now, origins.get(was) ?? was);
}

/** The transcript uuid of the line `m` stands for: its own, or the one it rewrote's (undefined without a transcript that knows). */
export function lineUuidOf(t: TranscriptWriter | undefined, origins: LineOrigins): ((m: Message) => string | undefined) | undefined {
  if (!t?.uuidOf) return undefined;
  return (m) => {
    const own = t.uuidOf!(m);
    if (own !== undefined) return own;
    const origin = origins.get(m);
    return origin === undefined ? undefined : t.uuidOf!(origin);
  };
}

/** The transcript line `m` stands for, where the writer knows it (lineUuidOf's, with the line's place: TranscriptWriter.lineOf). */
export function lineOf(t: TranscriptWriter, origins: LineOrigins): ((m: Message) => MessageLine | undefined) | undefined {
  if (!t.lineOf) return undefined;
  return (m) => {
    const own = t.lineOf!(m);
    if (own !== undefined) return own;
    const origin = origins.get(m);
    return origin === undefined ? undefined : t.lineOf!(origin);
  };
}
