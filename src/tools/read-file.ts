// read_file: a text file with line numbers (cat -n style), in bounded slices; binary files and
// images are refused; a repeated read of an unchanged file returns a short stub.
import { closeSync, readSync, readdirSync, statSync, type Stats } from "node:fs";
import { basename, dirname, extname } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { z } from "zod";
import { imageTypeByExtension, sniffFile } from "./filetype.ts";
import type { Tool, ToolContext, ToolOutcome } from "./types.ts";
import { ToolError, fail, fmt, formatBytes, openConfined, resolveInWorkspace, workspaceRoot } from "./util.ts";

export const READ_DEFAULT_LIMIT = 2_000;
export const READ_MAX_LINE_CHARS = 2_000;
/** Bound on the text one call returns. */
export const READ_MAX_OUTPUT_CHARS = 100_000;
/** Files up to this size get an exact line total. */
const COUNT_ALL_LINES_BYTES = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;

const schema = z.strictObject({
  path: z.string().min(1).describe("The file, relative to the workspace root (or absolute inside the workspace)."),
  offset: z.number().int().min(0).optional().describe("Line number to start at (1-based; default 1)."),
  limit: z.number().int().positive().optional().describe(`How many lines to read (default ${READ_DEFAULT_LIMIT}).`),
});

export type ReadFileInput = z.infer<typeof schema>;

/** "Did you mean" candidates for a missing file: same name in another case, or same stem. */
function similarNames(abs: string): string[] {
  try {
    const want = basename(abs).toLowerCase();
    const stem = basename(abs, extname(abs)).toLowerCase();
    return readdirSync(dirname(abs))
      .filter((n) => n.toLowerCase() === want || (stem.length > 0 && basename(n, extname(n)).toLowerCase() === stem))
      .slice(0, 5);
  } catch {
    return [];
  }
}

interface Slice {
  lines: string[];
  /** Last line number shown (offset - 1 when none). */
  last: number;
  /** Total lines in the file, when counted. */
  total: number | null;
  cutLines: number;
  /** True when the char bound stopped the slice before `limit` lines. */
  charCapped: boolean;
}

function readSlice(abs: string, size: number, offset: number, limit: number, root: string, shown: string): Slice {
  const lastWanted = offset + limit - 1;
  const lines: string[] = [];
  let outChars = 0;
  let charCapped = false;
  let cutLines = 0;
  let last = offset - 1;
  let lineNo = 1;
  let cur = "";
  let curLen = 0;
  let newlines = 0;
  let lastByte = -1;
  let collecting = true;

  const emit = (text: string, len: number) => {
    if (lineNo >= offset && lineNo <= lastWanted && !charCapped) {
      let shown = text.endsWith("\r") && len <= READ_MAX_LINE_CHARS ? text.slice(0, -1) : text;
      if (len > READ_MAX_LINE_CHARS) {
        shown = `${shown.slice(0, READ_MAX_LINE_CHARS)}… [line cut: ${fmt(len)} chars]`;
        cutLines++;
      }
      const formatted = `${String(lineNo).padStart(6)}\t${shown}`;
      if (outChars + formatted.length + 1 > READ_MAX_OUTPUT_CHARS && lines.length > 0) {
        charCapped = true;
        collecting = false;
        return;
      }
      lines.push(formatted);
      outChars += formatted.length + 1;
      last = lineNo;
    }
    if (lineNo >= lastWanted) collecting = false;
  };

  // The descriptor is checked, not the name: what is read is what was verified.
  const fd = openConfined(abs, "r", root, shown);
  try {
    const buf = Buffer.alloc(CHUNK);
    const decoder = new StringDecoder("utf8");
    let pos = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, pos);
      if (n === 0) break;
      pos += n;
      const chunk = buf.subarray(0, n);
      lastByte = chunk[n - 1] as number;
      if (collecting) {
        const text = decoder.write(chunk);
        let start = 0;
        for (let i = text.indexOf("\n"); i !== -1 && collecting; i = text.indexOf("\n", start)) {
          const piece = text.slice(start, i);
          if (cur.length < READ_MAX_LINE_CHARS + 1) cur += piece.slice(0, READ_MAX_LINE_CHARS + 1 - cur.length);
          curLen += piece.length;
          emit(cur, curLen);
          newlines++;
          lineNo++;
          cur = "";
          curLen = 0;
          start = i + 1;
        }
        if (collecting) {
          const piece = text.slice(start);
          if (cur.length < READ_MAX_LINE_CHARS + 1) cur += piece.slice(0, READ_MAX_LINE_CHARS + 1 - cur.length);
          curLen += piece.length;
        } else {
          // Count the newlines of this chunk not yet looked at (a held-back partial character holds none).
          for (let i = text.indexOf("\n", start); i !== -1; i = text.indexOf("\n", i + 1)) newlines++;
        }
      } else {
        if (size > COUNT_ALL_LINES_BYTES) break;
        newlines += countNewlines(chunk);
      }
    }
    if (collecting && (curLen > 0 || cur !== "")) emit(cur, curLen);
  } finally {
    closeSync(fd);
  }
  let total: number | null = null;
  if (size <= COUNT_ALL_LINES_BYTES || collecting) total = size === 0 ? 0 : newlines + (lastByte === 0x0a ? 0 : 1);
  return { lines, last, total, cutLines, charCapped };
}

function countNewlines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) n++;
  return n;
}

export function statFile(ctx: ToolContext, path: string): { abs: string; rel: string; st: Stats } {
  const { abs, rel } = resolveInWorkspace(ctx, path);
  const denied = ctx.readDenied?.(abs);
  if (denied) throw new ToolError(denied);
  let st: Stats;
  try {
    st = statSync(abs);
  } catch {
    const alts = similarNames(abs);
    throw new ToolError(`${path} does not exist${alts.length ? `; similar names in that folder: ${alts.join(", ")}` : ""}`);
  }
  if (st.isDirectory()) throw new ToolError(`${rel} is a directory, not a file; use glob (e.g. pattern "${rel === "." ? "" : `${rel}/`}*") to list it`);
  if (!st.isFile()) throw new ToolError(`${rel} is not a regular file (a device, socket or pipe)`);
  return { abs, rel, st };
}

export const readFileTool: Tool<ReadFileInput> = {
  name: "read_file",
  description:
    `Read a text file of the workspace, with line numbers (cat -n style). Reads ${fmt(READ_DEFAULT_LIMIT)} lines from the start unless offset (1-based line) and limit say otherwise; ` +
    `lines over ${fmt(READ_MAX_LINE_CHARS)} chars are cut and one call returns at most ${fmt(READ_MAX_OUTPUT_CHARS)} chars (the result says how to continue). ` +
    "Binary files and images are refused. Reading the same range of an unchanged file again returns a short note that your earlier result is still current. Use glob to list folders.",
  schema,
  readOnly: true,
  async run(input, ctx): Promise<ToolOutcome> {
    const { abs, rel, st } = statFile(ctx, input.path);
    const image = imageTypeByExtension(abs);
    const sniff = sniffFile(abs);
    if (sniff.binary || image) {
      const type = sniff.binary ? sniff.type : (image as string);
      const what = type.endsWith("image") ? `an image (${type}, ${formatBytes(st.size)}); read_file shows text only` : `a binary file (${type}, ${formatBytes(st.size)}); read_file shows text only — inspect it with bash (e.g. file, xxd | head) if needed`;
      return fail(`${rel} is ${what}`);
    }

    const offset = Math.max(1, input.offset ?? 1);
    const limit = input.limit ?? READ_DEFAULT_LIMIT;
    const prev = ctx.readState.get(abs);
    if (prev && prev.mtimeMs === st.mtimeMs && prev.size === st.size && (prev.offset ?? 1) === offset && (prev.limit ?? READ_DEFAULT_LIMIT) === limit) {
      return {
        content: `[${rel} is unchanged since your last read of it with the same offset and limit (same modification time and size); that earlier result is still current.]`,
      };
    }

    if (st.size === 0) {
      ctx.readState.set(abs, { mtimeMs: st.mtimeMs, size: st.size, offset, limit });
      return { content: `[${rel} is empty (0 bytes)]` };
    }
    const s = readSlice(abs, st.size, offset, limit, workspaceRoot(ctx), rel);
    if (s.lines.length === 0) {
      return fail(`offset ${offset} is past the end of ${rel} (${s.total !== null ? `${fmt(s.total)} lines` : "fewer lines"})`);
    }
    const notes: string[] = [];
    const more = s.total === null ? true : s.last < s.total;
    if (more) {
      const of = s.total !== null ? ` of ${fmt(s.total)}` : "";
      const why = s.charCapped ? ` (the ${fmt(READ_MAX_OUTPUT_CHARS)}-char bound of one call was reached)` : "";
      notes.push(`[showing lines ${fmt(offset)}–${fmt(s.last)}${of}${why}; continue with offset ${s.last + 1}]`);
    }
    if (s.cutLines > 0) notes.push(`[${fmt(s.cutLines)} line(s) longer than ${fmt(READ_MAX_LINE_CHARS)} chars were cut; use grep or bash to see them whole]`);
    ctx.readState.set(abs, { mtimeMs: st.mtimeMs, size: st.size, offset, limit });
    return { content: [...s.lines, ...notes].join("\n") };
  },
};
