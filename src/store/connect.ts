// connectStore: one address for every host and command. A path or a file: URL is the files
// store; postgres:// or postgresql:// is the PostgreSQL store, loaded only then (pg is an optional
// peer dependency). Anything else is a one-line store_url error.
import { fileURLToPath } from "node:url";
import { StoreError, maskUrl } from "./errors.ts";
import { createFilesStore } from "./files.ts";
import type { ConversationStore } from "./types.ts";

/** Options of connectStore. */
export interface ConnectOptions {
  /** PostgreSQL: how long to wait for a connection before store_unreachable (default 10 s). */
  connectTimeoutMs?: number;
}

/** Opens the store at `pathOrUrl`: a folder path, a file: URL, or a postgres:// URL. */
export async function connectStore(pathOrUrl: string, opts: ConnectOptions = {}): Promise<ConversationStore> {
  if (typeof pathOrUrl !== "string" || pathOrUrl.trim() === "") throw new StoreError("store_url", "lethe: a store is a folder path, a file: URL or a postgres:// URL; got nothing");
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(pathOrUrl)?.[1]?.toLowerCase();
  // A Windows drive letter (C:\…) is a path, not a scheme.
  if (scheme === undefined || /^[A-Za-z]:[\\/]/.test(pathOrUrl)) return createFilesStore(pathOrUrl);
  if (scheme === "file") {
    let path: string;
    try {
      path = fileURLToPath(pathOrUrl);
    } catch (e) {
      throw new StoreError("store_url", `lethe: ${maskUrl(pathOrUrl)} is not a file: URL lethe can use: ${(e as Error).message}`);
    }
    return createFilesStore(path);
  }
  if (scheme === "postgres" || scheme === "postgresql") {
    const { createPostgresStore } = await import("./postgres.ts");
    return createPostgresStore(pathOrUrl, opts);
  }
  throw new StoreError("store_url", `lethe: ${maskUrl(pathOrUrl)}: unknown store scheme "${scheme}:"; use a folder path, file:, postgres:// or postgresql://`);
}
