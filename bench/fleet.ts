// bench:fleet — a fleet of stateless workers serving many conversations from one store.
//
// W worker processes (bench/fleet-worker.ts) take jobs "turn t of conversation c"; each job builds
// the host's whole history, makes a FRESH engine on the shared store and prepares the request, as
// a route handler or a queue worker does. A conversation's turns run in order, each on whichever
// worker is free. Every `--kill-every` jobs a busy worker is killed with SIGKILL and replaced; its
// job goes to another worker (a host retrying a turn).
//
// Measured: turns per second, p50/p99 per turn (fresh engine + beforeRequest, in the worker; a
// worker warms up on a conversation of its own before it takes jobs),
// summaries against one long-lived engine per conversation without a store, and, read back at the
// end with `lethe export --store` (the built bin: run npm run build first), messages lost and
// doubled (each conversation's recorded messages must be exactly its history, in order) and
// requests over the window or invalid.
// Stores: a real PostgreSQL started here (Debian's postgresql, initdb in a temp folder), and the
// files store on this machine.
//
//   npm run bench:fleet [-- --store postgres|files|both --workers 6 --conversations 100 --turns 40 --kill-every 150 --window 12000 --out FILE]
import { fork, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createEngine } from "../src/engine/index.ts";
import type { Message } from "../src/messages/types.ts";
import type { TranscriptEntry } from "../src/session/transcript-format.ts";
import { startPostgres } from "../scripts/pg-cluster.ts";
import { fleetHistory, fleetWindow } from "./fleet-history.ts";
import { writeJsonAtomic } from "./replay.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const flag = (name: string, d: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : d;
};
const WORKERS = Number(flag("--workers", "6"));
const CONVERSATIONS = Number(flag("--conversations", "100"));
const TURNS = Number(flag("--turns", "40"));
const KILL_EVERY = Number(flag("--kill-every", "150"));
const STORES = flag("--store", "both") === "both" ? ["postgres", "files"] : [flag("--store", "both")];
const OUT = flag("--out", resolve(ROOT, "bench/results/fleet.json"));
process.env.LETHE_FLEET_WINDOW = flag("--window", process.env.LETHE_FLEET_WINDOW ?? "12000");

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Number((s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN).toFixed(1));
};

interface Reply {
  c: number;
  t: number;
  ok: boolean;
  ms?: number;
  summaries?: number;
  tokens?: number;
  threshold?: number;
  /** The window less the reply's reserve: a request over it would be refused. */
  limit?: number;
  violations?: number;
  error?: string;
  ready?: boolean;
}

/** One long-lived engine per conversation, no store: the summaries a fleet must match, and its requests over the threshold. */
async function baseline(): Promise<{ summaries: number; overThreshold: number }> {
  let summaries = 0;
  let overThreshold = 0;
  for (let c = 0; c < CONVERSATIONS; c++) {
    const engine = createEngine({ ...fleetWindow(), summarizerMode: "digest", now: () => 1 });
    for (let t = 0; t < TURNS; t++) {
      const r = await engine.beforeRequest(fleetHistory(c, t));
      summaries += r.events.filter((e) => e.kind === "summarize").length;
      if (r.tokens > engine.threshold) overThreshold++;
    }
  }
  return { summaries, overThreshold };
}

async function runFleet(where: string) {
  const next = new Array<number>(CONVERSATIONS).fill(0);
  const queue: number[] = Array.from({ length: CONVERSATIONS }, (_, c) => c);
  const busy = new Map<ChildProcess, { c: number; t: number }>();
  const idle: ChildProcess[] = [];
  const killed = new Set<ChildProcess>();
  const times: number[] = [];
  let summaries = 0;
  let done = 0;
  let kills = 0;
  let bad = 0;
  let overThreshold = 0;
  const errors: string[] = [];
  const total = CONVERSATIONS * TURNS;
  const t0 = Date.now();

  await new Promise<void>((finish, fail) => {
    const dispatch = () => {
      while (idle.length > 0 && queue.length > 0) {
        const w = idle.pop()!;
        const c = queue.shift()!;
        busy.set(w, { c, t: next[c]! });
        w.send({ c, t: next[c]! });
      }
      if (done === total) finish();
    };
    const spawnWorker = () => {
      const w = fork(join(ROOT, "bench/fleet-worker.ts"), [], { execArgv: ["--import", "tsx"], env: { ...process.env, LETHE_FLEET_STORE: where }, stdio: ["ignore", "inherit", "inherit", "ipc"] });
      w.on("message", (m: Reply) => {
        // A reply already in the pipe when its worker was killed: that job is being redone.
        if (killed.has(w)) return;
        if (m.ready) {
          idle.push(w);
          return dispatch();
        }
        busy.delete(w);
        idle.push(w);
        if (!m.ok) {
          errors.push(`conversation ${m.c} turn ${m.t}: ${m.error}`);
          if (errors.length > 20) return fail(new Error(errors.join("\n")));
          queue.push(m.c); // retried, as a host would
          return dispatch();
        }
        times.push(m.ms!);
        summaries += m.summaries!;
        if (m.violations! > 0 || m.tokens! > m.limit!) bad++;
        if (m.tokens! > m.threshold!) overThreshold++;
        done++;
        if (++next[m.c]! < TURNS) queue.push(m.c);
        // Kill a busy worker now and then, mid-job: its turn is retried elsewhere.
        if (KILL_EVERY > 0 && done % KILL_EVERY === 0 && busy.size > 0) {
          const [victim, job] = [...busy][Math.floor(Math.random() * busy.size)]!;
          busy.delete(victim);
          killed.add(victim);
          victim.removeAllListeners("exit");
          victim.kill("SIGKILL");
          kills++;
          queue.unshift(job.c);
          spawnWorker();
        }
        dispatch();
      });
      w.on("exit", (code, signal) => {
        if (busy.has(w) || idle.includes(w)) fail(new Error(`worker exited (${code ?? signal}) unexpectedly`));
      });
    };
    for (let i = 0; i < WORKERS; i++) spawnWorker();
  });
  const seconds = (Date.now() - t0) / 1000;
  for (const w of [...idle, ...busy.keys()]) {
    w.removeAllListeners("exit");
    w.kill();
  }

  // Read back through the CLI, as a user would (`lethe export <id> --store … --format json`, the
  // built bin): each conversation's messages exactly its history, in order, each once.
  let lost = 0;
  let doubled = 0;
  let states = 0;
  for (let c = 0; c < CONVERSATIONS; c++) {
    const r = spawnSync(process.execPath, [join(ROOT, "bin/lethe.js"), "export", `conversation-${c}`, "--store", where, "--format", "json"], { encoding: "utf8", maxBuffer: 1 << 30 });
    if (r.status !== 0) {
      errors.push(`lethe export conversation-${c}: ${r.stderr.trim()}`);
      lost += TURNS * 2 + 1;
      continue;
    }
    const entries = (JSON.parse(r.stdout) as { entries: TranscriptEntry[] }).entries;
    const expected = fleetHistory(c, TURNS - 1);
    const recorded = entries.filter((e) => e.type === "message") as (TranscriptEntry & { seq?: number; message: Message })[];
    const seqs = new Map<number, number>();
    for (const m of recorded) seqs.set(m.seq!, (seqs.get(m.seq!) ?? 0) + 1);
    for (let i = 0; i < expected.length; i++) {
      const n = seqs.get(i) ?? 0;
      if (n === 0) lost++;
      if (n > 1) doubled += n - 1;
    }
    doubled += recorded.filter((m) => m.seq! >= expected.length).length;
    const bySeq = [...recorded].sort((a, b) => a.seq! - b.seq!);
    if (JSON.stringify(bySeq.map((m) => m.message)) !== JSON.stringify(expected.slice(0, bySeq.length))) errors.push(`conversation ${c}: recorded messages differ from its history`);
    states += entries.filter((e) => e.type === "boundary" && e.kind === "summarize").length;
  }
  return { turns: done, seconds: Number(seconds.toFixed(1)), turns_per_s: Number((done / seconds).toFixed(1)), p50_ms: pct(times, 50), p99_ms: pct(times, 99), summary_calls: summaries, summaries_recorded: states, kills, lost, doubled, over_window_or_invalid: bad, over_threshold: overThreshold, errors: errors.slice(0, 5) };
}

const baselineRun = await baseline();
const base = baselineRun.summaries;
console.log(`baseline: ${base} summaries in ${CONVERSATIONS} conversations × ${TURNS} turns (one long-lived engine each, no store); ${baselineRun.overThreshold} requests over the threshold (under the window)`);
const results: Record<string, unknown> = {};
for (const kind of STORES) {
  let where: string;
  let stop = async () => {};
  if (kind === "postgres") {
    const pg = await startPostgres();
    where = pg.url;
    stop = () => pg.stop();
  } else {
    const dir = mkdtempSync(join(tmpdir(), "lethe-fleet-"));
    where = join(dir, "store");
    stop = async () => rmSync(dir, { recursive: true, force: true });
  }
  try {
    const r = await runFleet(where);
    results[kind] = r;
    console.log(`${kind.padEnd(8)} ${WORKERS} workers: ${r.turns} turns in ${r.seconds} s (${r.turns_per_s}/s), p50 ${r.p50_ms} ms p99 ${r.p99_ms} ms; summaries: ${r.summary_calls} made, ${r.summaries_recorded} recorded (baseline ${base}); ${r.kills} workers killed; lost ${r.lost}, doubled ${r.doubled}, over window or invalid ${r.over_window_or_invalid}, over the threshold ${r.over_threshold}${r.errors.length ? `; errors: ${r.errors.join(" | ")}` : ""}`);
  } finally {
    await stop();
  }
}
writeJsonAtomic(OUT, { workers: WORKERS, conversations: CONVERSATIONS, turns: TURNS, kill_every: KILL_EVERY, window: fleetWindow(), baseline_summaries: base, baseline_over_threshold: baselineRun.overThreshold, node: process.version, results });
console.log(`wrote ${OUT}`);
process.exit(0);
