// The expensive layer's orchestration: when to summarise, with what, and what to do when
// it fails. State that spans turns lives here (circuit breaker, thrash detection, the
// background pre-summary); the pieces it calls (summarize, digest, rebuild) are pure or
// take their side effects as arguments.
import { LetheError } from "../../errors.ts";
import type { Message } from "../../messages/types.ts";
import { type ModelClient, ModelError, type ToolDefinition } from "../../model/types.ts";
import type { TokenCounter } from "../../tokens/count.ts";
import { type CompactionConfig, autoCompactThreshold, rebuildBudgets } from "../config/config.ts";
import { digest } from "./digest.ts";
import { createProgressGuard } from "./progress.ts";

export { NoProgressError } from "./progress.ts";
import { rebuild } from "./rebuild.ts";
import { type SummarizeResult, summarize } from "./summarize.ts";
import type { CompactionEvent, ModelWindow, SummarizeEvent } from "../types.ts";

/** The model that writes summaries: a client and a model name. */
export interface Summarizer {
  client: ModelClient;
  model: string;
}

/** How full the context may get: the auto-compact threshold and the window (hooks get both). */
export interface ContextUsage {
  threshold: number;
  contextWindow: number;
}

/** PreCompact / PostCompact hooks: add instructions to, block, or observe a summary compaction. */
export interface CompactHooks {
  /** Before a compaction: may add instructions, or block it (with a reason). */
  preCompact?(info: { trigger: SummarizeEvent["kind"]; tokens: number; focus?: string } & ContextUsage): Promise<{ block?: string; instructions?: string } | void>;
  postCompact?(info: { trigger: SummarizeEvent["kind"]; tokensBefore: number; tokensAfter: number; summary: string } & ContextUsage): Promise<void>;
}

export interface CompactorOptions {
  window: ModelWindow;
  config: CompactionConfig;
  counter: TokenCounter;
  /** The model that writes summaries; without it (or with mode "digest") digest does. */
  summarizer?: Summarizer;
  /** "server": the summarizer's client compacts on its side (it must have serverCompaction). */
  mode?: "model" | "digest" | "server";
  hooks?: CompactHooks;
  archivePath?: string;
  readFile?: (path: string) => string | undefined;
  emit?: (e: CompactionEvent) => void;
  /**
   * Whether a summary costs money (the host's pricing knows the summarizer's model). The thrash
   * stop is about money: a free model (a local one) is never stopped by it; the no-progress
   * guard still stops a session going round in circles. Default: priced.
   */
  summariesCost?: () => boolean;
  /** A summary request refused as too long named the server's limit: the engine learns it. */
  onLimit?: (limitTokens: number) => void;
}

/** The request's context the summary call reuses (same system prompt and tools: prompt cache). */
export interface RequestShape {
  system?: string;
  tools?: readonly ToolDefinition[];
  fixedTokens?: number;
  signal?: AbortSignal;
  /**
   * Called before each summary model call is sent (the background one too): throw to keep it
   * from being sent (a spending limit). A background summary it refuses is simply not started.
   */
  beforeSummaryCall?: () => void;
  /**
   * The window of the model writing the summary, when larger than the engine's: after a switch to
   * a smaller model (engine.setWindow) the current one still reads the whole session.
   */
  summaryWindow?: number;
}

export interface CompactResult {
  history: Message[];
  event: SummarizeEvent;
  summary: string;
  /** A manual compaction that would not have made the context smaller: `history` is the input, unchanged. */
  skipped?: boolean;
}

/** Thrown when the context refills right after each compaction: stop instead of burning money. */
export class ThrashError extends LetheError {
  constructor(readonly repeats: number) {
    super("thrash", `lethe: the context filled up again within a few turns of each of the last ${repeats} compactions; stopping so the session does not keep paying for summaries. Start a new session or raise the context window.`);
  }
}

/** A PreCompact hook blocked the compaction (its reason is the message). */
export class CompactionBlockedError extends LetheError {
  constructor(message: string) {
    super("compaction_blocked", message);
  }
}

/** The event of a manual compaction that was skipped: nothing changed. */
function unchangedEvent(kind: SummarizeEvent["kind"], summarizer: SummarizeEvent["summarizer"], tokens: number, messages: number): SummarizeEvent {
  return { kind, summarizer, presummary: false, tokensBefore: tokens, tokensAfter: tokens, messagesBefore: messages, messagesAfter: messages, freedTokens: 0, restoredFiles: [], userMessagesKept: 0, droppedForOverflow: 0 };
}

/** Messages still there, in order, even if a cheap layer rewrote some of their content. */
export function samePrefix(prefix: readonly Message[], history: readonly Message[]): boolean {
  if (history.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    const a = prefix[i]!;
    const b = history[i]!;
    if (a === b) continue;
    if (a.role !== b.role || !Array.isArray(a.content) || !Array.isArray(b.content) || a.content.length !== b.content.length) return false;
    for (let j = 0; j < a.content.length; j++) {
      const x = a.content[j]!;
      const y = b.content[j]!;
      if (x.type !== y.type) return false;
      if (x.type === "tool_result" && x.tool_use_id !== (y as typeof x).tool_use_id) return false;
      if (x.type === "tool_use" && x.id !== (y as typeof x).id) return false;
      if (x.type === "text" && x.text !== (y as typeof x).text) return false;
    }
  }
  return true;
}

/** One summary call; every answered one is reported (summary_call), used or not: each is paid for. */
async function summaryCall(opts: CompactorOptions, maxTokens: number, emit: (e: CompactionEvent) => void, history: readonly Message[], shape: RequestShape, focus?: string) {
  const s = opts.summarizer!;
  shape.beforeSummaryCall?.();
  const r = await summarize({
    client: s.client,
    model: s.model,
    system: shape.system,
    tools: shape.tools,
    history,
    counter: opts.counter,
    maxTokens,
    focus,
    overflowRetries: opts.config.summary.overflowRetries,
    ...(opts.onLimit ? { onLimit: opts.onLimit } : {}),
    signal: shape.signal,
    contextWindow: Math.max(shape.summaryWindow ?? 0, opts.window.contextWindow),
    fixedTokens: shape.fixedTokens,
    server: opts.mode === "server", // the server's compaction block is the summary
  });
  emit({ kind: "summary_call", model: s.model, usage: r.usage, tokens: (shape.fixedTokens ?? 0) + opts.counter.messages(r.request.messages) });
  return r;
}

/** Whether the host lets a background summary be paid for now (its beforeSummaryCall does not throw). */
function mayPay(shape: RequestShape): boolean {
  try {
    shape.beforeSummaryCall?.();
    return true;
  } catch {
    return false;
  }
}

/** The rebuild's budgets for the window as it is now: it can shrink during a session (the engine learns the server's real one). */
function budgetsFollowing(window: ModelWindow, config: CompactionConfig): () => ReturnType<typeof rebuildBudgets> {
  let budgetsFor = { window: window.contextWindow, budgets: rebuildBudgets(window, config) };
  return () => {
    if (budgetsFor.window !== window.contextWindow) budgetsFor = { window: window.contextWindow, budgets: rebuildBudgets(window, config) };
    return budgetsFor.budgets;
  };
}

/** The breaker's count: consecutive summary calls that failed. */
interface Health {
  failures: number;
  breakerOpen: boolean;
}

/**
 * A summary of `history`, not yet applied: its text, who wrote it, and (from the background
 * pre-summary) the prefix it covers. engine.preview shows one; compact applies one without a new call.
 */
export interface SummaryDraft {
  summary: string;
  summarizer: SummarizeEvent["summarizer"];
  presummary: boolean;
  /** The summary covers history[0, keepFrom): what follows is kept whole. */
  keepFrom?: number;
  droppedForOverflow: number;
  server?: SummarizeResult["block"];
}

/** Writes the summary: the model (unless its breaker is open or the mode says digest), else the digest. */
async function draftSummary(opts: CompactorOptions, health: Health, emit: (e: CompactionEvent) => void, maxTokens: number, history: readonly Message[], shape: RequestShape, instructions: string | undefined): Promise<SummaryDraft> {
  if (opts.mode !== "digest" && opts.summarizer !== undefined && !health.breakerOpen) {
    try {
      const r = await summaryCall(opts, maxTokens, emit, history, shape, instructions);
      health.failures = 0;
      return { summary: r.summary, summarizer: r.block ? "server" : "model", presummary: false, droppedForOverflow: r.droppedForOverflow, ...(r.block ? { server: r.block } : {}) };
    } catch (e) {
      if (e instanceof ModelError && e.kind === "aborted") throw e;
      health.failures++;
      if (health.failures >= opts.config.summary.breakerFailures) health.breakerOpen = true;
      emit({ kind: "summary_failed", error: e instanceof Error ? e.message : String(e), consecutiveFailures: health.failures, breakerOpen: health.breakerOpen });
    }
  }
  return { summary: digest(history, { counter: opts.counter, maxTokens }), summarizer: "digest", presummary: false, droppedForOverflow: 0 };
}

/** A compaction worked out but not applied: the draft, the rebuilt history, and its size. */
export interface CompactionPlan {
  draft: SummaryDraft;
  built: ReturnType<typeof rebuild>;
  tokensBefore: number;
  tokensAfter: number;
  /** The instructions the summary was written with (focus, a hook's). */
  instructions?: string;
}

/** The summary machinery the engine uses (exposed for hosts that drive it directly). */
export function createCompactor(opts: CompactorOptions) {
  const { config, counter } = opts;
  const current = budgetsFollowing(opts.window, config);
  const emit = opts.emit ?? (() => {});
  const progress = createProgressGuard(() => config.summary.noProgressRepeats, emit);
  const skipped = (reason: string, kind: SummarizeEvent["kind"], summarizer: SummarizeEvent["summarizer"], tokens: number, history: readonly Message[], summary: string): CompactResult => {
    emit({ kind: "compact_skipped", tokens, reason });
    return { history: [...history], event: unchangedEvent(kind, summarizer, tokens, history.length), summary, skipped: true };
  };
  const health: Health = { failures: 0, breakerOpen: false };
  let turn = 0;
  let lastCompactionTurn = -Infinity;
  let thrash = 0;
  let pre: { prefix: Message[]; promise: Promise<{ summary: string } | { error: unknown }> } | null = null;

  const useModel = () => opts.mode !== "digest" && opts.summarizer !== undefined && !health.breakerOpen;
  const usage = (): ContextUsage => ({ threshold: autoCompactThreshold(opts.window, config), contextWindow: opts.window.contextWindow });
  const tokensOf = (history: readonly Message[], shape: RequestShape) => (shape.fixedTokens ?? 0) + counter.messages(history);
  /** The rebuilt history for a draft, and its size. */
  const plan = (history: readonly Message[], draft: SummaryDraft, trigger: SummarizeEvent["kind"], shape: RequestShape, instructions?: string): CompactionPlan => {
    const built = rebuild({ history, summary: draft.summary, kind: trigger, budgets: current(), counter, archivePath: opts.archivePath, readFile: opts.readFile, keepFrom: draft.keepFrom, server: draft.server });
    return { draft, built, tokensBefore: tokensOf(history, shape), tokensAfter: tokensOf(built.history, shape), ...(instructions ? { instructions } : {}) };
  };

  /** The background pre-summary, when it covers an unchanged prefix of `history` (taken either way). */
  async function takePre(history: readonly Message[], trigger: SummarizeEvent["kind"], instructions: string | undefined): Promise<SummaryDraft | undefined> {
    const p = pre;
    pre = null; // taken: a later compaction starts its own
    if (!p || instructions || trigger !== "summarize" || !samePrefix(p.prefix, history)) return undefined;
    const r = await p.promise;
    if (!("summary" in r)) return undefined;
    health.failures = 0;
    return { summary: r.summary, summarizer: "model", presummary: true, keepFrom: p.prefix.length, droppedForOverflow: 0 };
  }

  return {
    get breakerOpen() {
      return health.breakerOpen;
    },
    get failures() {
      return health.failures;
    },

    /** Resolves once no summary call is in flight (a background one is paid for: its line must be written). */
    async settled(): Promise<void> {
      await pre?.promise;
    },

    /** Call once per model request, with the prepared tokens: pre-summary and thrash bookkeeping. */
    observeTurn(history: readonly Message[], tokens: number, threshold: number, shape: RequestShape = {}) {
      turn++;
      if (tokens <= threshold && turn - lastCompactionTurn > config.summary.thrashTurns) thrash = 0;
      const share = config.summary.presummaryShare;
      if (share > 0 && useModel() && opts.mode !== "server" && config.summary.auto !== "off" && tokens >= share * threshold && tokens <= threshold && !pre) {
        if (!mayPay(shape)) return;
        const prefix = history.slice();
        emit({ kind: "presummary_started", tokens, threshold });
        pre = { prefix, promise: summaryCall(opts, current().summaryTokens, emit, prefix, shape).then((r) => ({ summary: r.summary }), (error) => ({ error })) };
      }
    },

    /**
     * What a manual compaction would do now, applied to nothing: the summary is written (a model
     * call, reported as summary_call: it is paid for) and the history rebuilt, with no event, hook,
     * thrash or progress bookkeeping. compact(…, { draft }) applies it without a second call.
     */
    async plan(history: readonly Message[], shape: RequestShape = {}, focus?: string): Promise<CompactionPlan> {
      return plan(history, await draftSummary(opts, health, emit, current().summaryTokens, history, shape, focus), "manual", shape, focus);
    },

    /**
     * Summarise and rebuild. `trigger` says why: auto (threshold), manual (/compact or the
     * compact tool, with an optional focus), reactive (the provider refused), subagent. `given`:
     * a draft written before (a preview the user approved) instead of a new summary call.
     */
    async compact(history: readonly Message[], trigger: SummarizeEvent["kind"], shape: RequestShape = {}, focus?: string, given?: SummaryDraft): Promise<CompactResult> {
      const tokensBefore = tokensOf(history, shape);
      if (trigger === "summarize" || trigger === "reactive") {
        thrash = turn - lastCompactionTurn <= config.summary.thrashTurns ? thrash + 1 : 0;
        if (thrash >= config.summary.thrashRepeats && (opts.summariesCost?.() ?? true)) throw new ThrashError(thrash);
        progress.check(tokensBefore);
        const wait = trigger === "summarize" ? progress.waiting(tokensBefore) : undefined;
        if (wait) return skipped(wait, trigger, "none", tokensBefore, history, "");
      }
      let instructions = focus;
      if (opts.hooks?.preCompact) {
        const r = await opts.hooks.preCompact({ trigger, tokens: tokensBefore, focus, ...usage() });
        if (r?.block) {
          emit({ kind: "compact_blocked", tokens: tokensBefore, reason: r.block });
          throw new CompactionBlockedError(`lethe: compaction blocked by the PreCompact hook: ${r.block}`);
        }
        if (r?.instructions && !given) instructions = instructions ? `${instructions}\n${r.instructions}` : r.instructions;
      }
      // A background summary of an unchanged prefix: swap without waiting for a new call.
      const draft = given ?? (await takePre(history, trigger, instructions)) ?? (await draftSummary(opts, health, emit, current().summaryTokens, history, shape, instructions));
      const { built, tokensAfter } = plan(history, draft, trigger, shape);
      if ((trigger === "manual" || trigger === "summarize") && tokensAfter >= tokensBefore) {
        // A compaction must never make the context larger: keep the history as it is, and say why.
        if (trigger === "summarize") progress.noGain(tokensBefore);
        return skipped(`nothing to gain: the summary and what it keeps would be ${tokensAfter.toLocaleString("en-US")} tokens, the history is ${tokensBefore.toLocaleString("en-US")}`, trigger, draft.summarizer, tokensBefore, history, draft.summary);
      }
      lastCompactionTurn = turn;
      const event: SummarizeEvent = {
        kind: trigger,
        summarizer: draft.summarizer,
        presummary: draft.presummary,
        tokensBefore,
        tokensAfter,
        messagesBefore: history.length,
        messagesAfter: built.history.length,
        freedTokens: tokensBefore - tokensAfter,
        restoredFiles: built.restored,
        userMessagesKept: built.userMessagesKept,
        droppedForOverflow: draft.droppedForOverflow,
        ledger: { read: [...built.ledger.read], modified: [...built.ledger.modified] },
        ...(instructions ? { focus: instructions } : {}),
        ...(given ? { fromPreview: true } : {}),
      };
      emit(event);
      progress.record(event, history);
      await opts.hooks?.postCompact?.({ trigger, tokensBefore, tokensAfter, summary: draft.summary, ...usage() });
      return { history: built.history, event, summary: draft.summary };
    },
  };
}

/** The summary side of the engine: threshold, background pre-summary, circuit breaker, thrash guard. */
export type Compactor = ReturnType<typeof createCompactor>;
