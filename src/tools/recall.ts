// recall: reads back what left the context (the session transcript and saved tool results), by
// query or by id, in bounded slices. Wraps src/session/recall.ts.
import { z } from "zod";
import { RECALL_MAX_CHARS, recall } from "../session/recall.ts";
import type { Tool, ToolOutcome } from "./types.ts";
import { fail } from "./util.ts";

const schema = z.strictObject({
  query: z.string().optional().describe("Case-insensitive text to search for, or a /regex/ (RE2 syntax: no lookaround or backreferences); returns hits newest first, each with the id to read it whole."),
  id: z.string().optional().describe("A tool_use id or message uuid (from a search hit or a compaction note): returns that item in slices."),
  offset: z.number().int().min(0).optional().describe("Where the slice starts (0-based; chars, or lines with unit \"lines\")."),
  limit: z.number().int().positive().optional().describe(`Slice length (at most ${RECALL_MAX_CHARS.toLocaleString("en-US")} chars).`),
  unit: z.enum(["chars", "lines"]).optional().describe('Unit of offset and limit (default "chars").'),
});

export type RecallInput = z.infer<typeof schema>;

export const recallTool: Tool<RecallInput> = {
  name: "recall",
  description:
    "Read back archived content of this session that is no longer in your context: earlier messages and full tool results, including ones compaction removed. " +
    `Search with query, or read an item by id in slices of at most ${RECALL_MAX_CHARS.toLocaleString("en-US")} chars (the answer says how to get the next slice).`,
  schema,
  readOnly: true,
  async run(input, ctx): Promise<ToolOutcome> {
    if (!ctx.sessionDir) return fail("recall: this run keeps no session archive, so there is nothing to recall.");
    const r = recall(ctx.sessionDir, {
      ...(input.id !== undefined ? { id: input.id } : {}),
      ...(input.query !== undefined ? { query: input.query } : {}),
      ...(input.offset !== undefined ? { offset: input.offset } : {}),
      ...(input.limit !== undefined ? { limit: input.limit } : {}),
      ...(input.unit !== undefined ? { unit: input.unit } : {}),
    });
    return r.kind === "error" ? { content: r.text, isError: true } : { content: r.text };
  },
};
