// The replay harness: every session of a corpus, through each policy, at each window.
//
// Each recorded assistant message is one request whose history is everything before it. For each
// request the policy's live context receives the new user message(s), the policy's per-request
// work is timed (prepare_ms), and then, untimed: exact o200k tokens of the request, the invariant
// check, retention (after a summary compaction), cache pricing, and the recorded reply appended with
// its "reported usage" (exact input tokens of the request + exact reply tokens).
//
// Summaries. Every policy gets the same summary model stand-in (SummaryModel): the digest
// (src/compaction/digest.ts) of the history it is given, capped at the policy's own summary size.
// Each call is counted and priced as a model call (input as the policy sends it, with or without
// prompt-cache reuse; output = exact tokens of the digest at the output price), and the time spent
// inside it is subtracted from prepare_ms: in production it is a model call, not the policy's work.
// Restoring files after a summary reads through one shared stand-in for the disk (./files.ts).
//
// Timing. Before each window's passes, one untimed replay of the longest session per policy warms
// the JIT. Then each policy's pass is replayed `repeat` times (default 3) with identical inputs,
// paths and results, the policies interleaved (repetition 1 of each policy, then repetition 2, …)
// so that load from other processes falls on all of them alike; each request's prepare_ms is the
// minimum over the repetitions. On a VM whose vCPU is descheduled
// for milliseconds at a time, a single pass mostly measures where those pauses happen to land
// (see machineJitter); the minimum keeps the cost of the policy's own work. Single-pass figures
// (repetition 1 alone) are kept in detail[].
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { digest } from "../../src/compaction/summary/digest.ts";
import { validate } from "../../src/messages/invariants.ts";
import type { Message } from "../../src/messages/types.ts";
import { resultFileName } from "../../src/session/tool-results.ts";
import { BLOCK_OVERHEAD, MESSAGE_OVERHEAD, createTokenCounter } from "../../src/tokens/count.ts";
import { countTokens } from "../../src/tokens/exact.ts";
import { type ExactCounter, createExactCounter, requestTokens } from "./exact.ts";
import { createFileView } from "./files.ts";
import { InvariantError, OverWindowError, ThrashError } from "./policies/lethe.ts";
import { callCost, commonPrefixMessages } from "./pricing.ts";
import {
  type CompactionRecord,
  type RetentionAcc,
  type RetentionItems,
  addRetention,
  compactionRecord,
  contextText,
  measureRetentionText,
  newRetentionAcc,
  retentionItems,
  retentionResult,
} from "./retention.ts";
import { type CompactionKind, type Policy, type Session, type SummaryCall, type SummaryModel, type Window, maxOutputFor } from "./types.ts";

/** Simulated time between two requests (no idle gaps: the corpus has no timestamps). */
export const CLOCK_STEP_MS = 20_000;
export const DEFAULT_REPEAT = 3;

export type Retention = ReturnType<typeof retentionResult>;

export interface PolicyMetrics {
  requests: number;
  over_window: number;
  invariant_violations: number;
  summary_calls: number;
  prepare_ms_p50: number;
  prepare_ms_p99: number;
  input_tokens_total: number;
  cost_usd: number;
  /** Mean over the summary compactions of each share (null: no compaction at this window). */
  retention: Retention;
}

export interface RequestInfo {
  session: string;
  /** Index of the request in its session (0 = first assistant message). */
  request: number;
  /** Messages in the live context handed to the policy. */
  messages: number;
  ms: number;
  /**
   * The policy's work after the request is sent (untimed in prepare_ms): observe, with what the
   * policy left for then (lethe: the cheap layers' boundary lines, written once the request is out).
   */
  after: number;
  /** Layers that changed something ("refused:<Error>": the policy refused to send). */
  acted: string[];
  /** Tokens of the request, and how many of them were a cache read (the rest a cache write). */
  input: number;
  cacheRead: number;
}

export interface PolicyDetail {
  prepare_ms_mean: number;
  prepare_ms_max: number;
  /** p50/p99 of the first repetition alone (no minimum over repetitions). */
  prepare_ms_p50_single_pass: number;
  prepare_ms_p99_single_pass: number;
  /** The work after the send (RequestInfo.after), and prepare plus it, per request (minimum over repetitions). */
  after_ms_p50: number;
  after_ms_p99: number;
  prepare_and_after_ms_p99: number;
  /** Every repetition produced the same tokens, costs and counts. */
  repetitions_identical: boolean;
  peak_input_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  cost_requests_usd: number;
  cost_summaries_usd: number;
  /** Summary requests: input tokens (not in input_tokens_total), their cache split, and output (the digest). */
  summary_input_tokens: number;
  summary_cache_read_tokens: number;
  summary_cache_write_tokens: number;
  summary_output_tokens: number;
  /** Summary requests sent as a fresh conversation (no cache read: the seed's). */
  summary_fresh_requests: number;
  /** Summary requests larger than the window (the provider would refuse them). */
  summary_requests_over_window: number;
  /** Time inside the summary stand-in (digest + its pricing), excluded from prepare_ms. */
  summary_standin_ms: number;
  /** Compactions retention was measured on, and how many had items of each kind. */
  retention_compactions: number;
  retention_samples: Record<string, number>;
  /** Retention per kind of compaction (summary, snip, reactive); null for a kind that never happened. */
  retention_by_kind: Record<CompactionKind, Retention>;
  retention_compactions_by_kind: Record<CompactionKind, number>;
  /** Every compaction that removed messages: what its context kept of each kind, and a few lost items. */
  compactions: CompactionRecord[];
  violation_kinds: Record<string, number>;
  /** Requests the policy refused to send (lethe: InvariantError, OverWindowError, ThrashError); the replay sends the live context instead. */
  refused_requests: number;
  refused_kinds: Record<string, number>;
  /** Layers that acted, counted over requests. */
  acted: Record<string, number>;
  /** Slowest requests (prepare_ms, minimum over repetitions). */
  slowest: RequestInfo[];
}

export interface SessionMetrics {
  requests: number;
  summary_calls: number;
  summary_cost_usd: number;
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
  retention: RetentionAcc;
  byKind: Record<CompactionKind, RetentionAcc>;
}

const COMPACTION_KINDS: readonly CompactionKind[] = ["summary", "snip", "reactive"];

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
      after_ms_p50: 0,
      after_ms_p99: 0,
      prepare_and_after_ms_p99: 0,
      repetitions_identical: true,
      peak_input_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      output_tokens: 0,
      cost_requests_usd: 0,
      cost_summaries_usd: 0,
      summary_input_tokens: 0,
      summary_cache_read_tokens: 0,
      summary_cache_write_tokens: 0,
      summary_output_tokens: 0,
      summary_fresh_requests: 0,
      summary_requests_over_window: 0,
      summary_standin_ms: 0,
      retention_compactions: 0,
      retention_samples: {},
      retention_by_kind: { summary: null, snip: null, reactive: null },
      retention_compactions_by_kind: { summary: 0, snip: 0, reactive: 0 },
      compactions: [],
      violation_kinds: {},
      refused_requests: 0,
      refused_kinds: {},
      acted: {},
      slowest: [],
    },
    sessions: {},
    retention: newRetentionAcc(),
    byKind: { summary: newRetentionAcc(), snip: newRetentionAcc(), reactive: newRetentionAcc() },
  };
}

const bump = (r: Record<string, number>, k: string, by = 1) => {
  r[k] = (r[k] ?? 0) + by;
};

interface ReplayContext {
  exact: ExactCounter;
  /** Exact tokens of bare texts (summary texts, fresh summary requests), memoised: they repeat across repetitions. */
  textTokens: (text: string) => number;
  systemTokens: Map<Session, number>;
  /** Retention items per session and request (they depend on the recorded history only). */
  items: Map<string, RetentionItems>;
  onRequest?: (r: RequestRecord) => void;
  repetition: number;
}

/** The summary model stand-in of one session: digest + pricing, its time kept aside. */
interface SessionModel extends SummaryModel {
  /** Milliseconds spent inside summarize() so far. */
  excludedMs: number;
  calls: number;
  cost: number;
}

/** Digest counter: the estimator, as the engine's digest mode uses. */
const digestCounter = createTokenCounter();

/** Replay one session through one policy at one window; adds to `acc` unless it is null (warm-up). */
export async function replaySession(policy: Policy, session: Session, window: Window, dir: string, ctx: ReplayContext, acc: Acc | null): Promise<SessionMetrics> {
  const { exact } = ctx;
  const systemTokens = ctx.systemTokens.get(session) ?? countTokens(session.system);
  let now = 1_700_000_000_000;
  const s: SessionMetrics = {
    requests: 0,
    summary_calls: 0,
    summary_cost_usd: 0,
    over_window: 0,
    invariant_violations: 0,
    input_tokens: 0,
    peak_input_tokens: 0,
    cost_usd: 0,
    prepare_ms_max: 0,
  };

  /** The request the prompt cache holds (the last one sent: a request or a prefix-reusing summary request). */
  let prev: readonly Message[] | null = null;
  /** Exact tokens of the first k messages (plus the system prompt when a previous request exists). */
  const prefixTokens = (history: readonly Message[], k: number) => {
    let n = prev ? systemTokens : 0;
    for (let i = 0; i < k; i++) n += exact.message(history[i]!);
    return n;
  };

  const model: SessionModel = {
    excludedMs: 0,
    calls: 0,
    cost: 0,
    summarize(call: SummaryCall): string {
      const t0 = performance.now();
      const text = digest(call.history, { counter: digestCounter, maxTokens: call.maxTokens });
      let input: number;
      let read: number;
      if (call.request.kind === "prefix") {
        const msgs = call.request.messages;
        input = requestTokens(exact, systemTokens, msgs);
        read = prefixTokens(msgs, commonPrefixMessages(prev, msgs));
        prev = msgs;
      } else {
        input = MESSAGE_OVERHEAD + BLOCK_OVERHEAD + ctx.textTokens(call.request.text);
        read = 0;
      }
      const output = ctx.textTokens(text);
      const cost = callCost({ cacheRead: read, cacheWrite: input - read, input: 0, output });
      this.calls++;
      this.cost += cost;
      if (acc) {
        acc.d.summary_input_tokens += input;
        acc.d.summary_cache_read_tokens += read;
        acc.d.summary_cache_write_tokens += input - read;
        acc.d.summary_output_tokens += output;
        acc.d.cost_summaries_usd += cost;
        if (call.request.kind === "fresh") acc.d.summary_fresh_requests++;
        if (input > window.contextWindow) acc.d.summary_requests_over_window++;
      }
      this.excludedMs += performance.now() - t0;
      return text;
    },
  };

  // The recorded history so far feeds the file stand-in and the retention items.
  const files = createFileView();
  const run = policy.start({ session, systemTokens, window, dir, clock: () => now, model, readFile: (p) => files.read(p) });

  let live: Message[] = [];
  let pending: Message[] = [];
  for (let at = 0; at < session.messages.length; at++) {
    const reply = session.messages[at]!;
    if (reply.role !== "assistant") {
      pending.push(reply);
      files.add(reply);
      continue;
    }
    if (pending.length > 0) {
      run.arrive?.(pending);
      live = live.concat(pending);
      pending = [];
    }
    now += CLOCK_STEP_MS;
    const index = s.requests;
    const callsBefore = model.calls;
    const excludedBefore = model.excludedMs;

    // ---- timed: the policy's own per-request work (minus the time inside summary calls) ----
    let prepared: Awaited<ReturnType<typeof run.prepare>> | null = null;
    let refused: Error | null = null;
    const t0 = performance.now();
    try {
      const r = run.prepare(live);
      prepared = r instanceof Promise ? await r : r;
    } catch (e) {
      if (!(e instanceof InvariantError || e instanceof OverWindowError || e instanceof ThrashError)) throw e;
      refused = e;
    }
    const ms = Math.max(0, performance.now() - t0 - (model.excludedMs - excludedBefore));
    // ---- untimed from here ----

    const calls = model.calls - callsBefore;
    if (prepared && prepared.summaries !== calls) {
      throw new Error(`${policy.name} @ ${window.contextWindow}, ${session.id} #${index}: reported ${prepared.summaries} summary call(s), made ${calls}`);
    }
    let request: Message[];
    let violations: number;
    if (prepared) {
      request = prepared.history;
      const found = validate(request);
      violations = found.length;
      if (acc) for (const v of found) bump(acc.d.violation_kinds, v.kind);
      if (prepared.compaction && acc) {
        const key = `${session.id}#${at}`;
        let items = ctx.items.get(key);
        if (!items) {
          items = retentionItems(session.messages.slice(0, at), exact);
          ctx.items.set(key, items);
        }
        const text = contextText(request);
        const sample = measureRetentionText(items, text);
        addRetention(acc.retention, sample);
        addRetention(acc.byKind[prepared.compaction], sample);
        acc.d.compactions.push(compactionRecord(session.id, index, prepared.compaction, items, text));
        for (const [k, v] of Object.entries(sample)) if (v !== null) bump(acc.d.retention_samples, k);
      }
    } else {
      // The policy refused to send (lethe: a history that breaks an invariant, a request it knows
      // is over the window, thrash). The replay goes on with the unprepared history.
      request = live;
      violations = refused instanceof InvariantError ? refused.violations.length : validate(live).length;
      if (acc) {
        acc.d.refused_requests++;
        bump(acc.d.refused_kinds, refused!.constructor.name);
        if (refused instanceof InvariantError) for (const v of refused.violations) bump(acc.d.violation_kinds, v.kind);
      }
    }

    const input = requestTokens(exact, systemTokens, request);
    const read = prefixTokens(request, commonPrefixMessages(prev, request));
    const output = exact.message(reply);
    const requestCost = callCost({ cacheRead: read, cacheWrite: input - read, input: 0, output });
    const summaryCost = model.cost;
    model.cost = 0;

    s.requests++;
    s.summary_calls += calls;
    s.summary_cost_usd += summaryCost;
    s.invariant_violations += violations;
    s.input_tokens += input;
    s.peak_input_tokens = Math.max(s.peak_input_tokens, input);
    if (input > window.contextWindow) s.over_window++;
    s.cost_usd += requestCost + summaryCost;
    s.prepare_ms_max = Math.max(s.prepare_ms_max, ms);

    if (acc) {
      const info: RequestInfo = { session: session.id, request: index, messages: live.length, ms, after: 0, acted: prepared?.acted ?? [`refused:${refused!.constructor.name}`], input, cacheRead: read };
      acc.reqs.push(info);
      acc.d.cache_read_tokens += read;
      acc.d.cache_write_tokens += input - read;
      acc.d.output_tokens += output;
      acc.d.cost_requests_usd += requestCost;
      acc.d.summary_standin_ms += model.excludedMs - excludedBefore;
      for (const a of info.acted) bump(acc.d.acted, a);
      ctx.onRequest?.({ ...info, window: window.contextWindow, policy: policy.name, repetition: ctx.repetition, t0 });
    }

    const t1 = performance.now();
    run.observe(request, reply, { input_tokens: input, output_tokens: output });
    if (acc) acc.reqs[acc.reqs.length - 1]!.after = performance.now() - t1;
    prev = request;
    live = request.concat([reply]);
    files.add(reply);
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
  return JSON.stringify([m, sessions, acc.d.cache_read_tokens, acc.d.summary_input_tokens, acc.d.summary_output_tokens, acc.retention, acc.reqs.map((r) => r.acted)]);
}

/** Combine the repetitions: metrics of the first, prepare_ms = per-request minimum. */
function finish(accs: Acc[], keepSlowest: number): Acc {
  const acc = accs[0]!;
  const single = Float64Array.from(acc.reqs, (r) => r.ms).sort();
  acc.d.prepare_ms_p50_single_pass = round(percentile(single, 50), 4);
  acc.d.prepare_ms_p99_single_pass = round(percentile(single, 99), 4);
  const fp = fingerprint(acc);
  acc.d.repetitions_identical = accs.every((a) => a.reqs.length === acc.reqs.length && fingerprint(a) === fp);
  const total = acc.reqs.map((r) => r.ms + r.after);
  acc.reqs.forEach((r, i) => {
    for (const a of accs) {
      const o = a.reqs[i];
      r.ms = Math.min(r.ms, o?.ms ?? Infinity);
      r.after = Math.min(r.after, o?.after ?? Infinity);
      total[i] = Math.min(total[i]!, o ? o.ms + o.after : Infinity);
    }
  });
  const afters = Float64Array.from(acc.reqs, (r) => r.after).sort();
  acc.d.after_ms_p50 = round(percentile(afters, 50), 4);
  acc.d.after_ms_p99 = round(percentile(afters, 99), 4);
  acc.d.prepare_and_after_ms_p99 = round(percentile(Float64Array.from(total).sort(), 99), 4);
  for (const s of Object.values(acc.sessions)) s.prepare_ms_max = 0;
  for (const r of acc.reqs) {
    const s = acc.sessions[r.session]!;
    s.prepare_ms_max = Math.max(s.prepare_ms_max, r.ms);
  }
  const sorted = Float64Array.from(acc.reqs, (r) => r.ms).sort();
  acc.m.prepare_ms_p50 = round(percentile(sorted, 50), 4);
  acc.m.prepare_ms_p99 = round(percentile(sorted, 99), 4);
  acc.m.cost_usd = round(acc.m.cost_usd, 4);
  acc.m.retention = retentionResult(acc.retention);
  acc.d.retention_compactions = acc.retention.compactions;
  for (const k of COMPACTION_KINDS) {
    acc.d.retention_by_kind[k] = retentionResult(acc.byKind[k]);
    acc.d.retention_compactions_by_kind[k] = acc.byKind[k].compactions;
  }
  acc.d.summary_standin_ms = round(acc.d.summary_standin_ms, 1);
  acc.d.prepare_ms_mean = round(sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length), 4);
  acc.d.prepare_ms_max = round(sorted[sorted.length - 1] ?? 0, 4);
  acc.d.cost_requests_usd = round(acc.d.cost_requests_usd, 4);
  acc.d.cost_summaries_usd = round(acc.d.cost_summaries_usd, 4);
  acc.d.slowest = acc.reqs
    .slice()
    .sort((a, b) => b.ms - a.ms)
    .slice(0, keepSlowest)
    .map((r) => ({ ...r, ms: round(r.ms, 4), after: round(r.after, 4) }));
  for (const s of Object.values(acc.sessions)) {
    s.cost_usd = round(s.cost_usd, 4);
    s.summary_cost_usd = round(s.summary_cost_usd, 4);
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

/** Exact tokens of bare texts, memoised (bounded). */
function textTokenCache(): (text: string) => number {
  const memo = new Map<string, number>();
  let chars = 0;
  return (text) => {
    let n = memo.get(text);
    if (n === undefined) {
      n = countTokens(text);
      if (chars > 64_000_000) {
        memo.clear();
        chars = 0;
      }
      memo.set(text, n);
      chars += text.length;
    }
    return n;
  };
}

export async function runReplay(sessionsIn: readonly Session[], cfg: ReplayConfig): Promise<ReplayResult> {
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

  const ctx: ReplayContext = { exact, textTokens: textTokenCache(), systemTokens, items: new Map(), onRequest: cfg.onRequest, repetition: 0 };
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
      // The same paths in every repetition, so markers (and their tokens) are identical.
      const baseOf = (policy: Policy) => join(root, `${contextWindow}`, policy.name);
      const spent = new Map<string, number>();
      const time = async (policy: Policy, f: () => Promise<void>) => {
        const t1 = performance.now();
        await f();
        spent.set(policy.name, (spent.get(policy.name) ?? 0) + performance.now() - t1);
      };
      if (warm) {
        for (const policy of cfg.policies) {
          await time(policy, async () => {
            await replaySession(policy, warm, window, join(baseOf(policy), "warmup"), ctx, null);
            rmSync(baseOf(policy), { recursive: true, force: true });
          });
        }
      }
      // Repetitions interleave the policies (repetition 1 of each, then repetition 2, …), so that
      // load from other processes on a shared machine falls on every policy alike.
      const accs = new Map<string, Acc[]>(cfg.policies.map((p) => [p.name, []]));
      for (let rep = 0; rep < repeat; rep++) {
        ctx.repetition = rep;
        for (const policy of cfg.policies) {
          await time(policy, async () => {
            const acc = newAcc();
            for (const s of sessions) {
              const dir = join(baseOf(policy), resultFileName(s.id).replace(/\.txt$/, ""));
              mkdirSync(dir, { recursive: true });
              await replaySession(policy, s, window, dir, ctx, acc);
            }
            accs.get(policy.name)!.push(acc);
            rmSync(baseOf(policy), { recursive: true, force: true });
          });
        }
      }
      for (const policy of cfg.policies) {
        const acc = finish(accs.get(policy.name)!, keepSlowest);
        run.policies[policy.name] = acc.m;
        detail[policy.name] = acc.d;
        perSession[policy.name] = acc.sessions;
        log(`window ${contextWindow} ${policy.name}: ${repeat} × ${acc.m.requests} requests in ${((spent.get(policy.name) ?? 0) / 1000).toFixed(1)} s`);
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
