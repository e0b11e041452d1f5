// recall: the model reads back what left its context, from the session's transcript and
// tool-results/ folder, always in bounded pieces.
//
//   recall(dir, { id })     a tool_use id → the full original result (tool-results/<id>.txt, else
//                           the transcript's tool_result); a message uuid → that message as text.
//                           One slice (≤ 8,000 chars by default) of it; offset/limit count chars,
//                           or lines with unit "lines"; offsets start at 0. The answer says the
//                           total size and the exact call that gets the next slice.
//   recall(dir, { query })  case-insensitive substring, or a regex written /like this/; over
//                           message text, tool inputs, tool results and saved files. At most 20
//                           hits and 8,000 chars, newest first, each naming the id (and the char
//                           offset) to fetch the whole with.
//
// Never throws: every failure is a one-line text starting with "recall:".
//
// Layout: ./recall-types.ts (public types and limits), ./recall-archive.ts (the session's archive
// and shared helpers), ./recall-index.ts (the archive kept on disk beside the transcript),
// ./recall-id.ts (by id), ./recall-search.ts (by query); this file checks the options and dispatches.
import { fail } from "./recall-archive.ts";
import { withArchive } from "./recall-index.ts";
import { findDoc, sliceDoc } from "./recall-id.ts";
import { search } from "./recall-search.ts";
import { RECALL_MAX_CHARS, RECALL_MAX_HITS, type RecallOptions, type RecallResult } from "./recall-types.ts";

export { RECALL_CONTEXT_CHARS, RECALL_MAX_CHARS, RECALL_MAX_HITS } from "./recall-types.ts";
export type {
  RecallError,
  RecallHit,
  RecallOptions,
  RecallResult,
  RecallSearch,
  RecallSlice,
  RecallSource,
  RecallUnit,
} from "./recall-types.ts";

function badNumber(name: string, v: unknown, min: number): string | null {
  if (v === undefined) return null;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) return `${name} must be an integer ≥ ${min}`;
  return null;
}

/** Reads archived content of the session in `sessionDir`. Never throws. */
export function recall(sessionDir: string, opts: RecallOptions): RecallResult {
  try {
    const maxChars = Math.max(1_000, opts.maxChars ?? RECALL_MAX_CHARS);
    const maxHits = Math.max(1, opts.maxHits ?? RECALL_MAX_HITS);
    const unit = opts.unit ?? "chars";
    if (unit !== "chars" && unit !== "lines") return fail(`unit must be "chars" or "lines", not ${JSON.stringify(unit)}`);
    const bad = badNumber("offset", opts.offset, 0) ?? badNumber("limit", opts.limit, 1);
    if (bad) return fail(bad);
    const id = typeof opts.id === "string" ? opts.id.trim() : "";
    const query = typeof opts.query === "string" ? opts.query : "";
    if (id === "" && query.trim() === "") return fail('give an id (a tool_use id or message uuid) or a query');

    return withArchive(sessionDir, (archive) => {
      if (id !== "") {
        const doc = findDoc(archive, id);
        if (!doc) {
          return fail(`nothing with id ${JSON.stringify(id)} in this session (not a saved tool result, tool_use id or message uuid); search with a query to find ids`);
        }
        return sliceDoc(doc, { offset: opts.offset ?? 0, unit, maxChars, ...(opts.limit !== undefined ? { limit: opts.limit } : {}) });
      }
      return search(archive, query, maxHits, maxChars);
    });
  } catch (err) {
    return fail(`failed: ${(err as Error)?.message ?? String(err)}`);
  }
}
