// The compaction gate every request passes: engine.beforeRequest on the run's history, with
// auto-compact "ask"'s question (once per crossing of the threshold, and again when the context
// no longer fits at all), and compaction on demand (the compact tool, an approved question).
import { type Engine, OverWindowError, type PrepareCall, type RequestReady } from "../engine/index.ts";
import type { CompactionEvent } from "../compaction/types.ts";
import type { Conversation } from "./conversation.ts";
import type { AgentEvent, AgentOptions } from "./types.ts";

/** What every request of a run carries besides the messages. */
export type RunShape = PrepareCall & { fixedTokens: number };

export interface CompactionGateOptions {
  engine: Engine;
  conversation: Conversation;
  shape: RunShape;
  emit: (e: AgentEvent) => void;
  /** Reports (and records) the compactions of a result. */
  note: (events: readonly CompactionEvent[], tokensAfter: number) => void;
  /** The run's options: `onEvent` (is anyone listening?) and `onCompactSuggested` (ask mode). */
  opts: Pick<AgentOptions, "onEvent" | "onCompactSuggested">;
}

export interface CompactionGate {
  /** beforeRequest, with the "ask" mode's question when the context is over the threshold. */
  beforeRequest(): Promise<RequestReady>;
  /** The agent was told to save its state before a summary (summary.saveFirst) and the summary has not run yet. */
  readonly saving: boolean;
  /** Compacts now: kind "manual" for the compact tool, "summarize" for an approved auto-compact. */
  compactNow(kind: "manual" | "summarize", focus?: string): Promise<RequestReady>;
}

/** What the agent is told when the context is about to be summarised and it may save its state first. */
export function saveFirstNotice(tokens: number, threshold: number): string {
  const n = (x: number) => x.toLocaleString("en-US");
  return (
    `[lethe] Your context is about to be compacted (${n(tokens)} tokens; it is summarised past ${n(threshold)}). Before that, save what you must keep ` +
    "and cannot re-read: update your todos, and write notes (decisions, findings, what is left) to a file you name here. Then go on with the task; " +
    "the summary runs before your next request, and the file stays on disk for you to read back."
  );
}

export function createCompactionGate(g: CompactionGateOptions): CompactionGate {
  const { engine, conversation, shape, emit, note, opts } = g;
  let askedAtCrossing = false;
  let saving = false;

  const compactNow = async (kind: "manual" | "summarize", focus?: string) => {
    emit({ type: "compacting", kind });
    // engine.compact's kind names who asked; an auto-compact the user approved is still "summarize".
    const r = await engine.compact(conversation.history, { ...shape, kind, ...(focus ? { focus } : {}) });
    note(r.events, r.tokens);
    conversation.history = r.history;
    askedAtCrossing = false;
    saving = false;
    return r;
  };

  const beforeRequest = async (): Promise<RequestReady> => {
    let ready;
    // The engine measures the request once and says when a summary starts (it takes a while).
    const base = opts.onEvent ? { ...shape, onSummaryStart: () => emit({ type: "compacting", kind: "summarize" }) } : shape;
    // summary.saveFirst: the first time over the threshold, one turn for the agent to save its state.
    const call = engine.config.summary.saveFirst && !saving ? { ...base, deferSummary: () => true } : base;
    try {
      ready = await engine.beforeRequest(conversation.history, call);
    } catch (e) {
      if (!(e instanceof OverWindowError) || !opts.onCompactSuggested) throw e;
      // Ask mode, and the context no longer fits at all: compacting is the only way on.
      if (!(await opts.onCompactSuggested({ tokens: e.tokens, threshold: engine.threshold, full: true }))) throw e;
      return compactNow("summarize");
    }
    note(ready.events, ready.tokens);
    conversation.history = ready.history;
    if (ready.events.some((e) => e.kind === "summarize")) saving = false;
    if (ready.events.some((e) => e.kind === "summary_deferred")) {
      saving = true;
      const text = saveFirstNotice(ready.tokens, ready.threshold);
      conversation.appendNote(text);
      return { ...ready, history: conversation.history, tokens: ready.tokens + engine.counter.text(text) + 3 };
    }
    const suggested = ready.events.some((e) => e.kind === "compact_suggested");
    if (!suggested) askedAtCrossing = false;
    if (suggested && opts.onCompactSuggested && !askedAtCrossing) {
      askedAtCrossing = true;
      if (await opts.onCompactSuggested({ tokens: ready.tokens, threshold: ready.threshold, full: false })) return compactNow("summarize");
    }
    return ready;
  };

  return {
    beforeRequest,
    compactNow,
    get saving() {
      return saving;
    },
  };
}
