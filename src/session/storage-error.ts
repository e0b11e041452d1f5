// A session folder lethe cannot write (a read-only or full disk, no permission, a file where a
// folder should be): one line saying so in words, instead of "EROFS: read-only file system, open
// '…/lock'" or, worse, the ENOENT a read-only `mkdir -p` reports.
import { LetheError } from "../errors.ts";
import { accessSync, constants } from "node:fs";

/** The session folder cannot be created or written (a read-only or full disk). */
export class SessionStorageError extends LetheError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("session_storage", message, options);
  }
}

const WHY: Record<string, string> = {
  EROFS: "the file system is read-only",
  EACCES: "permission denied",
  EPERM: "permission denied",
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  ENOTDIR: "part of the path is a file, not a folder",
  ENOENT: "the folder does not exist",
};

/** The error code of a failed file operation, or undefined (reading a foreign error may throw). */
export function errnoCode(err: unknown): string | undefined {
  try {
    const code = (err as NodeJS.ErrnoException | null)?.code;
    return typeof code === "string" ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why lethe cannot keep its session in `dir`, in words. `probe` (the workspace) is asked whether
 * it can be written at all: a read-only file system makes mkdir -p report ENOENT, which would
 * send the user looking for a missing folder.
 */
export function storageError(dir: string, err: unknown, probe?: string): SessionStorageError {
  let cause = errnoCode(err);
  if (probe !== undefined) {
    try {
      accessSync(probe, constants.W_OK);
    } catch (e) {
      cause = errnoCode(e) ?? cause;
    }
  }
  const raw = err instanceof Error ? err.message.replace(/\s+/g, " ").slice(0, 200) : String(err);
  const why = (cause && WHY[cause]) ?? raw;
  const code = cause && why !== raw ? ` (${cause})` : "";
  return new SessionStorageError(`lethe: cannot keep the session in ${dir}: ${why}${code}; run lethe in a folder you can write to`, { cause: err });
}
