// Steering compaction from the CLI (issue 26): /model switches model mid-session, compacting first
// with the current model when the new window is smaller (and --continue --model <smaller> does the
// same at start); /compact --preview shows what a compaction would do and applies that very
// summary on yes; /uncompact puts back the history from before the last compaction.
import { reportCompactions } from "../agent/types.ts";
import type { CompactionRecord } from "../agent/types.ts";
import type { CompactionPreview } from "../engine/index.ts";
import { UncompactError, tooLargeToUndo } from "../engine/steer.ts";
import { resolveModelInfo } from "../model/models.ts";
import { REQUEST_EVENT } from "../session/transcript.ts";
import { loadTranscript } from "../session/transcript.ts";
import { lastLineWith } from "../session/transcript-scan.ts";
import { uncompactTranscript } from "../session/uncompact.ts";
import { DEFAULT_MAX_OUTPUT, type RunConfig } from "./config.ts";
import type { AgentSession } from "./session.ts";

/** A model's window and reply limit. */
export interface WindowChoice {
  contextWindow: number;
  maxOutputTokens: number;
  /** The model is in neither the known-model table nor the user's settings: the window is lethe's default guess. */
  guessed?: boolean;
}

const n = (x: number) => x.toLocaleString("en-US");

/** The window `model` runs with: the user's own (--context-window, settings) when given, else the known-model table's. */
export function windowFor(cfg: RunConfig, model: string): WindowChoice {
  if (cfg.windowSource === "flag" || cfg.windowSource === "settings") return { contextWindow: cfg.contextWindow, maxOutputTokens: cfg.maxOutputTokens };
  const info = resolveModelInfo(model);
  return { contextWindow: info.contextWindow, maxOutputTokens: Math.min(info.maxOutputTokens, DEFAULT_MAX_OUTPUT), ...(info.source === "default" ? { guessed: true } : {}) };
}

/** What a switch did. */
export interface ModelSwitch {
  from: string;
  to: string;
  previous: number;
  window: WindowChoice;
  /** The compaction that made the history fit the smaller window (with the model switched from). */
  compacted: CompactionRecord[];
  /** The model that wrote that summary. */
  summarizedBy: string;
  /** The context before the switch and after it (measured). */
  tokensBefore: number;
  tokensAfter: number;
}

/**
 * Switches the session to `to` with `window`. A smaller window than now: the history is compacted
 * first, by `by` (the model switched from, which can still read all of it), to fit the new one.
 * If that fails, the session stays on the old model and window, and the error is thrown.
 */
export async function switchModel(session: AgentSession, to: string, window: WindowChoice, by: string = session.model, signal?: AbortSignal): Promise<ModelSwitch> {
  const engine = session.engine;
  const previous = engine.contextWindow;
  const before = { contextWindow: previous, maxOutputTokens: session.maxOutputTokens };
  const from = session.model;
  const measure = () => (session.history.length ? engine.meter.measure(session.history, session.fixedTokens) : 0);
  const tokensBefore = measure();
  engine.setWindow(window.contextWindow, window.maxOutputTokens);
  let compacted: CompactionRecord[] = [];
  if (window.contextWindow < previous && tokensBefore > engine.threshold) {
    session.summaryModel = by;
    try {
      compacted = await compactSession(session, undefined, signal);
    } catch (e) {
      engine.setWindow(before.contextWindow, before.maxOutputTokens);
      throw e;
    } finally {
      session.summaryModel = undefined;
    }
  }
  session.model = to;
  session.maxOutputTokens = window.maxOutputTokens;
  return { from, to, previous, window, compacted, summarizedBy: by, tokensBefore, tokensAfter: measure() };
}

/** The model and window of the session's last answered request (its transcript's request lines), if any. */
export function lastRequestWindow(transcriptPath: string): { model: string; contextWindow: number } | undefined {
  let found: { model: string; contextWindow: number } | undefined;
  // From the end: the last request line is near it, and the transcript may be tens of MB.
  lastLineWith(transcriptPath, `"name":"${REQUEST_EVENT}"`, (line) => {
    try {
      const e = JSON.parse(line) as { type?: unknown; name?: unknown; model?: unknown; context_window?: unknown; summary?: unknown };
      if (e.type === "event" && e.name === REQUEST_EVENT && !e.summary && typeof e.model === "string" && typeof e.context_window === "number") found = { model: e.model, contextWindow: e.context_window };
    } catch {
      // a torn line, or the marker inside another line's text
    }
    return found !== undefined;
  });
  return found;
}

/**
 * --continue / --resume with a model whose window is smaller than the one the session last ran
 * with: compact first with that model, then go on with the new one (undefined: nothing to do).
 */
export async function fitResumed(session: AgentSession, signal?: AbortSignal): Promise<ModelSwitch | undefined> {
  const last = lastRequestWindow(session.transcript.path);
  if (!last || last.contextWindow <= session.engine.contextWindow || session.history.length === 0) return undefined;
  const target = { contextWindow: session.engine.contextWindow, maxOutputTokens: session.maxOutputTokens };
  // The engine was made for the new window: it goes back to the old one, then switches like /model.
  session.engine.setWindow(last.contextWindow, Math.min(target.maxOutputTokens, Math.floor(last.contextWindow / 2)));
  return switchModel(session, session.model, target, last.model, signal);
}

/** One line for a switch: what changed, and the compaction that made the history fit. */
export function switchLine(r: ModelSwitch): string {
  const compacted = r.compacted.length ? `, after ${r.summarizedBy} compacted the history to fit (${n(r.tokensBefore)} → ${n(r.tokensAfter)} tokens)` : "";
  return `${r.from === r.to ? `${r.to} has` : `switched to ${r.to}:`} a ${n(r.window.contextWindow)}-token window (was ${n(r.previous)})${compacted}.`;
}

/** Manual compaction (/compact [focus]); with `preview`, that preview's summary, with no new model call. */
export async function compactSession(session: AgentSession, focus: string | undefined, signal?: AbortSignal, preview?: CompactionPreview): Promise<CompactionRecord[]> {
  const r = await session.engine.compact(session.history, {
    ...session.requestShape(),
    kind: "manual",
    ...(focus?.trim() ? { focus: focus.trim() } : {}),
    ...(preview ? { preview } : {}),
    ...(signal ? { signal } : {}),
  });
  session.history = r.history;
  session.lastCompactSkipped = r.events.some((e) => e.kind === "compact_skipped");
  const out = reportCompactions(r.events, r.tokens, (e) => session.ui.onEvent?.(e));
  session.compactions.push(...out);
  await session.settle();
  return out;
}

/** What /compact --preview shows: changes nothing (its summary call is paid for, and reused on yes). */
export function previewSession(session: AgentSession, focus: string | undefined): Promise<CompactionPreview> {
  return session.engine.preview(session.history, { ...session.requestShape(), ...(focus?.trim() ? { focus: focus.trim() } : {}) });
}

/**
 * /uncompact: the history from before the last compaction, with everything since, when it fits.
 * From the engine's memory, or (after a resume) from what the transcript kept. Returns the line to show.
 */
export async function uncompactSession(session: AgentSession): Promise<string> {
  const shape = session.requestShape();
  const tokensBefore = session.engine.meter.measure(session.history, shape.fixedTokens);
  let restored;
  let undone: string;
  try {
    const r = await session.engine.uncompact(session.history, shape);
    restored = r.history;
    const ev = r.events[0];
    undone = ev && ev.kind === "uncompact" ? ev.undone : "compaction";
  } catch (e) {
    // Not in this process's memory (a resumed session): from the transcript.
    if (!(e instanceof UncompactError) || !/^lethe: nothing to undo/.test(e.message)) throw e;
    const t = uncompactTranscript(loadTranscript(session.transcript.path).entries);
    if (!t) throw e;
    const tokens = shape.fixedTokens + session.engine.counter.messages(t.history);
    if (tokens > session.engine.threshold) {
      throw tooLargeToUndo(tokens, session.engine.threshold);
    }
    session.transcript.appendBoundary({ kind: "uncompact", tokens_before: tokensBefore, tokens_after: tokens, history: t.history, details: { undone: t.kind, from: "transcript" } });
    restored = t.history;
    undone = t.kind;
  }
  const messagesBefore = session.history.length;
  session.history = restored;
  await session.settle();
  const after = shape.fixedTokens + session.engine.counter.messages(restored);
  return `Undid the last compaction (${undone}): ${n(tokensBefore)} → ${n(after)} tokens, ${n(messagesBefore)} → ${n(restored.length)} messages in context.`;
}

/** The preview as the REPL shows it. */
export function previewReport(p: CompactionPreview, summaryLines = 24): string {
  const pct = Math.round((100 * (p.tokensBefore - p.tokensAfter)) / Math.max(1, p.tokensBefore));
  if (p.skipped) return `Compaction preview: it would not help (${p.skipped}). Nothing changed.`;
  const biggest = [...p.removed.toolResults].sort((a, b) => b.tokens - a.tokens).slice(0, 5);
  const lines = [
    `Compaction preview${p.focus ? ` (focus: ${p.focus})` : ""}: ${n(p.tokensBefore)} → ${n(p.tokensAfter)} tokens (−${pct}%), ${n(p.messagesBefore)} → ${n(p.messagesAfter)} messages.`,
    `  removes: ${n(p.removed.messages)} messages, ${n(p.removed.toolResults.length)} tool results${biggest.length ? ` (largest: ${biggest.map((t) => `${t.name ?? "tool"} ${t.toolUseId} ${n(t.tokens)}`).join(", ")})` : ""}; all stay in the transcript for recall`,
    `  keeps:   ${n(p.kept.userMessages)} user messages, ${n(p.kept.verbatimMessages)} recent messages as they are, files ${n(p.kept.readFiles.length)} read / ${n(p.kept.modifiedFiles.length)} modified${p.kept.restoredFiles.length ? `, re-read: ${p.kept.restoredFiles.join(", ")}` : ""}${p.kept.todos ? ", the todos" : ""}`,
    "  summary:",
  ];
  const summary = p.summary.trim().split("\n");
  for (const l of summary.slice(0, summaryLines)) lines.push(`    ${l}`);
  if (summary.length > summaryLines) lines.push(`    … ${summary.length - summaryLines} more lines`);
  return lines.join("\n");
}
