// Where budget puts huge tool results: <session>/tool-results/<tool_use_id>.txt.
// Written atomically (temp file + rename), so a marker in the context never points at a
// missing or torn file. No fsync by default: once write() returns the kernel has the
// bytes, which survives a killed process; fsync (opt-in) is only for power loss and
// costs ~0.4 ms a file on the hot path.
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { ToolResultStore } from "../compaction/types.ts";

/**
 * Tool-use ids come from the model's provider. An id that is already a safe, short file name is
 * used as it is (`toolu_01….txt`); any other gets a readable prefix and a hash of the whole id, so
 * `call:1`, `call_1` and `call/1` never share a file, and no name exceeds the file system's limit.
 */
export function resultFileName(toolUseId: string): string {
  if (/^[A-Za-z0-9_-]{1,100}$/.test(toolUseId)) return `${toolUseId}.txt`;
  const safe = toolUseId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 60);
  return `${safe}-${createHash("sha256").update(toolUseId).digest("hex").slice(0, 16)}.txt`;
}

export interface WriteIO {
  openSync: typeof openSync;
  writeSync: (fd: number, buffer: Buffer, offset: number, length: number) => number;
  fsyncSync: typeof fsyncSync;
  closeSync: typeof closeSync;
  renameSync: typeof renameSync;
  unlinkSync: typeof unlinkSync;
}

const realIO: WriteIO = { openSync, writeSync: (fd, b, o, l) => writeSync(fd, b, o, l), fsyncSync, closeSync, renameSync, unlinkSync };

/**
 * Writes every byte or fails: a short write is continued, an error (a full disk) removes the
 * temporary file and is thrown, so a partial file is never published under `path`.
 */
export function writeFileAtomic(path: string, data: string | Buffer, opts: { fsync?: boolean } = {}, io: WriteIO = realIO): void {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const fd = io.openSync(tmp, "w");
  try {
    try {
      for (let off = 0; off < buf.length; ) {
        const n = io.writeSync(fd, buf, off, buf.length - off);
        if (!(n > 0)) throw Object.assign(new Error(`wrote nothing at byte ${off} of ${buf.length}`), { code: "EIO" });
        off += n;
      }
      if (opts.fsync) io.fsyncSync(fd);
    } finally {
      io.closeSync(fd);
    }
    io.renameSync(tmp, path);
  } catch (e) {
    try {
      io.unlinkSync(tmp);
    } catch {
      // never created, or already renamed
    }
    throw e;
  }
}

/** A tool-result store on disk: one file per tool_use id (unique, bounded names), written atomically. */
export function createFileStore(dir: string, opts: { fsync?: boolean; io?: WriteIO } = {}): ToolResultStore {
  let made = false;
  return {
    save(toolUseId, text) {
      if (!made) {
        mkdirSync(dir, { recursive: true });
        made = true;
      }
      const path = join(dir, resultFileName(toolUseId));
      writeFileAtomic(path, text, opts, opts.io);
      return path;
    },
  };
}

/** An in-memory store (tests, benchmarks of the pure core, hosts with their own storage). */
export function createMemoryStore(prefix = "mem://tool-results/"): ToolResultStore & { files: Map<string, string> } {
  const files = new Map<string, string>();
  return {
    files,
    save(toolUseId, text) {
      const path = `${prefix}${resultFileName(toolUseId)}`;
      files.set(path, text);
      return path;
    },
    load(toolUseId) {
      return files.get(`${prefix}${resultFileName(toolUseId)}`);
    },
  };
}
