// The compaction configuration's zod schema, built with zod's ES module: for the CLI's settings
// files, which embed it. The library does not import this module (rules.ts: `import "lethe"` loads
// no zod); the schema itself, and the one-line error, are defined in rules.ts.
import { z } from "zod";
import { configSchemas } from "./rules.ts";

/** Each section's settings, whole (the configuration types derive from them), and compactionConfigSchema: any subset of any section. */
export const { budgetSchema, snipSchema, microSchema, thresholdSchema, summarySchema, compactionConfigSchema } = configSchemas(z);

export { closest } from "../../errors.ts";
export { describeIssue } from "./rules.ts";
