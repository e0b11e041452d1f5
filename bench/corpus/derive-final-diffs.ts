// Derives bench/corpus/shared_final_diffs.json: for each session of the shared corpus whose
// recorded history ends with a submitted patch (mini-swe-agent's `echo
// COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt`, SWE-agent's `submit`), session id →
// files of that patch (repo-relative, in the patch's order). Sessions without one (the Claude
// Code conversations: no diff is recorded) are left out, and listed on stderr. Deterministic:
// same corpus, same bytes. See bench/corpus/PROVENANCE.md.
//
//   tsx bench/corpus/derive-final-diffs.ts [--corpus FILE[.gz]] [--out FILE]
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadCorpus, writeJsonAtomic } from "../replay.ts";
import { finalDiffFilesOf } from "./final-diff.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export function deriveFinalDiffs(corpus: string): { diffs: Record<string, string[]>; skipped: string[] } {
  const diffs: Record<string, string[]> = {};
  const skipped: string[] = [];
  for (const s of loadCorpus(corpus)) {
    const files = finalDiffFilesOf(s.messages);
    if (files) diffs[s.id] = files;
    else skipped.push(s.id);
  }
  return { diffs: Object.fromEntries(Object.entries(diffs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), skipped };
}

function main(argv: string[]): void {
  let corpus = resolve(ROOT, "../shared/corpus/real_sessions.jsonl");
  let out = resolve(ROOT, "bench/corpus/shared_final_diffs.json");
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--corpus") corpus = resolve(argv[++i]!);
    else if (argv[i] === "--out") out = resolve(argv[++i]!);
    else {
      console.error("usage: tsx bench/corpus/derive-final-diffs.ts [--corpus FILE[.gz]] [--out FILE]");
      process.exit(2);
    }
  }
  const { diffs, skipped } = deriveFinalDiffs(corpus);
  writeJsonAtomic(out, diffs);
  const files = Object.values(diffs).reduce((n, f) => n + f.length, 0);
  console.error(`${Object.keys(diffs).length} sessions with a submitted patch (${files} files) → ${out}`);
  if (skipped.length) console.error(`no submitted patch (left out): ${skipped.join(", ")}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
