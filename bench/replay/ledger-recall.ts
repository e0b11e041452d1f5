// Ledger recall against ground truth: of the files each session really changed (its final
// diff), how many the file ledger lists as modified. "Modified files 100%" in retention means
// the modified files survive; this says whether a list of modified files is the right one.
//
// By default it scores the ENGINE's ledger (ledgerOf): the truth here is the final diff, not the
// engine's own definition, so the engine does not score itself. bench:replay also runs it on the
// benchmark's own definition (items.ts filesTouched, what retention looks for), to check that
// the items retention scores are the files the session really changed.
import { ledgerOf } from "../../src/compaction/state/ledger.ts";
import type { Message } from "../../src/messages/types.ts";
import type { Session } from "./types.ts";

export interface LedgerRecall {
  sessions: number;
  files: number;
  found: number;
  /** Files of a final diff the ledger did not list, as session: path. */
  missed: string[];
}

/** The files a history modified, by some definition (default: the engine's ledger). */
export type ModifiedOf = (history: readonly Message[]) => Iterable<string>;

const engineLedger: ModifiedOf = (history) => ledgerOf(history).modified;

/** A ledger path names a diff's file when it is the same path or ends with it (/testbed/a/b.py ~ a/b.py). */
export function sameFile(ledgerPath: string, diffPath: string): boolean {
  const a = ledgerPath.replace(/^\.\//, "");
  const b = diffPath.replace(/^\.\//, "");
  return a === b || a.endsWith(`/${b}`) || b.endsWith(`/${a}`);
}

export function ledgerRecall(sessions: readonly Session[], modifiedOf: ModifiedOf = engineLedger): LedgerRecall | null {
  const withTruth = sessions.filter((s) => s.finalDiffFiles !== undefined);
  if (withTruth.length === 0) return null;
  const out: LedgerRecall = { sessions: withTruth.length, files: 0, found: 0, missed: [] };
  for (const s of withTruth) {
    const modified = [...modifiedOf(s.messages)];
    for (const f of s.finalDiffFiles!) {
      out.files++;
      if (modified.some((p) => sameFile(p, f))) out.found++;
      else out.missed.push(`${s.id}: ${f}`);
    }
  }
  return out;
}
