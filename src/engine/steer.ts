// Steering compaction from the host: a switch to another window (setWindow), a preview of what a
// compaction would do (changing nothing; applying it later needs no second model call), and undo
// of the last compaction (uncompact). What the engine removes it keeps, so it can offer both.
import { LetheError } from "../errors.ts";
import { LetheInputError, checkHistory } from "../messages/input.ts";
import { repair } from "../messages/invariants.ts";
import { fromServerStart } from "../messages/compaction.ts";
import { BLOCK_OVERHEAD, MESSAGE_OVERHEAD } from "../tokens/count.ts";
import type { Message } from "../messages/types.ts";
import { autoCompactThreshold } from "../compaction/config/config.ts";
import { prepare } from "../compaction/pipeline.ts";
import { boundaryDetails } from "../compaction/state/boundary.ts";
import { indexNewMessages } from "../compaction/state/prime.ts";
import { userMessagesOf } from "../compaction/state/retain.ts";
import { type SummaryDraft, samePrefix } from "../compaction/summary/compactor.ts";
import type { CompactPreviewEvent, SummaryKind, UncompactEvent, WindowSetEvent } from "../compaction/types.ts";
import type { CompactionPreview, PrepareCall, RequestReady } from "./contract.ts";
import { checked } from "./prepare.ts";
import { uncompactTranscript } from "../session/uncompact.ts";
import type { TranscriptEntry } from "../session/transcript-format.ts";
import { type EngineState, layerContext } from "./state.ts";

/** The last compaction cannot be undone: there is none to undo, or its history does not fit the window. */
export class UncompactError extends LetheError {
  constructor(message: string) {
    super("uncompact", message);
  }
}

const n = (x: number) => x.toLocaleString("en-US");

/** The refusal when the history from before the compaction would not fit under the threshold. */
export function tooLargeToUndo(tokens: number, threshold: number): UncompactError {
  return new UncompactError(`lethe: cannot undo the last compaction: the history before it is ${n(tokens)} tokens, over this window's threshold of ${n(threshold)} (a model with a larger window would hold it)`);
}

/** engine.setWindow: work to this window from the next request on (a smaller one compacts first). */
export function setWindow(s: EngineState, contextWindow: number, maxOutputTokens: number): void {
  const whole = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v);
  if (!whole(contextWindow) || contextWindow <= 0) throw new LetheInputError("setWindow", `contextWindow must be a positive whole number of tokens, got ${String(contextWindow)}`);
  if (!whole(maxOutputTokens) || maxOutputTokens < 0 || maxOutputTokens >= contextWindow) {
    throw new LetheInputError("setWindow", `maxOutputTokens must be a whole number of tokens ≥ 0 and below contextWindow (${contextWindow}), got ${String(maxOutputTokens)}`);
  }
  const previous = s.window.contextWindow;
  s.window.contextWindow = contextWindow;
  s.window.maxOutputTokens = maxOutputTokens;
  s.threshold = autoCompactThreshold(s.window, s.config);
  // The summary is written by the model that can still read the whole session: the largest
  // window since the last compaction. Back at (or above) it, there is nothing to fit.
  const from = Math.max(s.steer.switchedFrom ?? 0, previous);
  s.steer.switchedFrom = contextWindow < from ? from : undefined;
  const event: WindowSetEvent = { kind: "window_set", contextWindow, previous, maxOutputTokens, threshold: s.threshold };
  s.transcript?.appendEvent?.("window_set", { context_window: contextWindow, previous, max_output_tokens: maxOutputTokens, threshold: s.threshold });
  s.emit(event);
  // Between requests: it goes out with the next request's events.
  s.unreported.push(event);
}

/** The history a preview or an undo starts from: the server's part, repaired, through the cheap layers with copies of their state. */
function dryPrepared(s: EngineState, history: readonly Message[], call: PrepareCall): Message[] {
  const repaired = repair(fromServerStart(s.follower.resolve(history))).history;
  indexNewMessages(repaired, s.indexed, s.counter);
  return prepare(repaired, { ...layerContext(s, call), persisted: new Map(s.persisted), cleared: new Map(s.cleared) }).history;
}

/** A focus is the text of what the summary must keep: a string, or nothing. */
export function checkFocus(focus: unknown, where: string): void {
  if (focus !== undefined && typeof focus !== "string") throw new LetheInputError(where, `focus must be a string (what the summary must keep), got ${focus === null ? "null" : typeof focus}`);
}

/** Same messages, in order (a rewritten tool result's content aside), and as many. */
const sameHistory = (a: readonly Message[], b: readonly Message[]) => a.length === b.length && samePrefix(a, b);

/** engine.preview: what a compaction would do now; the engine's state and the host's history are left as they were. */
export async function previewCompaction(s: EngineState, history: readonly Message[], call: PrepareCall & { focus?: string }): Promise<CompactionPreview> {
  checkFocus(call.focus, "preview");
  const source = dryPrepared(s, history, call);
  const focus = call.focus?.trim() || undefined;
  const cached = s.steer.preview;
  // The same history and focus: the same answer, without paying for the summary again.
  if (cached && cached.focus === focus && sameHistory(cached.source, source)) return cached.preview;
  const plan = await s.compactor.plan(source, call, focus);
  const gains = plan.tokensAfter < plan.tokensBefore;
  const after = gains ? checked(repair(plan.built.history).history) : source;
  const details = boundaryDetails(source, after);
  const sizes = new Map<string, number>();
  for (const m of source) {
    if (typeof m.content === "string") continue;
    for (const b of m.content) if (b.type === "tool_result") sizes.set(b.tool_use_id, s.counter.messages([{ role: "user", content: [b] }]) - MESSAGE_OVERHEAD - BLOCK_OVERHEAD);
  }
  const preview: CompactionPreview = {
    history: after,
    summary: plan.draft.summary,
    ...(focus ? { focus } : {}),
    tokensBefore: plan.tokensBefore,
    tokensAfter: gains ? plan.tokensAfter : plan.tokensBefore,
    messagesBefore: source.length,
    messagesAfter: after.length,
    removed: { messages: details.removed.messages, toolResults: details.removed.tool_results.map((r) => ({ toolUseId: r.tool_use_id, ...(r.name ? { name: r.name } : {}), tokens: sizes.get(r.tool_use_id) ?? 0 })) },
    kept: {
      // Carried in the rebuild's tags, or kept as they were in the newest rounds.
      userMessages: details.carried.user_messages + (details.carried.latest_request ? 1 : 0) + userMessagesOf(after.filter((m) => source.includes(m))).length,
      readFiles: [...plan.built.ledger.read],
      modifiedFiles: [...plan.built.ledger.modified],
      restoredFiles: plan.built.restored,
      todos: details.carried.todos,
      verbatimMessages: after.filter((m) => source.includes(m)).length,
    },
    ...(gains ? {} : { skipped: `nothing to gain: the summary and what it keeps would be ${n(plan.tokensAfter)} tokens, the history is ${n(plan.tokensBefore)}` }),
  };
  s.steer.preview = { source, focus, draft: plan.draft, preview };
  const event: CompactPreviewEvent = { kind: "compact_preview", tokensBefore: preview.tokensBefore, tokensAfter: preview.tokensAfter, ...(focus ? { focus } : {}), ...(preview.skipped ? { skipped: preview.skipped } : {}) };
  s.transcript?.appendEvent?.("compact_preview", { tokens_before: event.tokensBefore, tokens_after: event.tokensAfter, ...(focus ? { focus } : {}), applied: false });
  s.emit(event);
  return preview;
}

/**
 * The draft a preview wrote, when `history` (prepared) is still what it previewed, or that plus
 * messages since (then the summary covers the previewed part and the rest is kept whole).
 */
export function previewDraft(s: EngineState, preview: CompactionPreview | undefined, history: readonly Message[]): SummaryDraft | undefined {
  const p = s.steer.preview;
  if (!preview || !p || p.preview !== preview || p.preview.skipped || !samePrefix(p.source, history)) return undefined;
  s.steer.preview = undefined;
  return history.length > p.source.length ? { ...p.draft, keepFrom: p.draft.keepFrom ?? p.source.length } : p.draft;
}

/** What a summary compaction replaced, for undo. */
export function rememberCompaction(s: EngineState, kind: SummaryKind, before: readonly Message[], after: readonly Message[]): void {
  s.steer.last = { kind, before: [...before], after: [...after] };
  s.steer.preview = undefined;
}

/**
 * What `input` holds beyond the compacted history `after`: the messages since. The user message
 * `after` ends with may have had the next prompt merged into it (roles alternate): that part came
 * since too. Undefined when `after` is no longer there as it was (a later compaction or snip).
 */
function since(after: readonly Message[], input: readonly Message[]): Message[] | undefined {
  const k = after.length - 1;
  if (k < 0) return input.slice();
  if (!samePrefix(after.slice(0, k), input) || input.length <= k) return undefined;
  const a = after[k]!;
  const b = input[k]!;
  if (samePrefix([a], [b])) return input.slice(after.length);
  if (a.role !== "user" || b.role !== "user" || !Array.isArray(a.content) || !Array.isArray(b.content) || b.content.length <= a.content.length) return undefined;
  if (!samePrefix([a], [{ role: "user", content: b.content.slice(0, a.content.length) }])) return undefined;
  return [{ role: "user", content: b.content.slice(a.content.length) }, ...input.slice(after.length)];
}

/** engine.uncompact: the history from before the last compaction, plus every message since, when it fits. */
export async function uncompact(s: EngineState, history: readonly Message[], call: PrepareCall = {}): Promise<RequestReady> {
  checkHistory(history, "uncompact: history");
  const fixed = call.fixedTokens ?? 0;
  const input = s.follower.resolve(history);
  let restored: Message[];
  let undone: SummaryKind;
  const last = s.steer.last;
  if (last) {
    const added = since(last.after, input);
    if (!added) throw new UncompactError("lethe: cannot undo the last compaction: the context has changed since (a later compaction or snip rewrote it)");
    restored = checked(repair([...last.before, ...added]).history);
    undone = last.kind;
  } else if (s.link?.conversation) {
    // Any engine on the conversation may undo: from what the store kept (syncIn recorded the host's new messages).
    const t = uncompactTranscript((await s.link.conversation.lines()).filter((l): l is TranscriptEntry => l.type !== "session"));
    if (!t) throw new UncompactError("lethe: nothing to undo: the conversation's last resume point is not a summary compaction");
    restored = checked(repair(t.history).history);
    undone = t.kind as SummaryKind;
  } else {
    throw new UncompactError("lethe: nothing to undo: no compaction since this engine started (or the last one was undone)");
  }
  const tokens = fixed + s.counter.messages(restored);
  if (tokens > s.threshold) {
    throw tooLargeToUndo(tokens, s.threshold);
  }
  s.steer.last = undefined;
  const before = fixed + s.counter.messages(input);
  const event: UncompactEvent = { kind: "uncompact", undone, tokensBefore: before, tokensAfter: tokens, messagesBefore: input.length, messagesAfter: restored.length };
  // A resume point: resuming the session starts from the restored history.
  s.transcript?.appendBoundary({ kind: "uncompact", tokens_before: before, tokens_after: tokens, history: restored, details: { ...event } });
  s.follower.remember(history, restored);
  s.emit(event);
  return { history: restored, events: [event], tokens, threshold: s.threshold };
}
