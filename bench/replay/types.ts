// Shared shapes of the replay benchmark (bench/replay.ts): sessions, windows, policies, and the
// stand-ins the harness gives every policy alike (the summary "model" and the file reader).
import type { Message } from "../../src/messages/types.ts";

/** One recorded conversation of the corpus (only what the replay needs). */
export interface Session {
  id: string;
  system: string;
  messages: Message[];
  /** Files the session's final diff changed (ground truth for the ledger), when known. */
  finalDiffFiles?: string[];
}

export interface Window {
  contextWindow: number;
  maxOutputTokens: number;
}

/** What the "provider" reports after each replayed request (exact o200k counts). */
export interface ReportedUsage {
  input_tokens: number;
  output_tokens: number;
}

/** How a summary request is sent, for pricing. */
export type SummaryRequestShape =
  /** The conversation as sent + the instruction: system prompt and messages, read from the prompt cache where shared with the previous request. */
  | { kind: "prefix"; messages: readonly Message[] }
  /** A fresh request (one user message, no system prompt): nothing is read from the cache. */
  | { kind: "fresh"; text: string };

export interface SummaryCall {
  /** The conversation the summary is written from (the digest's input). */
  history: readonly Message[];
  /** Cap on the summary, in tokens (the digest's maxTokens). */
  maxTokens: number;
  request: SummaryRequestShape;
}

/**
 * The summary model, offline: the digest (src/compaction/digest.ts) stands in for it, the same for
 * every policy. Each call is counted and priced as a model call by the harness, and the time spent
 * inside it is NOT part of prepare_ms (in production it is a model call, not the policy's work).
 */
export interface SummaryModel {
  summarize(call: SummaryCall): string;
}

export type CompactionKind = "summary" | "snip" | "reactive";

export interface PolicyPrepared {
  /** The history the policy sends (after a summary compaction: the rebuilt one). */
  history: Message[];
  /** Summary calls the policy made for this request (lethe: from its events). */
  summaries: number;
  /**
   * The compaction on this request that removed messages (a summary's rebuild, a snip, a reactive
   * shrink), or null: retention is measured on every one of them.
   */
  compaction: CompactionKind | null;
  /** Names of the layers that changed something this request (for the slow-request report). */
  acted: string[];
}

/** One policy driving one session at one window: it owns its counters and files. */
export interface PolicySession {
  /** The policy's auto-compact threshold, in its own units (tokens, estimated tokens, or characters). */
  readonly threshold: number;
  /**
   * The policy's per-request work, everything it does before sending (its layers, its counting,
   * its threshold check, and at a summary: building the request and the rebuilt history; the
   * summary itself is a SummaryModel call, excluded from the timing). Must not mutate `live` or its messages.
   */
  prepare(live: readonly Message[]): PolicyPrepared | Promise<PolicyPrepared>;
  /** Not timed: what the host does as messages arrive (lethe's agent writes each to its transcript). */
  arrive?(messages: readonly Message[]): void;
  /** The request was sent as `sent`; `reply` came back with `usage`. Not timed. */
  observe(sent: readonly Message[], reply: Message, usage: ReportedUsage): void;
}

export interface PolicyStart {
  session: Session;
  /** Exact o200k tokens of the session's system prompt. */
  systemTokens: number;
  window: Window;
  /** A fresh directory (under os.tmpdir()) for this policy/window/session's files. */
  dir: string;
  /** Simulated clock (ms), advanced by the harness before each request. */
  clock: () => number;
  /** The summary model stand-in (digest), counted and priced by the harness. */
  model: SummaryModel;
  /**
   * Reads a file for restoring after a summary. There is no disk in the replay: the latest content
   * of that path seen in the recorded history's read results so far, undefined if never seen.
   */
  readFile: (path: string) => string | undefined;
}

export interface Policy {
  name: string;
  /** One line for the JSON notes. */
  describe: string;
  start(s: PolicyStart): PolicySession;
}

/** Claude Code's auto-compact threshold: window − min(maxOutput, 20k) − 13k, 83.5% of the window where that is ≤ 0. */
export function claudeCodeThreshold(w: Window): number {
  const t = w.contextWindow - Math.min(w.maxOutputTokens, 20_000) - 13_000;
  return t > 0 ? t : Math.floor(0.835 * w.contextWindow);
}

/** Reply reserve per window used by the replay: min(32k, window / 4). */
export function maxOutputFor(contextWindow: number): number {
  return Math.min(32_000, Math.floor(contextWindow / 4));
}
