// One base for every error lethe throws on purpose: a `code` a program can switch on, and the exit
// status the CLI maps it to. Each error still lives beside the code that throws it; the root
// exports them all.

/** What went wrong, as a LetheError says it. */
export type LetheErrorCode =
  /** A history, message or option that cannot be read (LetheInputError). */
  | "bad_input"
  /** A prepared history broke an invariant (InvariantError: a bug, never sent). */
  | "invariant"
  /** The request is known to be over the window and was not sent (OverWindowError). */
  | "over_window"
  /** The context refilled right after each of several compactions (ThrashError). */
  | "thrash"
  /** Summaries in a row left the same context: no progress (NoProgressError). */
  | "no_progress"
  /** The run's spending limit would be crossed by the next request (BudgetError). */
  | "max_budget"
  /** A PreCompact hook blocked the compaction (CompactionBlockedError). */
  | "compaction_blocked"
  /** The last compaction cannot be undone: none to undo, or its history does not fit (UncompactError). */
  | "uncompact"
  /** The model provider failed; see ModelError.kind. */
  | "model"
  /** A transcript written by a newer lethe (TranscriptVersionError). */
  | "transcript_version"
  /** Another process writes this session (SessionLockedError). */
  | "session_locked"
  | "session_not_found"
  /** The session folder cannot be written (SessionStorageError). */
  | "session_storage"
  /** A conversation store's address is not one lethe can use (StoreError). */
  | "store_url"
  /** The store's server cannot be reached in time (StoreError). */
  | "store_unreachable"
  /** The store refused the credentials (StoreError). */
  | "store_auth"
  /** The store was written by a newer lethe, or its schema is not lethe's (StoreError). */
  | "store_schema"
  /** Any other failure of the store (StoreError). */
  | "store_failed"
  /** CLI: a bad command line (exit 2). */
  | "usage"
  /** CLI: a bad settings file or environment. */
  | "config";

/** The CLI's exit status per code: 2 for a bad command line, 1 for everything else. */
export const EXIT_CODES: Readonly<Record<LetheErrorCode, number>> = {
  bad_input: 1,
  invariant: 1,
  over_window: 1,
  thrash: 1,
  no_progress: 1,
  max_budget: 1,
  compaction_blocked: 1,
  uncompact: 1,
  model: 1,
  transcript_version: 1,
  session_locked: 1,
  session_not_found: 1,
  session_storage: 1,
  store_url: 2,
  store_unreachable: 1,
  store_auth: 1,
  store_schema: 1,
  store_failed: 1,
  usage: 2,
  config: 1,
};

/** The base of every error lethe throws on purpose: a `code` to switch on, and the CLI's exit status for it. */
export class LetheError extends Error {
  readonly code: LetheErrorCode;
  constructor(code: LetheErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
  /** What the CLI exits with when this error ends a run. */
  get exitCode(): number {
    return EXIT_CODES[this.code];
  }
}

/** Whether `e` is one of lethe's own errors (and so has a `code`). */
export function isLetheError(e: unknown): e is LetheError {
  return e instanceof LetheError;
}

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1));
    }
  }
  return d[a.length]![b.length]!;
}

/** The option nearest to `word`, when it is near enough to be a typo ("did you mean"). */
export function closest(word: string, options: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const o of options) {
    const dist = distance(word, o);
    if (dist < bestD) [best, bestD] = [o, dist];
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}
