// The settings files' schema and the Settings type derived from it. A leaf module: settings.ts
// (loading and merging) and trust.ts (which workspace keys need trust) both build on it.
import { z } from "zod";
import type { CompactionConfig, DeepPartial } from "../compaction/config/config.ts";
import type { HooksConfig } from "../hooks/compact-hooks.ts";
import { compactionConfigSchema } from "../compaction/config/schema.ts";
import { PERMISSION_MODES } from "./permissions.ts";

const positiveInt = z.number().int().positive();
const price = z.object({ input: z.number().nonnegative(), output: z.number().nonnegative(), cacheWrite: z.number().nonnegative().optional(), cacheRead: z.number().nonnegative().optional() }).strict();

/** One settings file (user or workspace), as written. */
export const settingsSchema = z
  .object({
    $schema: z.string().optional(),
    provider: z.enum(["anthropic", "openai", "openai-responses"]).optional(),
    model: z.string().min(1).optional(),
    fallbackModel: z.string().min(1).optional(),
    baseUrl: z.string().url().optional(),
    contextWindow: positiveInt.optional(),
    maxOutputTokens: positiveInt.optional(),
    autoCompact: z.enum(["on", "off", "ask"]).optional(),
    compactThreshold: z.number().positive().optional(),
    summarizer: z.enum(["model", "digest", "server"]).optional(),
    maxTurns: positiveInt.optional(),
    maxBudgetUsd: z.number().positive().finite().optional(),
    compaction: compactionConfigSchema.optional(),
    hooks: z.record(z.string(), z.unknown()).optional(),
    retry: z.object({ maxAttempts: positiveInt.optional(), baseMs: z.number().nonnegative().optional(), maxMs: z.number().nonnegative().optional() }).strict().optional(),
    pricing: z.record(z.string(), price).optional(),
    permissions: z
      .object({ allow: z.array(z.string().min(1)).optional(), deny: z.array(z.string().min(1)).optional(), defaultMode: z.enum(PERMISSION_MODES).optional() })
      .strict()
      .optional(),
    trustedFolders: z.array(z.string().min(1)).optional(),
    idleTimeout: z.number().nonnegative().optional(),
    reasoningContent: z.enum(["auto", "never", "tool-turns", "always"]).optional(),
    passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be environment variable names")).optional(),
  })
  .strict();

/** $ per million tokens, per model prefix. */
export type Pricing = z.infer<typeof price>;

/**
 * A settings file, as the schema above reads it (the type is derived from the schema, so the two
 * cannot drift), with `compaction` and `hooks` in their checked forms.
 */
export type Settings = Omit<z.infer<typeof settingsSchema>, "$schema" | "compaction" | "hooks"> & {
  /** Any subset of the engine's configuration (src/compaction/config.ts), checked key by key. */
  compaction?: DeepPartial<CompactionConfig>;
  hooks?: HooksConfig;
};
