// The compaction configuration's schema: one strict zod schema, with ranges, for the library
// (createEngine) and the CLI's settings files alike. Unknown keys are errors (a typo must not be
// silently ignored), and so are values that would make a layer loop or misbehave.
import { z } from "zod";

const int = () => z.number().int();
const share = () => z.number().min(0).max(1);

export const compactionConfigSchema = z
  .object({
    budget: z
      .object({
        perResultChars: int().positive(),
        perToolChars: z.record(z.string(), int().positive()),
        perMessageChars: int().positive(),
        previewChars: int().nonnegative(),
        maxWindowShare: z.number().gt(0).max(1),
      })
      .partial()
      .strict(),
    snip: z
      .object({ enabled: z.boolean(), triggerMessages: int().positive(), targetMessages: int().positive(), keepHead: int().min(1), minThresholdShare: share(), cacheAware: z.boolean() })
      .partial()
      .strict(),
    micro: z
      .object({
        enabled: z.boolean(),
        keepRecent: int().nonnegative(),
        minResultTokens: int().nonnegative(),
        minSavingsTokens: int().nonnegative(),
        compactableTools: z.array(z.string()),
        idleClearMs: int().nonnegative(),
        cacheAware: z.boolean(),
      })
      .partial()
      .strict(),
    threshold: z
      .object({ bufferTokens: int().nonnegative(), bufferWindowShare: share(), maxOutputReserve: int().nonnegative(), tokens: int().positive() })
      .partial()
      .strict(),
    summary: z
      .object({
        auto: z.enum(["on", "off", "ask"]),
        maxOutputTokens: int().positive(),
        userMessagesTokens: int().nonnegative(),
        keepTailTokens: int().nonnegative(),
        restoreFiles: int().nonnegative(),
        restoreFileTokens: int().nonnegative(),
        restoreTotalTokens: int().nonnegative(),
        overflowRetries: int().nonnegative(),
        breakerFailures: int().min(1),
        presummaryShare: share(),
        thrashTurns: int().nonnegative(),
        thrashRepeats: int().min(1),
      })
      .partial()
      .strict(),
  })
  .partial()
  .strict();

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

export function closest(word: string, options: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const o of options) {
    const dist = distance(word, o);
    if (dist < bestD) [best, bestD] = [o, dist];
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

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
