// A short lock around one store operation (an append, a compare-and-set), for processes sharing a
// conversation folder on one machine. An exclusive file holding the owner's pid; a lock whose
// owner is gone (SIGKILL mid-operation) is taken over, so a killed worker never blocks the rest.
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { alive } from "../session/lock.ts";
import { errnoCode } from "../session/storage-error.ts";
import { StoreError } from "./errors.ts";

const WAIT_MS = 15_000;

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Operations of one process are queued here first: the file lock is per process (its pid).
const queues = new Map<string, Promise<unknown>>();

/** Runs `fn` holding the lock file at `path`; waits for another holder up to 15 s. */
export function withFileLock<T>(path: string, fn: () => T | Promise<T>): Promise<T> {
  const before = queues.get(path) ?? Promise.resolve();
  const run = before.then(
    () => locked(path, fn),
    () => locked(path, fn),
  );
  const tail = run.catch(() => undefined);
  queues.set(path, tail);
  void tail.then(() => {
    if (queues.get(path) === tail) queues.delete(path);
  });
  return run;
}

async function locked<T>(path: string, fn: () => T | Promise<T>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (let wait = 2; ; wait = Math.min(50, wait * 2)) {
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (e) {
      if (errnoCode(e) !== "EEXIST") throw new StoreError("store_failed", `lethe: cannot lock ${path}: ${(e as Error).message.split("\n")[0]}`, { cause: e });
      let owner = NaN;
      try {
        owner = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
      } catch {
        // released between open and read: try again at once
        continue;
      }
      // An empty file is a holder between its open and its write (give it a moment), or one
      // killed right there (taken over once it is a few seconds old).
      if (Number.isNaN(owner) ? ageMs(path) > 3_000 : !alive(owner)) {
        try {
          unlinkSync(path);
        } catch {
          // another waiter took it over first
        }
        continue;
      }
      if (Date.now() > deadline) throw new StoreError("store_failed", `lethe: the conversation is held by process ${owner} for more than ${WAIT_MS / 1000} s (${path})`);
      await sleep(wait);
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    try {
      return await fn();
    } finally {
      try {
        unlinkSync(path);
      } catch {
        // taken over as stale (we were paused for long): nothing to release
      }
    }
  }
}
