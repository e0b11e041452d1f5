// edit_file: replaces an exact string in a file; it must match exactly once unless replace_all.
// The result shows a unified diff of the change. Atomic write, permission asked.
import { closeSync, readFileSync } from "node:fs";
import { z } from "zod";
import { replacementDiff } from "./diff.ts";
import { sniffFile } from "./filetype.ts";
import { statFile } from "./read-file.ts";
import type { Tool, ToolOutcome } from "./types.ts";
import { atomicWrite, fail, fmt, formatBytes, openConfined, refusal, workspaceRoot } from "./util.ts";

/** Files larger than this are not edited in memory. */
export const EDIT_MAX_BYTES = 10 * 1024 * 1024;

const schema = z.strictObject({
  path: z.string().min(1).describe("The file, relative to the workspace root (or absolute inside the workspace)."),
  old_string: z.string().describe("The exact text to replace (whitespace and indentation included; no line-number prefixes)."),
  new_string: z.string().describe("The text to put in its place."),
  replace_all: z.boolean().optional().describe("Replace every occurrence (default false: old_string must occur exactly once)."),
});

export type EditFileInput = z.infer<typeof schema>;

function positions(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) out.push(i);
  return out;
}

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

export const editFileTool: Tool<EditFileInput> = {
  name: "edit_file",
  description:
    "Replace an exact string in a file of the workspace. old_string must match the file exactly (whitespace included) and occur exactly once, " +
    "unless replace_all is true; include enough surrounding lines to make it unique. Returns a unified diff of the change. Use write_file to create files.",
  schema,
  readOnly: false,
  async run(input, ctx): Promise<ToolOutcome> {
    if (input.old_string === "") return fail("old_string is empty; give the exact text to replace (use write_file to create or overwrite a whole file).");
    if (input.old_string === input.new_string) return fail("old_string and new_string are identical; nothing to change.");
    const { abs, rel, st } = statFile(ctx, input.path);
    if (st.size > EDIT_MAX_BYTES) return fail(`${rel} is too large to edit (${formatBytes(st.size)}; limit ${formatBytes(EDIT_MAX_BYTES)}); use bash.`);
    const sniff = sniffFile(abs);
    if (sniff.binary) return fail(`${rel} is a binary file (${sniff.type}); edit_file only changes text files.`);
    // Read through a descriptor checked to be inside the workspace (a swapped symlink cannot redirect it).
    const root = workspaceRoot(ctx);
    const rfd = openConfined(abs, "r", root, rel);
    let before: string;
    try {
      before = readFileSync(rfd, "utf8");
    } finally {
      closeSync(rfd);
    }

    let oldStr = input.old_string;
    let newStr = input.new_string;
    let at = positions(before, oldStr);
    let crlf = false;
    if (at.length === 0 && before.includes("\r\n") && oldStr.includes("\n") && !oldStr.includes("\r\n")) {
      // The file has Windows line ends; the model wrote "\n".
      const o = oldStr.replace(/\n/g, "\r\n");
      const found = positions(before, o);
      if (found.length > 0) {
        oldStr = o;
        newStr = newStr.replace(/\r?\n/g, "\r\n");
        at = found;
        crlf = true;
      }
    }
    if (at.length === 0) {
      const numbered = /^\s*\d+\t/m.test(input.old_string) ? " It looks like it holds read_file line-number prefixes; leave those out." : "";
      const trimmed = input.old_string.trim();
      const loose = trimmed !== "" && trimmed !== input.old_string && before.includes(trimmed) ? " The text without its leading/trailing whitespace does occur: check indentation and line ends." : "";
      return fail(`old_string was not found in ${rel}; it must match exactly, whitespace included (read the file again to see its current text).${numbered}${loose}`);
    }
    if (at.length > 1 && !input.replace_all) {
      const lines = at.slice(0, 10).map((i) => lineOf(before, i));
      return fail(
        `old_string occurs ${at.length} times in ${rel} (lines ${lines.join(", ")}${at.length > 10 ? ", …" : ""}); include more surrounding context to make it unique, or set replace_all to true to replace every occurrence.`,
      );
    }

    let after = "";
    let p = 0;
    for (const i of at) {
      after += before.slice(p, i) + newStr;
      p = i + oldStr.length;
    }
    after += before.slice(p);

    const diff = replacementDiff(before, at, oldStr, newStr);
    const count = `${at.length} replacement${at.length === 1 ? "" : "s"}`;
    const refused = await refusal(ctx, "edit_file", `Edit ${rel} (${count})`, `The user denied permission to edit ${rel}.`, diff.text, abs);
    if (refused) return fail(refused);
    atomicWrite(abs, after, root);
    // The earlier read no longer shows the file; the next read_file returns it fresh.
    ctx.readState.delete(abs);
    const header = `Edited ${rel}: ${count} (−${fmt(diff.removed)} +${fmt(diff.added)} lines)${crlf ? "; matched with the file's CRLF line ends" : ""}.`;
    return { content: `${header}\n${diff.text}` };
  },
};
