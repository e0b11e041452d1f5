// npm run bench:replay → bench/results/replay.json
//
// Replays every session of a corpus through each policy (lethe, seed = the course's s08 rules,
// claude-code = Claude Code's rules) at each window, and reports per window and policy: requests,
// requests over the window, invariant violations, summary calls, prepare time (p50/p99), exact
// input tokens, prompt-cache cost and retention after summary compactions. See
// bench/replay/harness.ts for the protocol.
//
//   tsx bench/replay.ts [--corpus FILE[.gz]] [--diffs FILE] [--window N]… [--out FILE] [--policy NAME]… [--session ID]… [--repeat K] [--no-warmup]
//
// Ledger recall needs each session's final diff: the shared corpus's comes from
// bench/corpus/shared_final_diffs.json; a second corpus lethe was never tuned on is built by
// bench/corpus/convert-trajectories.ts (--corpus bench/corpus/unseen.jsonl.gz). See
// bench/corpus/PROVENANCE.md.
import { existsSync, mkdirSync, readFileSync, renameSync, statfsSync, writeFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { cpus, platform, release, tmpdir } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ReplayResult } from "./replay/harness.ts";
import { CLOCK_STEP_MS, DEFAULT_REPEAT, machineJitter, runReplay } from "./replay/harness.ts";
import { ALL_POLICIES, policyByName } from "./replay/policies/index.ts";
import { CLAUDE_CODE } from "./replay/policies/claude-code.ts";
import { SEED } from "./replay/policies/seed.ts";
import { MULT } from "./replay/pricing.ts";
import { RETENTION_COMMANDS, RETENTION_KEYS, RETENTION_USER_BUDGET } from "./replay/retention.ts";
import { filesTouched } from "./replay/items.ts";
import { costRatioTable, costRatios, retentionKindTable } from "./replay/report.ts";
import { ledgerRecall } from "./replay/ledger-recall.ts";
import type { Policy, Session } from "./replay/types.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DEFAULT_CORPUS = resolve(ROOT, "../shared/corpus/real_sessions.jsonl");
const DEFAULT_OUT = resolve(ROOT, "bench/results/replay.json");
/** The shared corpus's ground truth for the ledger (its lines are read-only): bench/corpus/PROVENANCE.md. */
const SHARED_DIFFS = resolve(ROOT, "bench/corpus/shared_final_diffs.json");
const DEFAULT_WINDOWS = [32_000, 64_000, 200_000];

interface Args {
  corpus: string;
  /** Ground truth for the ledger (session id → files of its final diff), when lines lack it. */
  diffs: string | undefined;
  windows: number[];
  out: string;
  policies: Policy[];
  sessions: string[];
  warmup: boolean;
  repeat: number;
}

function usage(msg: string): never {
  console.error(`bench:replay: ${msg}`);
  console.error("usage: tsx bench/replay.ts [--corpus FILE[.gz]] [--diffs FILE] [--window N]… [--out FILE] [--policy NAME]… [--session ID]… [--repeat K] [--no-warmup]");
  process.exit(2);
}

export function parseArgs(argv: string[]): Args {
  const a: Args = { corpus: DEFAULT_CORPUS, diffs: undefined, windows: [], out: DEFAULT_OUT, policies: [], sessions: [], warmup: true, repeat: DEFAULT_REPEAT };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const eq = flag.indexOf("=");
    const name = eq > 0 ? flag.slice(0, eq) : flag;
    const value = (): string => {
      const v = eq > 0 ? flag.slice(eq + 1) : argv[++i];
      if (v === undefined) usage(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case "--corpus":
        a.corpus = resolve(value());
        break;
      case "--diffs":
        a.diffs = resolve(value());
        break;
      case "--out":
        a.out = resolve(value());
        break;
      case "--window": {
        const v = value();
        const n = Number(v.replace(/_/g, "").replace(/k$/i, "000"));
        if (!Number.isInteger(n) || n <= 0) usage(`--window wants a positive integer (got ${v})`);
        a.windows.push(n);
        break;
      }
      case "--policy":
        try {
          a.policies.push(policyByName(value()));
        } catch (e) {
          usage((e as Error).message);
        }
        break;
      case "--session":
        a.sessions.push(value());
        break;
      case "--repeat": {
        const v = value();
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1) usage(`--repeat wants a positive integer (got ${v})`);
        a.repeat = n;
        break;
      }
      case "--no-warmup":
        a.warmup = false;
        break;
      case "-h":
      case "--help":
        usage("help");
      default:
        usage(`unknown argument ${flag}`);
    }
  }
  if (a.windows.length === 0) a.windows = DEFAULT_WINDOWS;
  if (a.policies.length === 0) a.policies = [...ALL_POLICIES];
  return a;
}

/**
 * Sessions of a corpus (JSONL, or JSONL.gz). Ground truth for the ledger comes from each line's
 * meta.final_diff_files, or from `diffs` (a JSON object: session id → files), for a corpus whose
 * lines cannot carry it.
 */
export function loadCorpus(path: string, diffs?: string): Session[] {
  const out: Session[] = [];
  const raw = readFileSync(path);
  const lines = (path.endsWith(".gz") ? gunzipSync(raw) : raw).toString("utf8").split("\n");
  const truth = diffs && existsSync(diffs) ? (JSON.parse(readFileSync(diffs, "utf8")) as Record<string, string[]>) : {};
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const o = JSON.parse(line) as { id?: unknown; system?: unknown; messages?: unknown; meta?: { final_diff_files?: unknown } };
    if (typeof o.id !== "string" || !Array.isArray(o.messages)) throw new Error(`${path}:${i + 1}: expected {id, system, messages}`);
    const s: Session = { id: o.id, system: typeof o.system === "string" ? o.system : JSON.stringify(o.system ?? ""), messages: o.messages as Session["messages"] };
    const files = o.meta?.final_diff_files ?? truth[o.id];
    if (Array.isArray(files) && files.every((f) => typeof f === "string")) s.finalDiffFiles = files as string[];
    out.push(s);
  });
  return out;
}

export function writeJsonAtomic(path: string, data: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`);
  renameSync(tmp, path);
}

/** The kind of file system `dir` is on (statfs's magic number, named when common). */
function fileSystemOf(dir: string): string {
  const kinds: Record<number, string> = { 0xef53: "ext4", 0x01021994: "tmpfs", 0x794c7630: "overlayfs", 0x58465342: "xfs", 0x9123683e: "btrfs" };
  try {
    const type = statfsSync(dir).type;
    return kinds[type] ?? `type 0x${type.toString(16)}`;
  } catch {
    return "unknown";
  }
}

export function notes(args: { corpus: string; policies: readonly Policy[]; result: ReplayResult; jitter: ReturnType<typeof machineJitter> }): Record<string, unknown> {
  const { result } = args;
  return {
    corpus: `${args.corpus} (${result.corpus.sessions} sessions, ${result.corpus.messages} messages, ${result.corpus.requests} requests, ${result.corpus.exact_tokens} exact o200k tokens)`,
    requests:
      "each recorded assistant message is one request whose history is everything before it; the two sessions that end with an unanswered tool_use end with that request",
    replay:
      "per window, per policy, per session the policy keeps its own live context: new user message(s) appended, the policy prepares, the prepared (or rebuilt) history is sent and becomes the live context, the recorded reply is appended, and the policy is told the reported usage (exact input tokens of the request + exact tokens of the reply as output)",
    max_output_tokens: "min(32000, window / 4): 8k at 32k, 16k at 64k, 32k at 200k",
    prepare_ms:
      `performance.now() around the policy's per-request work only (its layers, its token counting, its threshold check, and at a summary compaction building the summary request and the rebuilt history; lethe: engine.beforeRequest including its repair/validate and its file writes (tool results moved to files; the cheap layers' boundary lines are written once the request is out, in observe here: timed as after_ms); seed: its whole prepare, transcript and tool-result file writes included, as the course does them), MINUS the time spent inside the summary model stand-in (the digest and its pricing: in production that is a model call; total per pass in detail[].summary_standin_ms). For lethe the digest runs behind a ModelClient handed to the engine, so the subtraction is exactly the model call. Exact counting, invariant checks, retention and pricing are not timed. Each window/policy pass is replayed ${result.repeat} times with identical inputs, paths and results (detail[].repetitions_identical), the policies interleaved (repetition 1 of every policy, then repetition 2, …) so that load from other processes falls on all of them alike; a request's prepare_ms is its minimum over the repetitions, which removes pauses that do not belong to the request (descheduled vCPU, see machine_jitter; other processes on this 2-core machine; GC pauses triggered by earlier allocations). p50/p99: nearest rank over all requests of all sessions at that window. Single-pass p50/p99 (first repetition alone) are in detail[]`,
    after_ms:
      "performance.now() around the policy's observe after each request (lethe: the reply appended to the transcript, with the boundary lines its cheap layers left for after the send, and engine.observe), untimed in prepare_ms: in production it runs while the request is on its way or after the reply. detail[].after_ms_p50/p99, and prepare_and_after_ms_p99 (the two summed per request, minimum over repetitions)",
    machine_jitter: { ...args.jitter, how: "a thread spinning on performance.now() for 1 s before the replay: gaps > 0.2 ms between two reads are time the machine took away from it" },
    warmup: `before each window's passes, per policy, one untimed replay of the longest session (${result.warmup.session ?? "none"}) so JIT warm-up does not pollute p99`,
    tokens:
      "exact o200k (countTokens, src/tokens/exact.ts) of system prompt + messages, with src/tokens/count.ts framing (4 per message, 3 per block); memoised per block object (WeakMap), the corpus counted once up front",
    over_window: "requests whose exact input tokens (system prompt + messages, as sent) > window. Summary requests are not requests here; those over the window are counted in detail[].summary_requests_over_window",
    invariant_violations: "validate() of src/messages/invariants.ts on every request actually sent (the rebuilt history after a summary), summed over requests. The seed's are the course's own (snip_compact puts its archive marker after a user message)",
    summary_calls: "summary model calls the policy made (lethe: counted from engine.beforeRequest's events, kind summarize/reactive; checked against the calls the stand-in received)",
    summary_model:
      `offline, the digest (src/compaction/digest.ts, no model) stands in for the summary model, the same function for every policy, capped at the policy's own summary size (lethe: its engine's budget for the window; claude-code: ${CLAUDE_CODE.summaryMaxTokens.toLocaleString("en-US")} tokens; seed: ${SEED.summaryMaxTokens.toLocaleString("en-US")} tokens, assumed for the course's summary call). The digest carries no user messages and no file list of its own (lethe's rebuild adds those verbatim), so what each rebuilt context retains beyond it is the policy's doing`,
    summary_pricing: `each summary call is priced as a model call: input = the request as the policy sends it, exact o200k; output = exact tokens of the summary text (the digest's length stands in for the model's output size) at ${MULT.output}×. lethe and claude-code reuse the cached prefix: the request is the conversation as sent (system prompt + history) with the instruction appended to the last user message (src/compaction/summarize.ts summaryRequest; claude-code uses the same construction and instruction text, standing in for its own prompt of similar size): cache read for the prefix shared with the previous request, cache write for the rest (the pending messages and the instruction). The seed's summary request is a fresh single user message (a short instruction + the serialised conversation cut to ${SEED.summaryInputChars.toLocaleString("en-US")} chars, first quarter + tail), no system prompt: all of it a cache write, no cache read. Included in cost_usd (split in detail[].cost_summaries_usd); summary input tokens are NOT in input_tokens_total (see detail[].summary_input_tokens and its cache split)`,
    read_files: "restoring files after a summary (lethe, claude-code) reads through one stand-in for the disk (bench/replay/files.ts): the latest content of that path seen in the recorded history's read results so far (Read/read_file/open/view calls, shell cat FILE and sed -n '…p' FILE), decorations stripped (line-number prefixes, <returncode>/<output> wrappers, system reminders); undefined if never read",
    retention:
      `measured on each context rebuilt by a summary compaction, over the items that existed before it, taken from the ORIGINAL recorded history up to that request (not the policy's own context): user-typed messages (each user message's text blocks, not tool results, joined by newlines; newest first within ${RETENTION_USER_BUDGET.toLocaleString("en-US")} exact tokens, the newest always counted; found and selected by the benchmark's own code, bench/replay/retention.ts typedUserMessages + newestWithin, not by the engine's selectors, which would score their own bugs as retained), the latest request (the newest of them), paths of files modified and of files read, and the last ${RETENTION_COMMANDS} shell commands (each its first non-blank line, first 200 characters, plus for a failed one — is_error, or a non-zero <returncode>/"Exit code N" — the line saying what went wrong, first 120 characters): found by the benchmark's own definition, bench/replay/items.ts filesTouched + shellCommands (file tool calls and the obvious shell reads and writes; definition in that file's header), not by the engine's file ledger or work record, which lethe carries into every rebuild and which would therefore score their own bugs as retained; a command is retained when its line and its error line are both there. An item is retained if it occurs verbatim (substring) in the text of the rebuilt context (all blocks, tool results and tool_use inputs included). Each figure is the mean over compactions of the per-compaction percentage; a compaction with no item of a kind does not count for that kind (detail[].retention_samples). null where no summary compaction happened at that window (then nothing was rebuilt and nothing was dropped by a summary)`,
    clock: `simulated, ${CLOCK_STEP_MS / 1000} s per request (the corpus has no timestamps), so idle-based clearing never fires`,
    files: `policies that persist tool results write real files under os.tmpdir() (lethe: its file store, written atomically, no fsync: its default; seed: tool results and a full JSONL transcript at every snip and compaction, plain writes, paths in its markers relative to the session folder as the course's are short; claude-code: plain writes), removed at the end; os.tmpdir() was ${tmpdir()} (${fileSystemOf(tmpdir())}). The seed's p99 follows how fast those writes go (a file system in memory, or a disk that has not yet had much to write back, takes them fastest: README, Replay). Paths appear in markers, so they count as tokens; ${result.deterministic_paths ? "the work directory had its fixed name (tokens repeat run to run)" : "another run held the fixed work directory, so a random one was used (token totals may differ slightly from other runs)"}`,
    policies: Object.fromEntries(args.policies.map((p) => [p.name, p.describe])),
    detail: "detail[] and sessions[] hold extra per-window figures (cache split, peak input, slowest requests with the layers that acted, per-session metrics)",
    machine: `node ${process.version}, ${platform()} ${release()}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}`,
  };
}

function detail(result: ReplayResult, window: number, policy: string) {
  return result.detail.find((d) => d.window === window)?.policies[policy];
}

function table(result: ReplayResult): string {
  const head = ["window", "policy", "requests", "over_win", "violations", "summaries", "p50 ms", "p99 ms", "p99 1-pass", "after p99", "input tokens", "cost $", "latest %", "user msgs %", "modified %", "read %", "commands %"];
  const rows: string[][] = [];
  for (const run of result.runs) {
    for (const [name, m] of Object.entries(run.policies)) {
      rows.push([
        String(run.window),
        name,
        String(m.requests),
        String(m.over_window),
        String(m.invariant_violations),
        String(m.summary_calls),
        m.prepare_ms_p50.toFixed(3),
        m.prepare_ms_p99.toFixed(3),
        (detail(result, run.window, name)?.prepare_ms_p99_single_pass ?? 0).toFixed(3),
        (detail(result, run.window, name)?.after_ms_p99 ?? 0).toFixed(3),
        m.input_tokens_total.toLocaleString("en-US"),
        m.cost_usd.toFixed(2),
        ...RETENTION_KEYS.map((k) => (m.retention ? (m.retention[k] === null ? "n/a" : m.retention[k]!.toFixed(1)) : "-")),
      ]);
    }
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/** Where the money goes: per window and policy, requests vs summaries, cache reads vs writes. */
function costTable(result: ReplayResult): string {
  const head = ["window", "policy", "input tok", "cache read", "cache write", "output tok", "requests $", "summaries", "sum in tok", "sum read", "sum write", "sum out", "summaries $", "cost $"];
  const rows: string[][] = [];
  const n = (x: number) => x.toLocaleString("en-US");
  for (const run of result.runs) {
    for (const [name, m] of Object.entries(run.policies)) {
      const d = detail(result, run.window, name)!;
      rows.push([
        String(run.window),
        name,
        n(m.input_tokens_total),
        n(d.cache_read_tokens),
        n(d.cache_write_tokens),
        n(d.output_tokens),
        d.cost_requests_usd.toFixed(2),
        String(m.summary_calls),
        n(d.summary_input_tokens),
        n(d.summary_cache_read_tokens),
        n(d.summary_cache_write_tokens),
        n(d.summary_output_tokens),
        d.cost_summaries_usd.toFixed(2),
        m.cost_usd.toFixed(2),
      ]);
    }
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  let sessions = loadCorpus(args.corpus, args.diffs ?? (args.corpus === DEFAULT_CORPUS ? SHARED_DIFFS : undefined));
  if (args.sessions.length > 0) {
    sessions = sessions.filter((s) => args.sessions.includes(s.id));
    if (sessions.length === 0) usage(`no session matches ${args.sessions.join(", ")}`);
  }
  const recall = ledgerRecall(sessions);
  // The same check for the files retention scores (the benchmark's own definition).
  const itemsRecall = ledgerRecall(sessions, (h) => filesTouched(h).modified);
  const t0 = Date.now();
  const jitter = machineJitter(1000);
  console.error(`machine jitter: ${jitter.gaps_per_s} pauses/s, ${jitter.lost_pct}% of wall time lost (median pause ${jitter.median_gap_ms} ms)`);
  const result = await runReplay(sessions, {
    windows: args.windows,
    policies: args.policies,
    warmup: args.warmup,
    repeat: args.repeat,
    log: (l) => console.error(l),
  });
  const json = {
    runs: result.runs,
    notes: notes({ corpus: args.corpus, policies: args.policies, result, jitter }),
    detail: result.detail,
    sessions: result.sessions,
    cost_vs_claude_code: costRatios(result),
    ledger_recall: recall,
    retention_items_recall: itemsRecall,
  };
  writeJsonAtomic(args.out, json);
  console.log(table(result));
  console.log(`\n${costTable(result)}`);
  console.log(`\n${retentionKindTable(result)}`);
  const ratios = costRatioTable(json.cost_vs_claude_code);
  if (ratios) console.log(`\n${ratios}`);
  console.log(
    recall
      ? `\nledger vs final diffs: ${recall.found}/${recall.files} files found as modified, over ${recall.sessions} sessions with a known diff${recall.missed.length ? `; missed: ${recall.missed.join(", ")}` : ""}`
      : "\nledger vs final diffs: no ground truth for this corpus",
  );
  if (itemsRecall) console.log(`retention's modified files (bench/replay/items.ts) vs final diffs: ${itemsRecall.found}/${itemsRecall.files} found${itemsRecall.missed.length ? `; missed: ${itemsRecall.missed.join(", ")}` : ""}`);
  console.log(`\nwrote ${args.out} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
