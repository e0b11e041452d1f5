// bench:resume — a long session's transcript: how long `--continue` and `--resume` take to the
// first request, and how long `recall` takes per query (issue 13, part 4).
//
// Builds a workspace whose newest session has N messages (default 50,000: the shared corpus's
// real rounds cycled, driven through lethe's own loop at a 32k window with every message written
// to the transcript first, as the agent does) and two older sessions of N/5 messages. Then runs
// the built CLI (`npm run build` first) against a local fake Anthropic server and times, from
// spawn to the server receiving the first request: a new session (the floor: Node start-up and
// module loading), `--continue`, and `--resume <id>`. Then recall in two new processes, the first
// on a session never queried, the second after it (what a CLI run or the viewer pays: with
// recall's index kept beside the transcript, the second loads it); then in this process: the first
// query and further ones, one after more messages were appended. Also where
// the transcript's bytes go: per message, and how much of it repeats snip heads.
//
//   npm run bench:resume [-- --messages N --out FILE]   (builds first: it runs the built CLI)
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { recall } from "../src/session/recall.ts";
import { startFakeAnthropic } from "./support/fake-anthropic.ts";
import { buildSession as build, transcriptShape } from "./support/long-session.ts";
import { writeJsonAtomic } from "./replay.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const N = Number(opt("--messages") ?? 50_000);
const OUT = opt("--out") ?? resolve(ROOT, "bench/results/resume.json");

/** A session of `n` messages written as the agent writes one; returns its id and transcript size. */
function buildSession(ws: string, id: string, n: number, mtime: number): { id: string; bytes: number; transcript: string } {
  return build(ROOT, ws, id, n, mtime);
}

/** Each query's ms in a new process (the first one pays for loading the archive, or its index). */
function recallInNewProcess(dir: string, queries: string[]): number[] {
  const out = execFileSync(process.execPath, ["--import", "tsx", join(ROOT, "bench", "support", "recall-child.ts"), dir, ...queries], { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 20 });
  return (JSON.parse(out.trim().split("\n").pop()!) as { ms: number[] }).ms;
}

/** ms from spawning the CLI to the fake server's first request; the run is then left to finish. */
async function toFirstRequest(ws: string, home: string, args: string[]): Promise<number> {
  const fake = await startFakeAnthropic({ script: () => ({ text: "ok" }), contextWindow: 32_000 });
  try {
    const env: NodeJS.ProcessEnv = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(ANTHROPIC_|OPENAI_|LETHE_)/.test(k))), HOME: home, NO_COLOR: "1", LETHE_USE_DIST: "1", ANTHROPIC_API_KEY: "bench-key" };
    const t0 = performance.now();
    const child = spawn(process.execPath, [join(ROOT, "bin", "lethe.js"), "--provider", "anthropic", "--base-url", fake.url, "--model", "claude-sonnet-4-6", "--context-window", "32000", "--cwd", ws, "--output-format", "json", ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on("close", r));
    while (fake.requests.length === 0) {
      if (child.exitCode !== null) throw new Error(`lethe exited before any request: ${stderr.trim()}`);
      await new Promise((r) => setTimeout(r, 1));
    }
    const ms = performance.now() - t0;
    const code = await exited;
    if (code !== 0) throw new Error(`lethe exited ${code}: ${stderr.trim()}`);
    return ms;
  } finally {
    await fake.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const r1 = (x: number) => Number(x.toFixed(1));

const base = mkdtempSync(join(tmpdir(), "lethe-resume-"));
const ws = join(base, "ws"), home = join(base, "home");
try {
  const t0 = Date.now();
  const older = [buildSession(ws, "20260101-000000-000-aaaaaaaaaa", N / 5, 1_000), buildSession(ws, "20260102-000000-000-bbbbbbbbbb", N / 5, 2_000)];
  const main = buildSession(ws, "20260103-000000-000-cccccccccc", N, 3_000);
  console.log(`built: newest session ${N} messages, ${r1(main.bytes / 1e6)} MB; two older ${r1(older[0]!.bytes / 1e6)} MB each (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  const shape = transcriptShape(main.transcript);
  console.log(`transcript: ${shape.per_message} bytes per message; message lines ${r1(shape.message_bytes / 1e6)} MB, boundary lines ${r1(shape.boundary_bytes / 1e6)} MB (${shape.boundaries}), of which snip heads ${r1(shape.head_bytes / 1e6)} MB (${r1((100 * shape.head_bytes) / shape.bytes)}% of the file)`);

  const runs = 3;
  const fresh0: number[] = [], cont: number[] = [], res: number[] = [];
  for (let i = 0; i < runs; i++) {
    fresh0.push(await toFirstRequest(ws, home, ["-p", "hello"]));
    cont.push(await toFirstRequest(ws, home, ["--continue", "-p", "go on"]));
    res.push(await toFirstRequest(ws, home, ["--resume", main.id, "-p", "go on"]));
    // Each run appends to the session; keep it the newest for --continue.
    utimesSync(join(ws, ".lethe", "sessions", main.id, "transcript.jsonl"), 4_000 + i, 4_000 + i);
  }
  console.log(`to the first request (median of ${runs}): new session ${r1(median(fresh0))} ms   --continue ${r1(median(cont))} ms   --resume ${r1(median(res))} ms   (bar: < 1000)`);

  const dir = join(ws, ".lethe", "sessions", main.id);
  const queries = ["ModuleNotFoundError", "def test_", "/assert\\w+\\(/", "Traceback", "git diff", "pytest -x"];
  // Two new processes before this one queries: the first finds no index, the second the first's.
  const cold = recallInNewProcess(dir, queries);
  const warm = recallInNewProcess(dir, queries);
  const later = (ms: number[]) => median(ms.slice(1));
  console.log(`recall in a new process: first query ${r1(cold[0]!)} ms on a session never queried, ${r1(warm[0]!)} ms in the next process (later queries ${r1(later(warm))} ms: first/later ${r1(warm[0]! / later(warm))}x)`);
  const times: number[] = [];
  for (const q of queries) {
    const s = performance.now();
    const r = recall(dir, { query: q });
    times.push(performance.now() - s);
    if (r.kind === "error") throw new Error(r.text);
  }
  // More messages arrive (a CLI run appends), then another query: only the new lines are read.
  await toFirstRequest(ws, home, ["--continue", "-p", "one more"]);
  const s = performance.now();
  recall(dir, { query: "one more" });
  const afterAppend = performance.now() - s;
  console.log(`recall: first query in this process ${r1(times[0]!)} ms (loads the index, or indexes the archive); next ${times.slice(1).map(r1).join(", ")} ms; after an append ${r1(afterAppend)} ms   (bar: < 200 after the first)`);

  writeJsonAtomic(OUT, {
    messages: N,
    transcript_mb: r1(main.bytes / 1e6),
    transcript: { bytes_per_message: shape.per_message, message_mb: r1(shape.message_bytes / 1e6), boundary_mb: r1(shape.boundary_bytes / 1e6), boundaries: shape.boundaries, snip_head_mb: r1(shape.head_bytes / 1e6) },
    older_sessions_mb: older.map((o) => r1(o.bytes / 1e6)),
    first_request_ms: { new_session: r1(median(fresh0)), continue: r1(median(cont)), resume: r1(median(res)), runs },
    recall_ms: { first: r1(times[0]!), next: times.slice(1).map(r1), after_append: r1(afterAppend) },
    recall_new_process_ms: { first_never_queried: r1(cold[0]!), first_next_process: r1(warm[0]!), later: r1(later(warm)), first_over_later: r1(warm[0]! / later(warm)) },
    node: process.version,
  });
  console.log(`wrote ${OUT}`);
} finally {
  rmSync(base, { recursive: true, force: true });
}
