// Shared shapes of the replay benchmark (bench/replay.ts): sessions, windows, policies.
import type { Message } from "../../src/messages/types.ts";

/** One recorded conversation of the corpus (only what the replay needs). */
export interface Session {
  id: string;
  system: string;
  messages: Message[];
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

export interface PolicyPrepared {
  /** The history the policy would send. */
  history: Message[];
  /** The policy's own check says the summary layer must run. */
  overThreshold: boolean;
  /** Names of the layers that changed something this request (for the slow-request report). */
  acted: string[];
}

/** One policy driving one session at one window: it owns its counters and files. */
export interface PolicySession {
  /** The policy's auto-compact threshold, in its own units (tokens or estimated tokens). */
  readonly threshold: number;
  /**
   * The policy's per-request work, everything it does before sending (its layers, its counting,
   * its threshold check). This is what prepare_ms times. Must not mutate `live` or its messages.
   */
  prepare(live: readonly Message[]): PolicyPrepared;
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
}

export interface Policy {
  name: string;
  /** One line for the JSON notes. */
  describe: string;
  start(s: PolicyStart): PolicySession;
}

/** Claude Code's and the course's auto-compact threshold: window − min(maxOutput, 20k) − 13k, 83.5% of the window where that is ≤ 0. */
export function claudeCodeThreshold(w: Window): number {
  const t = w.contextWindow - Math.min(w.maxOutputTokens, 20_000) - 13_000;
  return t > 0 ? t : Math.floor(0.835 * w.contextWindow);
}

/** Reply reserve per window used by the replay: min(32k, window / 4). */
export function maxOutputFor(contextWindow: number): number {
  return Math.min(32_000, Math.floor(contextWindow / 4));
}
