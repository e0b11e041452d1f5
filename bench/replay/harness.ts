// The replay harness: every session of a corpus, through each policy, at each window.
//
// Each recorded assistant message is one request whose history is everything before it. For each
// request the policy's live context receives the new user message(s), the policy's per-request
// work is timed (prepare_ms), and then, untimed: the summary stand-in if the policy's check asked
// for it, exact o200k tokens of the request, the invariant check, cache pricing, and the recorded
// reply appended with its "reported usage" (exact input tokens of the request + exact reply tokens).
//
// Timing. Before each window/policy pass, one untimed replay of the longest session warms the JIT.
// Then the pass is replayed `repeat` times (default 3) with identical inputs, paths and results;
// each request's prepare_ms is the minimum over the repetitions. On a VM whose vCPU is descheduled
// for milliseconds at a time, a single pass mostly measures where those pauses happen to land
// (see machineJitter); the minimum keeps the cost of the policy's own work. Single-pass figures
// (repetition 1 alone) are kept in detail[].
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { validate } from "../../src/messages/invariants.ts";
import type { Message } from "../../src/messages/types.ts";
import { resultFileName } from "../../src/session/tool-results.ts";
import { countTokens } from "../../src/tokens/exact.ts";
import { type ExactCounter, createExactCounter, requestTokens } from "./exact.ts";
import { InvariantError } from "./policies/lethe.ts";
import { SUMMARY_INSTRUCTION_TOKENS, SUMMARY_OUTPUT_TOKENS, callCost, commonPrefixMessages } from "./pricing.ts";
import { standinRebuild } from "./standin-summary.ts";
import { type Policy, type Session, type Window, maxOutputFor } from "./types.ts";

/** Simulated time between two requests (no idle gaps: the corpus has no timestamps). */
export const CLOCK_STEP_MS = 20_000;
export const DEFAULT_REPEAT = 3;

export interface PolicyMetrics {
  requests: number;
  over_window: number;
  invariant_violations: number;
  summary_calls: number;
  prepare_ms_p50: number;
  prepare_ms_p99: number;
  input_tokens_total: number;
  cost_usd: number;
  retention: null;
}

export interface RequestInfo {
  session: string;
  /** Index of the request in its session (0 = first assistant message). */
  request: number;
  /** Messages in the live context handed to the policy. */
  messages: number;
  ms: number;
  /** Layers that changed something ("refused": the policy threw InvariantError). */
  acted: string[];
}

export interface PolicyDetail {
  prepare_ms_mean: number;
  prepare_ms_max: number;
  /** p50/p99 of the first repetition alone (no minimum over repetitions). */
  prepare_ms_p50_single_pass: number;
  prepare_ms_p99_single_pass: number;
  /** Every repetition produced the same tokens, costs and counts. */
  repetitions_identical: boolean;
  peak_input_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  cost_requests_usd: number;
  cost_summaries_usd: number;
  summary_input_tokens: number;
  standin_modes: Record<string, number>;
  violation_kinds: Record<string, number>;
  /** Requests where the policy itself threw InvariantError (lethe refuses to send a broken history). */
  refused_requests: number;
  /** Layers that acted, counted over requests. */
  acted: Record<string, number>;
  /** Slowest requests (prepare_ms, minimum over repetitions). */
  slowest: RequestInfo[];
}

export interface SessionMetrics {
  requests: number;
  summary_calls: number;
  over_window: number;
  invariant_violations: number;
  input_tokens: number;
  peak_input_tokens: number;
  cost_usd: number;
  prepare_ms_max: number;
}

export interface WindowRun {
  window: number;
  policies: Record<string, PolicyMetrics>;
}

export interface ReplayResult {
  runs: WindowRun[];
  detail: { window: number; policies: Record<string, PolicyDetail> }[];
  sessions: { window: number; policies: Record<string, Record<string, SessionMetrics>> }[];
  corpus: { sessions: number; messages: number; requests: number; exact_tokens: number; exact_count_s: number };
  warmup: { session: string | null };
  repeat: number;
  /** Whether the work directory had its fixed name (so paths in markers, and tokens, repeat run to run). */
  deterministic_paths: boolean;
}

export interface RequestRecord extends RequestInfo {
  window: number;
  policy: string;
  repetition: number;
  /** performance.now() when the timed section started. */
  t0: number;
}

export interface ReplayConfig {
  windows: number[];
  policies: readonly Policy[];
  /** Replay one session untimed per window and policy first (JIT warm-up). Default true. */
  warmup?: boolean;
  /** Repetitions of each timed pass; prepare_ms is the per-request minimum. Default 3. */
  repeat?: number;
  /** Parent of the temporary work directory (default os.tmpdir()). */
  tmpRoot?: string;
  log?: (line: string) => void;
  /** Slowest requests kept per window and policy. Default 10. */
  keepSlowest?: number;
  /** Called after every timed request (diagnostics: bench/replay/diagnose.ts). */
  onRequest?: (r: RequestRecord) => void;
}

/** Freeze the recorded corpus so that no policy can corrupt what the others replay. */
export function deepFreeze<T>(x: T): T {
  if (x && typeof x === "object" && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const v of Object.values(x as object)) deepFreeze(v);
  }
  return x;
}

/** Nearest-rank percentile of an ascending-sorted array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

interface Acc {
  reqs: RequestInfo[];
  m: PolicyMetrics;
  d: PolicyDetail;
  sessions: Record<string, SessionMetrics>;
}

function newAcc(): Acc {
  return {
    reqs: [],
    m: {
      requests: 0,
      over_window: 0,
      invariant_violations: 0,
      summary_calls: 0,
      prepare_ms_p50: 0,
      prepare_ms_p99: 0,
      input_tokens_total: 0,
      cost_usd: 0,
      retention: null,
    },
    d: {
      prepare_ms_mean: 0,
      prepare_ms_max: 0,
      prepare_ms_p50_single_pass: 0,
      prepare_ms_p99_single_pass: 0,
      repetitions_identical: true,
      peak_input_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      output_tokens: 0,
      cost_requests_usd: 0,
      cost_summaries_usd: 0,
      summary_input_tokens: 0,
      standin_modes: {},
      violation_kinds: {},
      refused_requests: 0,
      acted: {},
      slowest: [],
    },
    sessions: {},
  };
}

const bump = (r: Record<string, number>, k: string, by = 1) => {
  r[k] = (r[k] ?? 0) + by;
};

interface ReplayContext {
  exact: ExactCounter;
  systemTokens: Map<Session, number>;
  onRequest?: (r: RequestRecord) => void;
  repetition: number;
}

/** Replay one session through one policy at one window; adds to `acc` unless it is null (warm-up). */
export function replaySession(policy: Policy, session: Session, window: Window, dir: string, ctx: ReplayContext, acc: Acc | null): SessionMetrics {
  const { exact } = ctx;
  const systemTokens = ctx.systemTokens.get(session) ?? countTokens(session.system);
  let now = 1_700_000_000_000;
  const run = policy.start({ session, systemTokens, window, dir, clock: () => now });
  const s: SessionMetrics = {
    requests: 0,
    summary_calls: 0,
    over_window: 0,
    invariant_violations: 0,
    input_tokens: 0,
    peak_input_tokens: 0,
    cost_usd: 0,
    prepare_ms_max: 0,
  };

  let live: Message[] = [];
  let pending: Message[] = [];
  let prev: readonly Message[] | null = null;
  const tokensOf = (m: Message) => exact.message(m);
  /** Exact tokens of the first k messages (plus the system prompt when a previous request exists). */
  const prefixTokens = (history: readonly Message[], k: number) => {
    let n = prev ? systemTokens : 0;
    for (let i = 0; i < k; i++) n += exact.message(history[i]!);
    return n;
  };

  for (const reply of session.messages) {
    if (reply.role !== "assistant") {
      pending.push(reply);
      continue;
    }
    if (pending.length > 0) {
      live = live.concat(pending);
      pending = [];
    }
    now += CLOCK_STEP_MS;
    const index = s.requests;

    // ---- timed: the policy's own per-request work ----
    let prepared: ReturnType<typeof run.prepare> | null = null;
    let refused: InvariantError | null = null;
    const t0 = performance.now();
    try {
      prepared = run.prepare(live);
    } catch (e) {
      if (!(e instanceof InvariantError)) throw e;
      refused = e;
    }
    const ms = performance.now() - t0;
    // ---- untimed from here ----

    let request: Message[];
    let violations: number;
    let summaryCost = 0;
    if (prepared) {
      request = prepared.history;
      if (prepared.overThreshold) {
        // The summary call: the history as prepared + the instruction, reusing the cached prefix.
        const k = commonPrefixMessages(prev, request);
        const read = prefixTokens(request, k);
        const input = requestTokens(exact, systemTokens, request) + SUMMARY_INSTRUCTION_TOKENS;
        summaryCost = callCost({ cacheRead: read, cacheWrite: input - read, input: 0, output: SUMMARY_OUTPUT_TOKENS });
        s.summary_calls++;
        const rebuilt = standinRebuild(request, run.threshold, tokensOf);
        if (acc) {
          acc.d.summary_input_tokens += input;
          bump(acc.d.standin_modes, rebuilt.mode);
        }
        prev = request;
        request = rebuilt.history;
      }
      const found = validate(request);
      violations = found.length;
      if (acc) for (const v of found) bump(acc.d.violation_kinds, v.kind);
    } else {
      // lethe refused to send a history that breaks an invariant: count what it found; the
      // replay goes on with the unprepared history.
      request = live;
      violations = refused!.violations.length;
      if (acc) {
        acc.d.refused_requests++;
        for (const v of refused!.violations) bump(acc.d.violation_kinds, v.kind);
      }
    }

    const input = requestTokens(exact, systemTokens, request);
    const read = prefixTokens(request, commonPrefixMessages(prev, request));
    const output = exact.message(reply);
    const requestCost = callCost({ cacheRead: read, cacheWrite: input - read, input: 0, output });

    s.requests++;
    s.invariant_violations += violations;
    s.input_tokens += input;
    s.peak_input_tokens = Math.max(s.peak_input_tokens, input);
    if (input > window.contextWindow) s.over_window++;
    s.cost_usd += requestCost + summaryCost;
    s.prepare_ms_max = Math.max(s.prepare_ms_max, ms);

    if (acc) {
      const info: RequestInfo = { session: session.id, request: index, messages: live.length, ms, acted: prepared?.acted ?? ["refused"] };
      acc.reqs.push(info);
      acc.d.cache_read_tokens += read;
      acc.d.cache_write_tokens += input - read;
      acc.d.output_tokens += output;
      acc.d.cost_requests_usd += requestCost;
      acc.d.cost_summaries_usd += summaryCost;
      for (const a of info.acted) bump(acc.d.acted, a);
      ctx.onRequest?.({ ...info, window: window.contextWindow, policy: policy.name, repetition: ctx.repetition, t0 });
    }

    run.observe(request, reply, { input_tokens: input, output_tokens: output });
    prev = request;
    live = request.concat([reply]);
  }

  if (acc) {
    const m = acc.m;
    m.requests += s.requests;
    m.over_window += s.over_window;
    m.invariant_violations += s.invariant_violations;
    m.summary_calls += s.summary_calls;
    m.input_tokens_total += s.input_tokens;
    m.cost_usd += s.cost_usd;
    acc.d.peak_input_tokens = Math.max(acc.d.peak_input_tokens, s.peak_input_tokens);
    acc.sessions[session.id] = s;
  }
  return s;
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

/** Everything but timings, to check that repetitions replayed the same thing. */
function fingerprint(acc: Acc): string {
  const { prepare_ms_p50: _a, prepare_ms_p99: _b, ...m } = acc.m;
  const sessions = Object.entries(acc.sessions).map(([k, { prepare_ms_max: _c, ...s }]) => [k, s]);
  return JSON.stringify([m, sessions, acc.d.cache_read_tokens, acc.d.summary_input_tokens, acc.reqs.map((r) => r.acted)]);
}

/** Combine the repetitions: metrics of the first, prepare_ms = per-request minimum. */
function finish(accs: Acc[], keepSlowest: number): Acc {
  const acc = accs[0]!;
  const single = Float64Array.from(acc.reqs, (r) => r.ms).sort();
  acc.d.prepare_ms_p50_single_pass = round(percentile(single, 50), 4);
  acc.d.prepare_ms_p99_single_pass = round(percentile(single, 99), 4);
  const fp = fingerprint(acc);
  acc.d.repetitions_identical = accs.every((a) => a.reqs.length === acc.reqs.length && fingerprint(a) === fp);
  acc.reqs.forEach((r, i) => {
    for (const a of accs) r.ms = Math.min(r.ms, a.reqs[i]?.ms ?? Infinity);
  });
  for (const s of Object.values(acc.sessions)) s.prepare_ms_max = 0;
  for (const r of acc.reqs) {
    const s = acc.sessions[r.session]!;
    s.prepare_ms_max = Math.max(s.prepare_ms_max, r.ms);
  }
  const sorted = Float64Array.from(acc.reqs, (r) => r.ms).sort();
  acc.m.prepare_ms_p50 = round(percentile(sorted, 50), 4);
  acc.m.prepare_ms_p99 = round(percentile(sorted, 99), 4);
  acc.m.cost_usd = round(acc.m.cost_usd, 4);
  acc.d.prepare_ms_mean = round(sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length), 4);
  acc.d.prepare_ms_max = round(sorted[sorted.length - 1] ?? 0, 4);
  acc.d.cost_requests_usd = round(acc.d.cost_requests_usd, 4);
  acc.d.cost_summaries_usd = round(acc.d.cost_summaries_usd, 4);
  acc.d.slowest = acc.reqs
    .slice()
    .sort((a, b) => b.ms - a.ms)
    .slice(0, keepSlowest)
    .map((r) => ({ ...r, ms: round(r.ms, 4) }));
  for (const s of Object.values(acc.sessions)) {
    s.cost_usd = round(s.cost_usd, 4);
    s.prepare_ms_max = round(s.prepare_ms_max, 4);
  }
  return acc;
}

/**
 * The work directory under os.tmpdir(). Paths written into markers and placeholders are part of the
 * token counts, so a fixed name keeps runs comparable; a random one is used when another run holds it.
 */
function makeRoot(parent: string): string {
  const fixed = join(parent, "lethe-replay");
  try {
    mkdirSync(fixed);
    return fixed;
  } catch {
    return mkdtempSync(join(parent, "lethe-replay-"));
  }
}

export function runReplay(sessionsIn: readonly Session[], cfg: ReplayConfig): ReplayResult {
  const log = cfg.log ?? (() => {});
  const repeat = Math.max(1, Math.floor(cfg.repeat ?? DEFAULT_REPEAT));
  const keepSlowest = cfg.keepSlowest ?? 10;
  const sessions = sessionsIn.map((s) => deepFreeze(s));
  const exact = createExactCounter();
  const systemTokens = new Map<Session, number>();

  // Count every recorded block once up front (exact o200k is slow; memoised per block object).
  const t0 = performance.now();
  let corpusTokens = 0;
  let messages = 0;
  let requests = 0;
  for (const s of sessions) {
    const sys = countTokens(s.system);
    systemTokens.set(s, sys);
    corpusTokens += sys + exact.messages(s.messages);
    messages += s.messages.length;
    requests += s.messages.filter((m) => m.role === "assistant").length;
  }
  const exactCountS = (performance.now() - t0) / 1000;
  log(`corpus: ${sessions.length} sessions, ${messages} messages, ${requests} requests, ${corpusTokens} exact tokens (counted in ${exactCountS.toFixed(1)} s)`);

  const ctx: ReplayContext = { exact, systemTokens, onRequest: cfg.onRequest, repetition: 0 };
  const warm = cfg.warmup === false ? null : sessions.reduce<Session | null>((a, s) => (!a || s.messages.length > a.messages.length ? s : a), null);
  const root = makeRoot(cfg.tmpRoot ?? tmpdir());
  const result: ReplayResult = {
    runs: [],
    detail: [],
    sessions: [],
    corpus: { sessions: sessions.length, messages, requests, exact_tokens: corpusTokens, exact_count_s: round(exactCountS, 2) },
    warmup: { session: warm?.id ?? null },
    repeat,
    deterministic_paths: !/lethe-replay-[^/]+$/.test(root),
  };
  try {
    for (const contextWindow of cfg.windows) {
      const window: Window = { contextWindow, maxOutputTokens: maxOutputFor(contextWindow) };
      const run: WindowRun = { window: contextWindow, policies: {} };
      const detail: Record<string, PolicyDetail> = {};
      const perSession: Record<string, Record<string, SessionMetrics>> = {};
      for (const policy of cfg.policies) {
        // The same paths in every repetition, so markers (and their tokens) are identical.
        const base = join(root, `${contextWindow}`, policy.name);
        const t1 = performance.now();
        if (warm) {
          replaySession(policy, warm, window, join(base, "warmup"), ctx, null);
          rmSync(base, { recursive: true, force: true });
        }
        const accs: Acc[] = [];
        for (let rep = 0; rep < repeat; rep++) {
          ctx.repetition = rep;
          const acc = newAcc();
          for (const s of sessions) {
            const dir = join(base, resultFileName(s.id).replace(/\.txt$/, ""));
            mkdirSync(dir, { recursive: true });
            replaySession(policy, s, window, dir, ctx, acc);
          }
          accs.push(acc);
          rmSync(base, { recursive: true, force: true });
        }
        const acc = finish(accs, keepSlowest);
        run.policies[policy.name] = acc.m;
        detail[policy.name] = acc.d;
        perSession[policy.name] = acc.sessions;
        log(`window ${contextWindow} ${policy.name}: ${repeat} × ${acc.m.requests} requests in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
      }
      result.runs.push(run);
      result.detail.push({ window: contextWindow, policies: detail });
      result.sessions.push({ window: contextWindow, policies: perSession });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return result;
}

/**
 * How much wall time the machine steals from a busy thread: spin on the clock for `ms` and
 * record gaps > 0.2 ms between consecutive reads (descheduled vCPU, interrupts, other load).
 */
export function machineJitter(ms = 1000): { gaps_per_s: number; lost_pct: number; median_gap_ms: number; max_gap_ms: number } {
  const start = performance.now();
  const end = start + ms;
  const gaps: number[] = [];
  let last = start;
  for (;;) {
    const t = performance.now();
    if (t - last > 0.2) gaps.push(t - last);
    last = t;
    if (t > end) break;
  }
  gaps.sort((a, b) => a - b);
  const lost = gaps.reduce((a, b) => a + b, 0);
  const elapsed = last - start;
  return {
    gaps_per_s: round((gaps.length / elapsed) * 1000, 1),
    lost_pct: round((100 * lost) / elapsed, 1),
    median_gap_ms: round(gaps[gaps.length >> 1] ?? 0, 3),
    max_gap_ms: round(gaps[gaps.length - 1] ?? 0, 3),
  };
}
