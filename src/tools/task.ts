// task: hands a self-contained job to a subagent (its own context and compaction) and returns
// only its final text.
import { z } from "zod";
import type { Tool, ToolOutcome } from "./types.ts";
import { fail } from "./util.ts";

const schema = z.strictObject({
  prompt: z.string().min(1).describe("The full task for the subagent: it sees nothing of this conversation, so include every detail it needs and say what to report back."),
  description: z.string().optional().describe("A short (3–5 word) label for the task, shown to the user."),
});

export type TaskInput = z.infer<typeof schema>;

export const taskTool: Tool<TaskInput> = {
  name: "task",
  description:
    "Run a subagent on a self-contained task (searching a codebase, a focused investigation or change). It has the same tools, its own context and compaction, " +
    "and returns only its final answer, which keeps your context small. It does not see this conversation: put everything it needs in prompt.",
  schema,
  readOnly: false,
  async run(input, ctx): Promise<ToolOutcome> {
    if (!ctx.runSubagent) return fail("task: subagents are not available here; do the work directly with the other tools.");
    const text = await ctx.runSubagent(input.prompt, {
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return { content: text.trim() === "" ? "(the subagent finished without a final answer)" : text };
  },
};
