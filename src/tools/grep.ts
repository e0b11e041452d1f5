// grep: a regular expression over the workspace's text files. Pure JS; respects .gitignore like
// glob, skips binary and very large files, and bounds its output.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { z } from "zod";
import { sniffBuffer, SNIFF_BYTES } from "./filetype.ts";
import { compileFilter } from "./glob-match.ts";
import { searchRoot } from "./glob.ts";
import type { Tool, ToolOutcome } from "./types.ts";
import { type SafeRegex, compileSafe } from "../session/safe-regex.ts";
import { ToolError, cutLine, displayPath, fail, fmt } from "./util.ts";
import { type WalkEntry, namedSegments, walk } from "./walk.ts";

export const GREP_MAX_FILE_BYTES = 20 * 1024 * 1024;
export const GREP_DEFAULT_HEAD = { content: 300, files_with_matches: 200, count: 200 } as const;
export const GREP_MAX_OUTPUT_CHARS = 40_000;
export const GREP_MAX_LINE_CHARS = 500;
const MAX_CONTEXT = 20;

const schema = z.strictObject({
  pattern: z.string().min(1).describe("JavaScript regular expression, matched per line (e.g. \"function\\s+\\w+\", \"TODO|FIXME\"). A leading (?i) makes it case-insensitive."),
  path: z.string().optional().describe("File or folder to search, relative to the workspace root (default: the whole workspace)."),
  glob: z.string().optional().describe('Only files matching this glob, e.g. "*.ts" (file name) or "src/**/*.{ts,tsx}" (path under the searched folder).'),
  case_insensitive: z.boolean().optional().describe("Ignore case (default false)."),
  context: z.number().int().min(0).max(MAX_CONTEXT).optional().describe(`Lines of context before and after each match, content mode only (default 0, max ${MAX_CONTEXT}).`),
  output_mode: z
    .enum(["content", "files_with_matches", "count"])
    .optional()
    .describe('"files_with_matches" (default): paths of matching files, newest first; "content": matching lines as path:line:text; "count": matches per file.'),
  head_limit: z.number().int().positive().optional().describe("Show at most this many output lines/files (defaults: content 300, files 200, count 200)."),
});

export type GrepInput = z.infer<typeof schema>;

function readIfText(abs: string, size: number): string | null {
  const fd = openSync(abs, "r");
  try {
    const buf = Buffer.alloc(size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    const data = buf.subarray(0, off);
    if (sniffBuffer(data.subarray(0, SNIFF_BYTES)).binary) return null;
    return data.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The model's pattern on the linear-time engine (src/session/safe-regex.ts): `re` per line, `any` per file. */
function compile(pattern: string, caseInsensitive: boolean): { re: SafeRegex; any: SafeRegex } {
  try {
    return { re: compileSafe(pattern, { ignoreCase: caseInsensitive }), any: compileSafe(pattern, { ignoreCase: caseInsensitive, multiline: true }) };
  } catch (err) {
    throw new ToolError((err as Error).message);
  }
}

const tick = () => new Promise<void>((r) => setImmediate(r));

export const grepTool: Tool<GrepInput> = {
  name: "grep",
  description:
    "Search file contents with a regular expression (RE2 syntax, linear time: no lookaround or backreferences), line by line. Skips files ignored by .gitignore, .git/, node_modules/, binary files and files over 20 MB. " +
    'output_mode "files_with_matches" (default) lists matching files newest first; "content" shows path:line:text (with optional context lines); "count" gives matches per file. ' +
    `Output is bounded (head_limit; at most ${fmt(GREP_MAX_OUTPUT_CHARS)} chars, lines cut at ${GREP_MAX_LINE_CHARS} chars).`,
  schema,
  readOnly: true,
  async run(input, ctx): Promise<ToolOutcome> {
    const { re, any } = compile(input.pattern, input.case_insensitive ?? false);
    const mode = input.output_mode ?? "files_with_matches";
    const head = input.head_limit ?? GREP_DEFAULT_HEAD[mode];
    const context = mode === "content" ? (input.context ?? 0) : 0;
    const target = searchRoot(ctx, input.path);
    const root = target.root;

    const files: WalkEntry[] = [];
    let walkCapped = false;
    if (target.isFile) {
      files.push({ abs: target.abs, real: target.abs, rel: target.rel, name: target.rel.split("/").pop() ?? target.rel });
    } else {
      const filter = input.glob ? compileFilter(input.glob) : null;
      const stats = walk({
        workspace: root,
        root: target.abs,
        named: namedSegments(input.glob),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        onFile: (e) => {
          // A file the read rules keep from the model is not searched.
          if ((!filter || filter(e.rel, e.name)) && !ctx.readDenied?.(e.real)) files.push(e);
        },
      });
      walkCapped = stats.capped;
    }

    let skippedBinary = 0;
    let skippedLarge = 0;
    let totalMatches = 0;
    let stoppedEarly = false;
    const withMatches: { path: string; mtimeMs: number; count: number }[] = [];
    const out: string[] = [];
    let outChars = 0;
    let outFull = false;

    for (let f = 0; f < files.length; f++) {
      if (f % 64 === 63) {
        await tick();
        if (ctx.signal?.aborted) return fail("grep: cancelled.");
      }
      const e = files[f] as WalkEntry;
      let st;
      try {
        st = statSync(e.real);
      } catch {
        continue;
      }
      if (st.size > GREP_MAX_FILE_BYTES) {
        skippedLarge++;
        continue;
      }
      let text: string | null;
      try {
        text = readIfText(e.real, st.size);
      } catch {
        continue;
      }
      if (text === null) {
        skippedBinary++;
        continue;
      }
      // One pass over the whole file first: most files do not match at all.
      if (!any.test(text)) continue;
      const lines = text.split("\n");
      if (lines[lines.length - 1] === "") lines.pop();
      const hits: number[] = [];
      for (let i = 0; i < lines.length; i++) if (re.test(lines[i] as string)) hits.push(i);
      if (hits.length === 0) continue;
      totalMatches += hits.length;
      const path = displayPath(root, e.abs);
      withMatches.push({ path, mtimeMs: st.mtimeMs, count: hits.length });
      if (mode !== "content") continue;

      // Matching lines with context, in ranges merged like grep -C.
      const push = (line: string) => {
        if (out.length >= head || outChars + line.length + 1 > GREP_MAX_OUTPUT_CHARS) {
          outFull = true;
          return false;
        }
        out.push(line);
        outChars += line.length + 1;
        return true;
      };
      const hitSet = new Set(hits);
      let prevEnd = -1;
      for (const h of hits) {
        if (outFull) break;
        const from = Math.max(h - context, prevEnd + 1);
        const to = Math.min(lines.length - 1, h + context);
        if (from > to) continue;
        if (context > 0 && out.length > 0 && (prevEnd === -1 || from > prevEnd + 1)) push("--");
        for (let i = from; i <= to && !outFull; i++) {
          const text = cutLine((lines[i] as string).replace(/\r$/, ""), GREP_MAX_LINE_CHARS);
          push(`${path}${hitSet.has(i) ? ":" : "-"}${i + 1}${hitSet.has(i) ? ":" : "-"}${text}`);
        }
        prevEnd = Math.max(prevEnd, to);
      }
      if (outFull) {
        stoppedEarly = true;
        break;
      }
    }

    const notes: string[] = [];
    const skipped: string[] = [];
    if (skippedBinary) skipped.push(`${fmt(skippedBinary)} binary`);
    if (skippedLarge) skipped.push(`${fmt(skippedLarge)} over 20 MB`);
    if (walkCapped) notes.push("[the search stopped early in a very large tree; results may be incomplete — narrow the path]");
    if (skipped.length && (target.isFile || withMatches.length === 0)) notes.push(`[skipped files: ${skipped.join(", ")}]`);

    if (withMatches.length === 0) {
      if (target.isFile && skippedBinary) return fail(`${target.rel} is a binary file; grep searches text only.`);
      return { content: [`No matches for ${JSON.stringify(input.pattern)} in ${target.rel === "." ? "the workspace" : target.rel}${input.glob ? ` (files matching ${input.glob})` : ""}.`, ...notes].join("\n") };
    }

    let body: string[];
    if (mode === "content") {
      body = out;
      if (stoppedEarly) notes.push(`[output limit reached (${fmt(head)} lines / ${fmt(GREP_MAX_OUTPUT_CHARS)} chars); more matches may follow — narrow the pattern, path or glob, or raise head_limit]`);
    } else if (mode === "files_with_matches") {
      const sorted = withMatches.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : 1));
      body = sorted.slice(0, head).map((m) => m.path);
      if (sorted.length > head) notes.push(`[${fmt(sorted.length)} files match; showing ${fmt(head)}, most recently modified first]`);
    } else {
      body = withMatches.slice(0, head).map((m) => `${m.path}:${m.count}`);
      notes.push(`[${fmt(totalMatches)} matching lines in ${fmt(withMatches.length)} files${withMatches.length > head ? `; showing ${fmt(head)} files` : ""}]`);
    }
    return { content: [...body, ...notes].join("\n") };
  },
};
