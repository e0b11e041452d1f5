// Figures bench/replay.ts derives from a replay result: the cost of each session against the
// claude-code policy (a total can hide a session that costs more), and retention per kind of
// compaction.
import type { ReplayResult } from "./harness.ts";
import { RETENTION_KEYS } from "./retention.ts";
import type { CompactionKind } from "./types.ts";

export const COST_ANCHOR = "claude-code";

export interface CostRatios {
  window: number;
  policy: string;
  /** Total cost over total anchor cost. */
  total: number;
  /** Per session: cost / anchor cost. */
  sessions: Record<string, number>;
  worst: { session: string; ratio: number } | null;
  /** Sessions whose ratio is above 0.9 (the bar for the total). */
  above_0_9: number;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** Every policy but the anchor, at every window where the anchor ran. */
export function costRatios(result: ReplayResult): CostRatios[] {
  const out: CostRatios[] = [];
  for (const w of result.sessions) {
    const anchor = w.policies[COST_ANCHOR];
    if (!anchor) continue;
    for (const [policy, sessions] of Object.entries(w.policies)) {
      if (policy === COST_ANCHOR) continue;
      let mine = 0;
      let theirs = 0;
      const per: Record<string, number> = {};
      let worst: CostRatios["worst"] = null;
      for (const [id, s] of Object.entries(sessions)) {
        const a = anchor[id];
        if (!a || a.cost_usd <= 0) continue;
        mine += s.cost_usd;
        theirs += a.cost_usd;
        const ratio = r3(s.cost_usd / a.cost_usd);
        per[id] = ratio;
        if (!worst || ratio > worst.ratio) worst = { session: id, ratio };
      }
      out.push({ window: w.window, policy, total: r3(mine / theirs), sessions: per, worst, above_0_9: Object.values(per).filter((r) => r > 0.9).length });
    }
  }
  return out;
}

function grid(head: string[], rows: string[][], left = 1): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i < left ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/** Sessions down, windows across: each policy's cost over the anchor's. */
export function costRatioTable(ratios: readonly CostRatios[], policy = "lethe"): string {
  const mine = ratios.filter((r) => r.policy === policy);
  if (mine.length === 0) return "";
  const ids = Object.keys(mine[0]!.sessions);
  const rows = ids.map((id) => [id.length > 48 ? `${id.slice(0, 47)}…` : id, ...mine.map((r) => r.sessions[id]?.toFixed(3) ?? "-")]);
  rows.push(["TOTAL", ...mine.map((r) => r.total.toFixed(3))]);
  rows.push(["sessions above 0.9", ...mine.map((r) => String(r.above_0_9))]);
  return `${policy} cost / ${COST_ANCHOR} cost, per session\n${grid(["session", ...mine.map((r) => String(r.window))], rows)}`;
}

/** Retention per kind of compaction, per window and policy. */
export function retentionKindTable(result: ReplayResult): string {
  const rows: string[][] = [];
  for (const d of result.detail) {
    for (const [policy, p] of Object.entries(d.policies)) {
      for (const kind of ["summary", "snip", "reactive"] as CompactionKind[]) {
        const n = p.retention_compactions_by_kind[kind];
        if (n === 0) continue;
        const r = p.retention_by_kind[kind]!;
        rows.push([String(d.window), policy, kind, String(n), ...RETENTION_KEYS.map((k) => (r[k] === null ? "n/a" : r[k]!.toFixed(1)))]);
      }
    }
  }
  return grid(["window", "policy", "kind", "count", ...RETENTION_KEYS.map((k) => k.replace(/_pct$/, " %"))], rows, 3);
}
