// context: how full the conversation's context is, so the model can compact at a natural break
// (the compact tool) before the threshold forces a summary mid-task.
import { z } from "zod";
import type { Tool, ToolOutcome } from "./types.ts";
import { ToolError } from "./util.ts";

const schema = z.strictObject({});

const n = (x: number) => x.toLocaleString("en-US");
const pct = (a: number, b: number) => `${Math.round((100 * a) / Math.max(1, b))}%`;

/** The line the context tool answers with. */
export function contextUsageLine(u: { tokens: number; threshold: number; contextWindow: number }): string {
  const left = u.threshold - u.tokens;
  return (
    `Context: ${n(u.tokens)} tokens of a ${n(u.contextWindow)}-token window (${pct(u.tokens, u.contextWindow)}). ` +
    (left > 0
      ? `Auto-compact summarises the older turns past ${n(u.threshold)} tokens: ${n(left)} to go (${pct(u.tokens, u.threshold)} of the way). `
      : `It is past the auto-compact threshold (${n(u.threshold)}): the older turns are summarised before the next request. `) +
    "To choose the moment yourself, call compact at a natural break, with a focus on what to keep."
  );
}

export const contextTool: Tool<z.infer<typeof schema>> = {
  name: "context",
  description: "How full your context is: its size in tokens, the window, and how far it is from the auto-compact threshold (when older turns get summarised).",
  schema,
  readOnly: true,
  async run(_input, ctx): Promise<ToolOutcome> {
    if (!ctx.contextUsage) throw new ToolError("context: this host does not report the context's size");
    return { content: contextUsageLine(ctx.contextUsage()) };
  },
};
