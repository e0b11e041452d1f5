// Where budget puts huge tool results: <session>/tool-results/<tool_use_id>.txt.
// Written atomically (temp file + rename), so a marker in the context never points at a
// missing or torn file. No fsync by default: once write() returns the kernel has the
// bytes, which survives a killed process; fsync (opt-in) is only for power loss and
// costs ~0.4 ms a file on the hot path.
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { ToolResultStore } from "../compaction/types.ts";

/** Tool-use ids come from the model's provider; keep only filename-safe characters. */
export function resultFileName(toolUseId: string): string {
  const safe = toolUseId.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^\.+/, "_");
  return `${safe || "_"}.txt`;
}

export function writeFileAtomic(path: string, data: string, opts: { fsync?: boolean } = {}): void {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, data);
    if (opts.fsync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export function createFileStore(dir: string, opts: { fsync?: boolean } = {}): ToolResultStore {
  let made = false;
  return {
    save(toolUseId, text) {
      if (!made) {
        mkdirSync(dir, { recursive: true });
        made = true;
      }
      const path = join(dir, resultFileName(toolUseId));
      writeFileAtomic(path, text, opts);
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
  };
}
