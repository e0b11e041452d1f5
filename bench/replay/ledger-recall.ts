// Ledger recall against ground truth: of the files each session really changed (its final
// diff), how many the file ledger lists as modified. "Modified files 100%" in retention means
// the ledger's files survive; this says whether the ledger's files are the right ones.
import { ledgerOf } from "../../src/compaction/state/ledger.ts";
import type { Session } from "./types.ts";

export interface LedgerRecall {
  sessions: number;
  files: number;
  found: number;
  /** Files of a final diff the ledger did not list, as session: path. */
  missed: string[];
}

/** A ledger path names a diff's file when it is the same path or ends with it (/testbed/a/b.py ~ a/b.py). */
export function sameFile(ledgerPath: string, diffPath: string): boolean {
  const a = ledgerPath.replace(/^\.\//, "");
  const b = diffPath.replace(/^\.\//, "");
  return a === b || a.endsWith(`/${b}`) || b.endsWith(`/${a}`);
}

export function ledgerRecall(sessions: readonly Session[]): LedgerRecall | null {
  const withTruth = sessions.filter((s) => s.finalDiffFiles !== undefined);
  if (withTruth.length === 0) return null;
  const out: LedgerRecall = { sessions: withTruth.length, files: 0, found: 0, missed: [] };
  for (const s of withTruth) {
    const modified = [...ledgerOf(s.messages).modified];
    for (const f of s.finalDiffFiles!) {
      out.files++;
      if (modified.some((p) => sameFile(p, f))) out.found++;
      else out.missed.push(`${s.id}: ${f}`);
    }
  }
  return out;
}
