// compact: asks the loop to compact the conversation after this batch of tool results.
import { z } from "zod";
import type { Tool, ToolOutcome } from "./types.ts";

const schema = z.strictObject({
  focus: z.string().optional().describe("What the summary should keep in detail (e.g. the current task, open bugs, file paths)."),
});

export type CompactInput = z.infer<typeof schema>;

export const compactTool: Tool<CompactInput> = {
  name: "compact",
  description:
    "Compact the conversation: older turns are replaced by a summary (the archive stays readable with recall). Use it at a natural break when the context is " +
    "filling up with material you no longer need; focus says what to keep.",
  schema,
  readOnly: true,
  async run(input): Promise<ToolOutcome> {
    return {
      content: "Compaction requested; it runs after this batch of tool results.",
      compact: input.focus !== undefined && input.focus.trim() !== "" ? { focus: input.focus } : {},
    };
  },
};
