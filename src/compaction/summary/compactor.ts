// The expensive layer's orchestration: when to summarise, with what, and what to do when
// it fails. State that spans turns lives here (circuit breaker, thrash detection, the
// background pre-summary); the pieces it calls (summarize, digest, rebuild) are pure or
// take their side effects as arguments.
import { LetheError } from "../../errors.ts";
import type { Message } from "../../messages/types.ts";
import { type ModelClient, ModelError, type ToolDefinition } from "../../model/types.ts";
import type { TokenCounter } from "../../tokens/count.ts";
import { type CompactionConfig, rebuildBudgets } from "../config/config.ts";
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

/** PreCompact / PostCompact hooks: add instructions to, block, or observe a summary compaction. */
export interface CompactHooks {
  /** Before a compaction: may add instructions, or block it (with a reason). */
  preCompact?(info: { trigger: SummarizeEvent["kind"]; tokens: number; focus?: string }): Promise<{ block?: string; instructions?: string } | void>;
  postCompact?(info: { trigger: SummarizeEvent["kind"]; tokensBefore: number; tokensAfter: number; summary: string }): Promise<void>;
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
    contextWindow: opts.window.contextWindow,
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
  let failures = 0;
  let breakerOpen = false;
  let turn = 0;
  let lastCompactionTurn = -Infinity;
  let thrash = 0;
  let pre: { prefix: Message[]; promise: Promise<{ summary: string } | { error: unknown }> } | null = null;

  const useModel = () => opts.mode !== "digest" && opts.summarizer !== undefined && !breakerOpen;

  const modelSummary = (history: readonly Message[], shape: RequestShape, focus?: string) => summaryCall(opts, current().summaryTokens, emit, history, shape, focus);

  function recordFailure(e: unknown) {
    failures++;
    if (failures >= config.summary.breakerFailures) breakerOpen = true;
    emit({ kind: "summary_failed", error: e instanceof Error ? e.message : String(e), consecutiveFailures: failures, breakerOpen });
  }

  return {
    get breakerOpen() {
      return breakerOpen;
    },
    get failures() {
      return failures;
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
        pre = { prefix, promise: modelSummary(prefix, shape).then((r) => ({ summary: r.summary }), (error) => ({ error })) };
      }
    },

    /**
     * Summarise and rebuild. `trigger` says why: auto (threshold), manual (/compact or the
     * compact tool, with an optional focus), reactive (the provider refused), subagent.
     */
    async compact(history: readonly Message[], trigger: SummarizeEvent["kind"], shape: RequestShape = {}, focus?: string): Promise<CompactResult> {
      const tokensBefore = (shape.fixedTokens ?? 0) + counter.messages(history);
      if (trigger === "summarize" || trigger === "reactive") {
        thrash = turn - lastCompactionTurn <= config.summary.thrashTurns ? thrash + 1 : 0;
        if (thrash >= config.summary.thrashRepeats && (opts.summariesCost?.() ?? true)) throw new ThrashError(thrash);
        progress.check(tokensBefore);
        const wait = trigger === "summarize" ? progress.waiting(tokensBefore) : undefined;
        if (wait) return skipped(wait, trigger, "none", tokensBefore, history, "");
      }
      let instructions = focus;
      if (opts.hooks?.preCompact) {
        const r = await opts.hooks.preCompact({ trigger, tokens: tokensBefore, focus });
        if (r?.block) {
          emit({ kind: "compact_blocked", tokens: tokensBefore, reason: r.block });
          throw new CompactionBlockedError(`lethe: compaction blocked by the PreCompact hook: ${r.block}`);
        }
        if (r?.instructions) instructions = instructions ? `${instructions}\n${r.instructions}` : r.instructions;
      }

      let summary: string | undefined;
      let summarizer: SummarizeEvent["summarizer"] = "digest";
      let fromPre = false;
      let dropped = 0;
      let keepFrom: number | undefined;
      let server: SummarizeResult["block"];

      // A background summary of an unchanged prefix: swap without waiting for a new call.
      const p = pre;
      pre = null; // taken: a later compaction starts its own
      if (p && !instructions && trigger === "summarize" && samePrefix(p.prefix, history)) {
        const r = await p.promise;
        if ("summary" in r) {
          summary = r.summary;
          summarizer = "model";
          fromPre = true;
          keepFrom = p.prefix.length;
          failures = 0;
        }
      }
      if (summary === undefined && useModel()) {
        try {
          const r = await modelSummary(history, shape, instructions);
          ({ summary, block: server } = r);
          summarizer = server ? "server" : "model";
          dropped = r.droppedForOverflow;
          failures = 0;
        } catch (e) {
          if (e instanceof ModelError && e.kind === "aborted") throw e;
          recordFailure(e);
        }
      }
      if (summary === undefined) summary = digest(history, { counter, maxTokens: current().summaryTokens });

      const built = rebuild({ history, summary, kind: trigger, budgets: current(), counter, archivePath: opts.archivePath, readFile: opts.readFile, keepFrom, server });
      const tokensAfter = (shape.fixedTokens ?? 0) + counter.messages(built.history);
      if ((trigger === "manual" || trigger === "summarize") && tokensAfter >= tokensBefore) {
        // A compaction must never make the context larger: keep the history as it is, and say why.
        if (trigger === "summarize") progress.noGain(tokensBefore);
        return skipped(`nothing to gain: the summary and what it keeps would be ${tokensAfter.toLocaleString("en-US")} tokens, the history is ${tokensBefore.toLocaleString("en-US")}`, trigger, summarizer, tokensBefore, history, summary);
      }
      lastCompactionTurn = turn;
      const event: SummarizeEvent = {
        kind: trigger,
        summarizer,
        presummary: fromPre,
        tokensBefore,
        tokensAfter,
        messagesBefore: history.length,
        messagesAfter: built.history.length,
        freedTokens: tokensBefore - tokensAfter,
        restoredFiles: built.restored,
        userMessagesKept: built.userMessagesKept,
        droppedForOverflow: dropped,
        ledger: { read: [...built.ledger.read], modified: [...built.ledger.modified] },
        ...(instructions ? { focus: instructions } : {}),
      };
      emit(event);
      progress.record(event, history);
      await opts.hooks?.postCompact?.({ trigger, tokensBefore, tokensAfter, summary });
      return { history: built.history, event, summary };
    },
  };
}

/** The summary side of the engine: threshold, background pre-summary, circuit breaker, thrash guard. */
export type Compactor = ReturnType<typeof createCompactor>;
