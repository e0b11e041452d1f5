// The compaction configuration's rules, with no zod loaded: the zod schema, defined against
// whichever zod its caller loaded (schema.ts passes the ES module, for the CLI's settings files), and
// beside it a quick hand-written check of the same rules. resolveConfig runs the quick check; only
// a config it refuses loads zod, whose first issue is the error (so `import "lethe"` and valid
// configs never load zod, and a bad config's message is zod's, as before: issue 25, item 8).
// A new setting goes in both: test/compaction/config.test.ts holds them to the same keys and verdicts.
import { createRequire } from "node:module";
import type { z } from "zod";
import { closest } from "../../errors.ts";

/**
 * The configuration's zod schemas, built with `zod`. Unknown keys are errors (a typo must not be
 * silently ignored), and so are values that would make a layer loop or misbehave. Each section's
 * settings are whole here: the configuration types derive from these (config.ts), so a setting and
 * its type cannot drift apart; what callers pass is any subset (compactionConfigSchema).
 */
export function configSchemas(zod: typeof z) {
  const int = () => zod.number().int();
  const share = () => zod.number().min(0).max(1);

  const budgetSchema = zod
    .object({
      /** Largest tool result kept inline, in characters. */
      perResultChars: int().positive(),
      /** Per-tool overrides of perResultChars (case-insensitive tool names). */
      perToolChars: zod.record(zod.string(), int().positive()),
      /** Largest total of tool results in one user message, in characters. */
      perMessageChars: int().positive(),
      /** Characters of the original kept in the marker as a preview. */
      previewChars: int().nonnegative(),
      /** No single result may take more than this share of the context window. */
      maxWindowShare: zod.number().gt(0).max(1),
    })
    .strict();

  const snipSchema = zod
    .object({
      enabled: zod.boolean(),
      /** Snip when the history has more messages than this… */
      triggerMessages: int().positive(),
      /** …down to this many (hysteresis: target < trigger, so it does not fire every turn). */
      targetMessages: int().positive(),
      /** Messages kept at the start (the original task). */
      keepHead: int().min(1),
      /**
       * Only snip under pressure: when the context is above this share of the auto-compact
       * threshold. Unset: the share a summary's rebuild may take (a quarter on small windows),
       * since below that a snip would leave less than a summary does. 0 snips on message count
       * (and the cache rule) alone.
       */
      minThresholdShare: share().optional(),
      /** …and never waits for more than this many tokens of context, whatever the window. */
      maxGateTokens: int().nonnegative(),
      /**
       * Snip when it pays for the prompt-cache rewrite it causes, not on message count alone: past
       * targetMessages, when the middle it would drop is worth more in reads until the next snip
       * than rewriting what it keeps (see snipPays in snip.ts). triggerMessages still snips anyway.
       */
      cacheAware: zod.boolean(),
    })
    .strict();

  const microSchema = zod
    .object({
      enabled: zod.boolean(),
      /** The newest N compactable results are always kept intact. */
      keepRecent: int().nonnegative(),
      /** Results smaller than this are not worth a placeholder. */
      minResultTokens: int().nonnegative(),
      /** Act only when clearing frees at least this much (batching keeps the prompt cache warm). */
      minSavingsTokens: int().nonnegative(),
      /** Tools whose results can be re-obtained (re-run, re-read), case-insensitive. */
      compactableTools: zod.array(zod.string()),
      /** Prompt-cache lifetime; after an idle gap longer than this, clear everything old. 0 disables. */
      idleClearMs: int().nonnegative(),
      /** Clear only when the reads saved over the coming turns outweigh rewriting the cached suffix. */
      cacheAware: zod.boolean(),
    })
    .strict();

  const thresholdSchema = zod
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

  const summarySchema = zod
    .object({
      /** Auto-compact when over the threshold; "off" never does; "ask" lets the host decide (event). */
      auto: zod.enum(["on", "off", "ask"]),
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
      /**
       * Before an auto-compact summary, give the agent one turn to save what it must keep (todos,
       * notes in a file it names); the summary runs after it. Off by default: the turn costs a request.
       */
      saveFirst: zod.boolean(),
    })
    .strict();

  /** What createEngine's `config` and the settings files take: any subset of any section. */
  const compactionConfigSchema = zod
    .object({
      budget: budgetSchema.partial(),
      snip: snipSchema.partial(),
      micro: microSchema.partial(),
      threshold: thresholdSchema.partial(),
      summary: summarySchema.partial(),
    })
    .partial()
    .strict();

  return { budgetSchema, snipSchema, microSchema, thresholdSchema, summarySchema, compactionConfigSchema };
}

// The quick check: the same rules as the schema, as predicates. It may refuse more than zod does
// (a class instance, a symbol key): zod then decides. It must never accept what zod refuses.
type Rule = (v: unknown) => boolean;

/** An object's own property names when it is a plain one (no symbol keys, nothing inherited that enumerates), else undefined. */
function plainKeys(v: unknown): string[] | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return undefined;
  if (Object.getOwnPropertySymbols(v).length > 0) return undefined;
  // A key a polluted prototype enumerates: zod's strict check sees it (for…in).
  for (const k in v) if (!Object.hasOwn(v, k)) return undefined;
  return Object.getOwnPropertyNames(v);
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v);
const positive: Rule = (v) => isInt(v) && v > 0;
const nonnegative: Rule = (v) => isInt(v) && v >= 0;
const atLeastOne: Rule = (v) => isInt(v) && v >= 1;
// Comparisons are false for NaN, which zod's number() refuses too.
const share: Rule = (v) => typeof v === "number" && v >= 0 && v <= 1;
const boolean: Rule = (v) => typeof v === "boolean";
const strings: Rule = (v) => {
  if (!Array.isArray(v)) return false;
  // By index, not every(): a hole is undefined to zod, not skipped.
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== "string") return false;
  return true;
};
const recordOf =
  (rule: Rule): Rule =>
  (v) =>
    plainKeys(v)?.every((k) => rule((v as Record<string, unknown>)[k])) ?? false;
/** An object with only these keys, each undefined (the subset leaves it out) or passing its rule. */
const section =
  (rules: Record<string, Rule>): Rule =>
  (v) => {
    const keys = plainKeys(v);
    if (!keys?.every((k) => Object.hasOwn(rules, k))) return false;
    return Object.entries(rules).every(([k, rule]) => {
      const x = (v as Record<string, unknown>)[k];
      return x === undefined || rule(x);
    });
  };

/** The quick check's rules, section by section, key by key (the schema's, in the same order). */
export const QUICK_RULES = {
  budget: { perResultChars: positive, perToolChars: recordOf(positive), perMessageChars: positive, previewChars: nonnegative, maxWindowShare: (v: unknown) => typeof v === "number" && v > 0 && v <= 1 },
  snip: { enabled: boolean, triggerMessages: positive, targetMessages: positive, keepHead: atLeastOne, minThresholdShare: share, maxGateTokens: nonnegative, cacheAware: boolean },
  micro: { enabled: boolean, keepRecent: nonnegative, minResultTokens: nonnegative, minSavingsTokens: nonnegative, compactableTools: strings, idleClearMs: nonnegative, cacheAware: boolean },
  threshold: { bufferTokens: nonnegative, bufferWindowShare: share, maxOutputReserve: nonnegative, tokens: positive },
  summary: {
    auto: (v: unknown) => v === "on" || v === "off" || v === "ask",
    maxOutputTokens: positive,
    userMessagesTokens: nonnegative,
    keepTailTokens: nonnegative,
    restoreFiles: nonnegative,
    restoreFileTokens: nonnegative,
    restoreTotalTokens: nonnegative,
    overflowRetries: nonnegative,
    breakerFailures: atLeastOne,
    presummaryShare: share,
    thrashTurns: nonnegative,
    thrashRepeats: atLeastOne,
    noProgressRepeats: nonnegative,
    saveFirst: boolean,
  },
} satisfies Record<string, Record<string, Rule>>;

/** True when `partial` passes the quick check: every key known, every value within its rule. */
export const quickCheck: Rule = section(Object.fromEntries(Object.entries(QUICK_RULES).map(([name, rules]) => [name, section(rules)])));

/** The schemas built with zod's CommonJS build, on first use: require() is synchronous, as resolveConfig is. */
let required: ReturnType<typeof configSchemas> | undefined;

/**
 * The first problem with a compaction config, in one line ("micro.keepRecnet: unknown key (did you
 * mean keepRecent?)"), or undefined when it has none. Loads zod only when the quick check refuses.
 */
export function configProblem(partial: unknown): string | undefined {
  if (quickCheck(partial)) return undefined;
  required ??= configSchemas((createRequire(import.meta.url)("zod") as typeof import("zod")).z);
  const schema = required.compactionConfigSchema;
  const checked = schema.safeParse(partial);
  return checked.success ? undefined : describeIssue(schema, checked.error);
}

/** The schema a zod object schema (possibly optional) stands for, or undefined. By its kind, not instanceof: the schema may come from either zod build. */
function objectShape(s: z.ZodType | undefined): Record<string, z.ZodType> | undefined {
  while (s?._zod.def.type === "optional") s = (s as z.ZodOptional).unwrap() as z.ZodType;
  return s?._zod.def.type === "object" ? ((s as z.ZodObject).shape as Record<string, z.ZodType>) : undefined;
}

/** The keys a zod object schema allows at `path` (for "did you mean"). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let s: z.ZodType | undefined = schema;
  for (const p of path) s = objectShape(s)?.[String(p)];
  return Object.keys(objectShape(s) ?? {});
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
