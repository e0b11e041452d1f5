// Defaults (SPEC.md, "Core idea") and how they scale down on small windows.
import { LetheInputError } from "../../messages/input.ts";
import type { z } from "zod";
// Types only: schema.ts loads zod, which the library loads only to word a bad config (rules.ts).
import type { budgetSchema, microSchema, snipSchema, summarySchema, thresholdSchema } from "./schema.ts";
import { configProblem } from "./rules.ts";

/** The model's window (declared here, not in types.ts, so the two modules do not import each other). */
export interface ModelWindow {
  /** Total context window of the model, in tokens. */
  contextWindow: number;
  /** Tokens reserved for the model's reply. */
  maxOutputTokens: number;
}

/** Settings of the budget layer. */
export type BudgetConfig = z.infer<typeof budgetSchema>;
/** Settings of the snip layer. */
export type SnipConfig = z.infer<typeof snipSchema>;
/** Settings of the micro layer. */
export type MicroConfig = z.infer<typeof microSchema>;
/** How the auto-compact threshold is derived from the window. */
export type ThresholdConfig = z.infer<typeof thresholdSchema>;
/** Settings of summaries: when they run, their size, what the rebuild keeps. */
export type SummaryConfig = z.infer<typeof summarySchema>;

/** The whole compaction configuration (createEngine's `config` takes any subset); its types come from the schema. */
export interface CompactionConfig {
  budget: BudgetConfig;
  snip: SnipConfig;
  micro: MicroConfig;
  threshold: ThresholdConfig;
  summary: SummaryConfig;
}

/** The defaults of every compaction setting (README's configuration table). */
export const DEFAULT_CONFIG: CompactionConfig = {
  budget: {
    perResultChars: 50_000,
    perToolChars: { bash: 30_000, grep: 20_000 },
    perMessageChars: 200_000,
    previewChars: 2_000,
    maxWindowShare: 0.25,
  },
  snip: {
    enabled: true,
    // Each snip rewrites the cached prompt after the head (a cache write costs 12.5× a read), and
    // each message kept is read again by every later request until the next snip. So: keep few
    // (the head, the newest ~3 messages, and the carried note with the work record), and snip
    // when the middle is worth more in reads than the rewrite (cacheAware), at the latest past 60.
    // Measured at 32k against 30 → 10 on message count: 5% cheaper on the shared corpus and on a
    // second one of sessions lethe was not tuned on (bench:replay); retention unchanged.
    triggerMessages: 60,
    targetMessages: 6,
    keepHead: 3,
    // The pressure gate (snipGateTokens): snip waits until the context is larger than a summary
    // would leave it, and never past 16k tokens, NoLiMa's (ICML 2025) measure of a model's
    // effective length: at 16k no model it tested keeps 85% of its short-context score (GPT-4o,
    // the best, 89% at 8k, 82% at 16k). Past it a verbatim middle buys the model little and every
    // request pays to read it. minThresholdShare, unset, is the rebuild's share of the threshold.
    maxGateTokens: 16_000,
    cacheAware: true,
  },
  micro: {
    enabled: true,
    keepRecent: 3,
    // Below SPEC's 1k / 20k: measured on the replay corpus, most results are a few hundred
    // tokens, so at 1k/20k micro almost never acted. The cache-aware check below is what
    // protects the prompt cache now.
    minResultTokens: 200,
    minSavingsTokens: 5_000,
    compactableTools: [
      "bash", "shell", "read", "read_file", "grep", "glob", "ls", "find_file", "search_file",
      "search_dir", "open", "webfetch", "web_fetch", "websearch", "web_search", "bashoutput",
    ],
    // Anthropic's default ephemeral cache lives 5 minutes.
    idleClearMs: 5 * 60 * 1000,
    cacheAware: true,
  },
  threshold: {
    bufferTokens: 13_000,
    bufferWindowShare: 0.1,
    maxOutputReserve: 20_000,
  },
  summary: {
    auto: "on",
    maxOutputTokens: 20_000,
    userMessagesTokens: 20_000,
    keepTailTokens: 20_000,
    restoreFiles: 5,
    restoreFileTokens: 5_000,
    restoreTotalTokens: 50_000,
    overflowRetries: 3,
    breakerFailures: 3,
    presummaryShare: 0.8,
    thrashTurns: 2,
    thrashRepeats: 3,
    noProgressRepeats: 3,
    saveFirst: false,
  },
};

/** Any subset of a configuration object, at every depth. */
export type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends (infer U)[] ? U[] : T[K] extends object ? DeepPartial<T[K]> : T[K];
};

/** A setting that cannot be used: a LetheInputError (code bad_input) whose one line callers show as it is. */
const configError = (message: string) => new LetheInputError("config", "", message);

/** Configurations resolveConfig made (or adjusted with withThresholdTokens): the engine takes them as they are. */
const RESOLVED = new WeakSet<object>();

export function isResolvedConfig(c: unknown): c is CompactionConfig {
  return typeof c === "object" && c !== null && RESOLVED.has(c);
}

/** A resolved configuration with the auto-compact threshold set to `tokens` (a whole number the caller checked). */
export function withThresholdTokens(c: CompactionConfig, tokens: number): CompactionConfig {
  const out = { ...c, threshold: { ...c.threshold, tokens } };
  RESOLVED.add(out);
  return out;
}

/** Defaults overlaid with the caller's settings; validates ranges with a clear message. */
export function resolveConfig(partial: DeepPartial<CompactionConfig> = {}): CompactionConfig {
  if (isResolvedConfig(partial)) return partial;
  if (partial === null || typeof partial !== "object" || Array.isArray(partial)) throw configError(`lethe config: the compaction config must be an object, got ${partial === null ? "null" : Array.isArray(partial) ? "an array" : typeof partial}`);
  const problem = configProblem(partial);
  if (problem !== undefined) throw configError(`lethe config: ${problem}`);
  const c: CompactionConfig = {
    budget: { ...DEFAULT_CONFIG.budget, ...partial.budget, perToolChars: { ...DEFAULT_CONFIG.budget.perToolChars, ...(partial.budget?.perToolChars as Record<string, number> | undefined) } },
    snip: { ...DEFAULT_CONFIG.snip, ...partial.snip },
    // The list copied, as perToolChars is: the resolved config owns it (micro keeps its set per list).
    micro: { ...DEFAULT_CONFIG.micro, ...partial.micro, compactableTools: [...((partial.micro?.compactableTools as string[] | undefined) ?? DEFAULT_CONFIG.micro.compactableTools)] } as MicroConfig,
    threshold: { ...DEFAULT_CONFIG.threshold, ...partial.threshold },
    summary: { ...DEFAULT_CONFIG.summary, ...partial.summary },
  };
  const positive: [string, number][] = [
    ["budget.perResultChars", c.budget.perResultChars],
    ["budget.perMessageChars", c.budget.perMessageChars],
    ["snip.triggerMessages", c.snip.triggerMessages],
    ["snip.targetMessages", c.snip.targetMessages],
  ];
  for (const [name, v] of positive) {
    if (!Number.isFinite(v) || v <= 0) throw configError(`lethe config: ${name} must be a positive number (got ${v})`);
  }
  if (c.snip.targetMessages >= c.snip.triggerMessages) {
    throw configError(`lethe config: snip.targetMessages (${c.snip.targetMessages}) must be below snip.triggerMessages (${c.snip.triggerMessages})`);
  }
  if (c.snip.keepHead < 1 || c.snip.keepHead + 2 > c.snip.targetMessages) {
    throw configError(`lethe config: snip.keepHead must be at least 1 and leave room under snip.targetMessages`);
  }
  if (c.micro.keepRecent < 0) throw configError(`lethe config: micro.keepRecent must be ≥ 0`);
  RESOLVED.add(c);
  return c;
}

/**
 * Auto-compact threshold: window − min(maxOutput, 20k) − buffer, the buffer being 13k
 * on large windows and at most a tenth of the window on small ones (167k on 200k).
 */
export function autoCompactThreshold(w: ModelWindow, c: CompactionConfig = DEFAULT_CONFIG): number {
  if (c.threshold.tokens !== undefined) return Math.min(c.threshold.tokens, maxThreshold(w, c));
  const reserve = Math.min(w.maxOutputTokens, c.threshold.maxOutputReserve);
  const buffer = Math.min(c.threshold.bufferTokens, Math.floor(w.contextWindow * c.threshold.bufferWindowShare));
  return Math.max(Math.floor(w.contextWindow * 0.5), w.contextWindow - reserve - buffer);
}

/** A layer's threshold: the one its caller computed (the engine, once), else from its window and config. */
export function thresholdOf(ctx: { window: ModelWindow; config: CompactionConfig; threshold?: number }): number {
  return ctx.threshold ?? autoCompactThreshold(ctx.window, ctx.config);
}

/** The highest threshold that still leaves the reply its reserve inside the window. */
export function maxThreshold(w: ModelWindow, c: CompactionConfig = DEFAULT_CONFIG): number {
  return w.contextWindow - Math.min(w.maxOutputTokens, c.threshold.maxOutputReserve);
}

/** The per-result character limit for a tool (the small-window cap is resultLimitTokens'). */
export function resultLimitChars(toolName: string, c: BudgetConfig): number {
  const byTool = c.perToolChars[toolName.toLowerCase()];
  return byTool ?? c.perResultChars;
}

/** No single result may take more than maxWindowShare of the window, in tokens. */
export function resultLimitTokens(w: ModelWindow, c: BudgetConfig): number {
  return Math.floor(w.contextWindow * c.maxWindowShare);
}

/** micro's minimum savings, scaled down on small windows (a tenth of the window there). */
export function microMinSavings(w: ModelWindow, c: MicroConfig): number {
  return Math.min(c.minSavingsTokens, Math.floor(w.contextWindow * 0.1));
}

/**
 * The share of the threshold a summary's rebuild may take: a quarter on small windows, up to the
 * defaults' ~66% on a 200k window (Claude Code's own budgets sit there).
 */
export function rebuildShare(threshold: number): number {
  return 0.25 + 0.41 * Math.min(1, Math.max(0, (threshold - 40_000) / 127_000));
}

/**
 * The context (fixed part + history, in tokens) below which snip does not act: `minThresholdShare`
 * of the threshold (unset: the share a summary's rebuild may take, since lethe holds that much
 * enough to go on with), never more than `maxGateTokens`.
 */
export function snipGateTokens(threshold: number, c: CompactionConfig = DEFAULT_CONFIG): number {
  return Math.min((c.snip.minThresholdShare ?? rebuildShare(threshold)) * threshold, c.snip.maxGateTokens);
}

/** A rebuild budget: `n` when the defaults fit in `total`, else at most share `p` of it. */
const partOf = (n: number, p: number, fits: boolean, total: number): number => (fits ? n : Math.min(n, Math.floor(total * p)));

/**
 * The rebuild's budgets for this window. On a 200k model they are the defaults (summary
 * 20k, user messages 20k, restored files 50k); on small windows they shrink together to
 * about a quarter of the threshold, so a rebuild never re-triggers itself.
 */
export function rebuildBudgets(w: ModelWindow, c: CompactionConfig = DEFAULT_CONFIG) {
  const s = c.summary;
  const threshold = autoCompactThreshold(w, c);
  const full = s.maxOutputTokens + s.userMessagesTokens + s.keepTailTokens + s.restoreTotalTokens;
  const total = rebuildShare(threshold) * threshold;
  // When the defaults do not fit, split what there is. The user's own words get the
  // largest part: they are short and cannot be re-derived, unlike files (re-read) or
  // tool output (re-run).
  const fits = total >= full;
  const restoreTotalTokens = partOf(s.restoreTotalTokens, 0.1, fits, total);
  return {
    summaryTokens: partOf(s.maxOutputTokens, 0.25, fits, total),
    userMessagesTokens: partOf(s.userMessagesTokens, 0.55, fits, total),
    /** The latest request is kept whole up to this size (it is always kept). */
    latestRequestTokens: Math.max(s.userMessagesTokens, Math.floor(threshold * 0.25)),
    keepTailTokens: partOf(s.keepTailTokens, 0.1, fits, total),
    restoreFiles: s.restoreFiles,
    restoreFileTokens: Math.min(s.restoreFileTokens, restoreTotalTokens),
    restoreTotalTokens,
    ledgerTokens: Math.max(500, Math.floor(threshold * 0.05)),
    /** The work record (commands and outcomes): the oldest lines go first past this. */
    workTokens: Math.max(200, Math.floor(threshold * 0.05)),
  };
}
