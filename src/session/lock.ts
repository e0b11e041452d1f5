// One writer per session. Two processes on one session (`--continue` twice at once) would
// interleave their turns in one transcript; the second gets a one-line error naming the first.
// The lock is a file created exclusively (O_EXCL) holding the owner's pid; a lock whose process is
// gone (killed, crashed) is taken over. A folder where the lock cannot be written (a read-only
// file system: `--continue` on a read-only mount) is a SessionStorageError line, not "EROFS … lock".
import { LetheError } from "../errors.ts";
import { errnoCode, storageError } from "./storage-error.ts";
import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";

/** Another process writes this session. */
export class SessionLockedError extends LetheError {
  constructor(readonly sessionId: string, readonly pid: number) {
    super("session_locked", `lethe: session ${sessionId} is in use by another lethe process (pid ${pid}); wait for it to finish, or start a new session`);
  }
}

export interface SessionLock {
  release(): void;
}

/** Whether a process with this pid is running (EPERM: it is, under another user). */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function lockSession(dir: string, sessionId: string): SessionLock {
  const path = join(dir, "lock");
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (e) {
      if (errnoCode(e) !== "EEXIST") throw storageError(dir, e);
      let owner = NaN;
      try {
        owner = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
      } catch {
        // vanished between open and read: try again
      }
      if (owner === process.pid) throw new SessionLockedError(sessionId, owner);
      if (alive(owner)) throw new SessionLockedError(sessionId, owner);
      // A stale lock (its process is gone): take it over.
      try {
        unlinkSync(path);
      } catch {
        // someone else took it over first; the next attempt decides
      }
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } catch (e) {
      // A full disk: no lock left behind that names nobody.
      closeSync(fd);
      try {
        unlinkSync(path);
      } catch {
        // gone already
      }
      throw storageError(dir, e);
    }
    closeSync(fd);
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        try {
          if (Number.parseInt(readFileSync(path, "utf8"), 10) === process.pid) unlinkSync(path);
        } catch {
          // already gone
        }
      },
    };
  }
  throw new SessionLockedError(sessionId, NaN);
}
