// write_file: creates or replaces a whole file (parent folders created, atomic rename), after
// asking permission. Stays inside the workspace.
import { statSync } from "node:fs";
import { z } from "zod";
import type { Tool, ToolOutcome } from "./types.ts";
import { ToolError, atomicWrite, countLines, fail, fmt, refusal, resolveInWorkspace } from "./util.ts";

const PREVIEW_CHARS = 2_000;

const schema = z.strictObject({
  path: z.string().min(1).describe("The file, relative to the workspace root (or absolute inside the workspace)."),
  content: z.string().describe("The complete new content of the file."),
});

export type WriteFileInput = z.infer<typeof schema>;

export const writeFileTool: Tool<WriteFileInput> = {
  name: "write_file",
  description:
    "Create a file or replace its whole content (parent folders are created; the write is atomic). Paths must stay inside the workspace. " +
    "To change part of an existing file, prefer edit_file.",
  schema,
  readOnly: false,
  async run(input, ctx): Promise<ToolOutcome> {
    const { abs, rel, root } = resolveInWorkspace(ctx, input.path);
    let before: { size: number } | null = null;
    try {
      const st = statSync(abs);
      if (st.isDirectory()) throw new ToolError(`${rel} is a directory; give a file path`);
      if (!st.isFile()) throw new ToolError(`${rel} is not a regular file`);
      before = { size: st.size };
    } catch (err) {
      if (err instanceof ToolError) throw err;
    }
    const bytes = Buffer.byteLength(input.content, "utf8");
    const lines = countLines(input.content);
    const summary = `${before ? "Overwrite" : "Create"} ${rel} (${fmt(lines)} lines, ${fmt(bytes)} bytes)`;
    const preview = input.content.length > PREVIEW_CHARS ? `${input.content.slice(0, PREVIEW_CHARS)}\n… [${fmt(input.content.length - PREVIEW_CHARS)} more chars]` : input.content;
    const refused = await refusal(ctx, "write_file", summary, `The user denied permission to write ${rel}.`, preview, abs);
    if (refused) return fail(refused);
    atomicWrite(abs, input.content, root);
    const st = statSync(abs);
    // What the model just wrote is what a full read would show.
    ctx.readState.set(abs, { mtimeMs: st.mtimeMs, size: st.size });
    return {
      content: `Wrote ${fmt(lines)} lines (${fmt(bytes)} bytes) to ${rel}${before ? ` (replaced the previous ${fmt(before.size)} bytes)` : " (new file)"}.`,
    };
  },
};
