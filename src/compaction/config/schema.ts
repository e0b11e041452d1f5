// The compaction configuration's schema: one strict zod schema, with ranges, for the library
// (createEngine) and the CLI's settings files alike. Unknown keys are errors (a typo must not be
// silently ignored), and so are values that would make a layer loop or misbehave.
import { z } from "zod";
import { closest } from "../../errors.ts";

const int = () => z.number().int();
const share = () => z.number().min(0).max(1);

// Each section's settings, whole: the configuration types are derived from these (config.ts), so a
// setting and its type cannot drift apart. What callers pass is any subset (the partial schema).

export const budgetSchema = z
  .object({
    /** Largest tool result kept inline, in characters. */
    perResultChars: int().positive(),
    /** Per-tool overrides of perResultChars (case-insensitive tool names). */
    perToolChars: z.record(z.string(), int().positive()),
    /** Largest total of tool results in one user message, in characters. */
    perMessageChars: int().positive(),
    /** Characters of the original kept in the marker as a preview. */
    previewChars: int().nonnegative(),
    /** No single result may take more than this share of the context window. */
    maxWindowShare: z.number().gt(0).max(1),
  })
  .strict();

export const snipSchema = z
  .object({
    enabled: z.boolean(),
    /** Snip when the history has more messages than this… */
    triggerMessages: int().positive(),
    /** …down to this many (hysteresis: target < trigger, so it does not fire every turn). */
    targetMessages: int().positive(),
    /** Messages kept at the start (the original task). */
    keepHead: int().min(1),
    /**
     * Only snip under pressure: when the context is above this share of the auto-compact
     * threshold. Dropping the middle of a history the window still holds easily loses
     * information for nothing. 0 snips on message count alone.
     */
    minThresholdShare: share(),
    /**
     * Snip when it pays for the prompt-cache rewrite it causes, not on message count alone: past
     * targetMessages, when the middle it would drop is worth more in reads until the next snip
     * than rewriting what it keeps (see snipPays in snip.ts). triggerMessages still snips anyway.
     */
    cacheAware: z.boolean(),
  })
  .strict();

export const microSchema = z
  .object({
    enabled: z.boolean(),
    /** The newest N compactable results are always kept intact. */
    keepRecent: int().nonnegative(),
    /** Results smaller than this are not worth a placeholder. */
    minResultTokens: int().nonnegative(),
    /** Act only when clearing frees at least this much (batching keeps the prompt cache warm). */
    minSavingsTokens: int().nonnegative(),
    /** Tools whose results can be re-obtained (re-run, re-read), case-insensitive. */
    compactableTools: z.array(z.string()),
    /** Prompt-cache lifetime; after an idle gap longer than this, clear everything old. 0 disables. */
    idleClearMs: int().nonnegative(),
    /** Clear only when the reads saved over the coming turns outweigh rewriting the cached suffix. */
    cacheAware: z.boolean(),
  })
  .strict();

export const thresholdSchema = z
  .object({
    /** Tokens kept free below the window beside the reply reserve (13k on large windows). */
    bufferTokens: int().nonnegative(),
    /** On small windows the buffer is at most this share of the window. */
    bufferWindowShare: share(),
    /** Reply reserve used for the threshold is min(maxOutputTokens, this). */
    maxOutputReserve: int().nonnegative(),
    /** An explicit auto-compact threshold in tokens (below the window); overrides the formula. */
    tokens: int().positive().optional(),
  })
  .strict();

export const summarySchema = z
  .object({
    /** Auto-compact when over the threshold; "off" never does; "ask" lets the host decide (event). */
    auto: z.enum(["on", "off", "ask"]),
    /** Cap on the summary's output. */
    maxOutputTokens: int().positive(),
    /** The user's own messages kept verbatim (newest first; the latest always). */
    userMessagesTokens: int().nonnegative(),
    /** Newest whole rounds kept verbatim after the summary. */
    keepTailTokens: int().nonnegative(),
    /** Files recently read, restored from disk after a summary: how many, … */
    restoreFiles: int().nonnegative(),
    /** … at most this many tokens each, … */
    restoreFileTokens: int().nonnegative(),
    /** … and this many in all. */
    restoreTotalTokens: int().nonnegative(),
    /** Tries after the summary request itself is too long (dropping the oldest rounds). */
    overflowRetries: int().nonnegative(),
    /** Consecutive summary failures before the circuit breaker opens (then: digest). */
    breakerFailures: int().min(1),
    /** Start the summary in the background from this share of the threshold. 0 disables. */
    presummaryShare: share(),
    /** Thrash: the context refills within this many turns of a compaction… */
    thrashTurns: int().nonnegative(),
    /** …this many times in a row: stop instead of burning money. */
    thrashRepeats: int().min(1),
    /** No progress: this many summaries in a row leave the same context (same size after, or the same summary): stop. 0 disables. */
    noProgressRepeats: int().nonnegative(),
  })
  .strict();

/** What createEngine's `config` and the settings files take: any subset of any section. */
export const compactionConfigSchema = z
  .object({
    budget: budgetSchema.partial(),
    snip: snipSchema.partial(),
    micro: microSchema.partial(),
    threshold: thresholdSchema.partial(),
    summary: summarySchema.partial(),
  })
  .partial()
  .strict();

export { closest } from "../../errors.ts";

/** The keys a zod object schema allows at `path` (for "did you mean"). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let s: z.ZodType | undefined = schema;
  for (const p of path) {
    while (s instanceof z.ZodOptional) s = s.unwrap() as z.ZodType;
    s = s instanceof z.ZodObject ? (s.shape as Record<string, z.ZodType>)[String(p)] : undefined;
    if (!s) return [];
  }
  while (s instanceof z.ZodOptional) s = s.unwrap() as z.ZodType;
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

/** One line for the first problem: "micro.keepRecnet: unknown key (did you mean keepRecent?)". */
export function describeIssue(schema: z.ZodType, error: z.ZodError, prefix: readonly PropertyKey[] = []): string {
  const issue = error.issues[0]!;
  const path = [...prefix, ...issue.path].map(String);
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0]!;
    // A 1 MB key is neither echoed whole nor compared letter by letter (edit distance).
    if (key.length > 60) return `${[...path, `${key.slice(0, 40)}…`].join(".")}: unknown key (${key.length.toLocaleString("en-US")} chars)`;
    const hint = closest(key, keysAt(schema, issue.path));
    return `${[...path, key].join(".")}: unknown key${hint ? ` (did you mean ${hint}?)` : ""}`;
  }
  return `${path.length ? path.join(".") : "(top level)"}: ${issue.message.replace(/\s+/g, " ")}`;
}
