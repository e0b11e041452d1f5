// A transcript writer over a conversation store, for a host that writes its own transcript (the
// CLI agent does: each message before it is sent). The writer's calls are synchronous, as the
// agent loop and the layers expect; the store is not. So each call is queued, in order, and sent
// at once in the background; flush() waits until everything queued so far is stored, and the
// host calls it before each model request (write-ahead at the request) and before it exits.
//
// A write that fails stays at the head of the queue: flush() rejects with its one-line error and
// the next flush tries it again, so a database that comes back loses nothing. A message another
// process recorded at the same position (two writers on one conversation) stops the writer: its
// messages would be out of order, so it says so instead of going on.
import { randomUUID } from "node:crypto";
import { checkMessage } from "../messages/input.ts";
import type { Message } from "../messages/types.ts";
import type { ToolResultStore } from "../compaction/types.ts";
import type { BoundaryEntry, EventEntry, MessageEntry, TranscriptEntry } from "../session/transcript-format.ts";
import { type TranscriptWriter, adoptLines } from "../session/transcript.ts";
import { StoreError } from "./errors.ts";
import type { Conversation } from "./types.ts";

type Op =
  | { kind: "message"; seq: number; uuid: string; message: Message }
  | { kind: "entry"; entry: Omit<BoundaryEntry, "ts"> | Omit<EventEntry, "ts"> }
  | { kind: "result"; id: string; text: string };

export interface StoreTranscript extends TranscriptWriter {
  /** Resolves once everything appended so far is stored; rejects with the write that failed. */
  flush(): Promise<void>;
  /** A tool-result store that keeps each result in `local` (read back at once) and in the conversation. */
  results(local: ToolResultStore): ToolResultStore;
  /** Calls not yet stored. */
  readonly pending: number;
}

export interface StoreTranscriptOptions {
  /** The seq the next message gets: the conversation's message count when it was opened. */
  next: number;
  /** What `path` reports (hooks and boundary notes name it). */
  path: string;
  /** A local copy written synchronously, line for line (a PostgreSQL conversation's mirror folder). */
  mirror?: TranscriptWriter;
}

/** Messages appended in a row go to the store in one call. */
const BATCH = 200;

export function openStoreTranscript(conversation: Conversation, opts: StoreTranscriptOptions): StoreTranscript {
  const ops: Op[] = [];
  const uuids = new WeakMap<object, string>();
  let next = opts.next;
  let running: Promise<void> | undefined;
  let failure: unknown;
  let stopped: StoreError | undefined;
  const mirror = opts.mirror;

  async function write(): Promise<void> {
    while (ops.length > 0) {
      const op = ops[0]!;
      if (op.kind === "message") {
        let n = 1;
        while (n < ops.length && n < BATCH && ops[n]!.kind === "message") n++;
        const batch = ops.slice(0, n) as Extract<Op, { kind: "message" }>[];
        const r = await conversation.appendMessages(batch[0]!.seq, batch.map((o) => o.message), { uuids: batch.map((o) => o.uuid) });
        if (r.rewritten.length > 0) {
          stopped = new StoreError("store_failed", `lethe: conversation ${JSON.stringify(conversation.id.slice(0, 80))} was written by another process meanwhile (message ${r.rewritten[0]} differs); this one stopped writing to it (resume it again to go on)`);
          throw stopped;
        }
        ops.splice(0, n);
      } else {
        if (op.kind === "entry") await conversation.appendEntry(op.entry);
        else await conversation.saveResult(op.id, op.text);
        ops.shift();
      }
    }
  }

  function start(): Promise<void> {
    if (stopped) return Promise.reject(stopped);
    running ??= write()
      .catch((e) => {
        failure = e;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  const enqueue = (op: Op): void => {
    ops.push(op);
    if (failure === undefined && !stopped) void start();
  };

  const queueEntry = <T extends Omit<BoundaryEntry, "ts"> | Omit<EventEntry, "ts">>(entry: T, ts: string): T & { ts: string } => {
    mirror?.append({ ...entry, ts } as TranscriptEntry);
    enqueue({ kind: "entry", entry });
    return { ...entry, ts };
  };

  const writer: StoreTranscript = {
    path: opts.path,
    get pending() {
      return ops.length;
    },
    appendMessage(message, o = {}) {
      checkMessage(message, "transcript: message");
      const uuid = o.uuid ?? randomUUID();
      const ts = o.ts ?? new Date().toISOString();
      mirror?.appendMessage(message, { uuid, ts });
      if (typeof message === "object" && message !== null) uuids.set(message, uuid);
      enqueue({ kind: "message", seq: next++, uuid, message });
      return { type: "message", uuid, ts, message } satisfies MessageEntry;
    },
    uuidOf: (message) => uuids.get(message),
    adoptLines: (entries) => adoptLines(uuids, entries),
    append(entry) {
      if (entry.type === "message") writer.appendMessage(entry.message, { uuid: entry.uuid, ts: entry.ts });
      else {
        const { ts, ...rest } = entry;
        queueEntry(rest as Omit<BoundaryEntry, "ts"> | Omit<EventEntry, "ts">, ts ?? new Date().toISOString());
      }
    },
    appendBoundary: (b) => queueEntry({ type: "boundary", ...b } as Omit<BoundaryEntry, "ts">, b.ts ?? new Date().toISOString()) as BoundaryEntry,
    appendEvent: (name, data) => queueEntry({ type: "event", name, ...data } as Omit<EventEntry, "ts">, new Date().toISOString()) as EventEntry,
    async flush() {
      // A failed write is tried again: the server may be back.
      failure = undefined;
      while (running) await running;
      if (ops.length > 0) await start();
      if (failure !== undefined) {
        const e = failure;
        throw e instanceof StoreError ? e : new StoreError("store_failed", `lethe: cannot write conversation ${JSON.stringify(conversation.id.slice(0, 80))} to the store: ${(e as Error)?.message?.split("\n")[0] ?? String(e)}`, { cause: e });
      }
      if (stopped) throw stopped;
    },
    results(local) {
      return {
        save(toolUseId, text) {
          const ref = local.save(toolUseId, text);
          enqueue({ kind: "result", id: toolUseId, text });
          return ref;
        },
        load: (toolUseId) => local.load?.(toolUseId),
      };
    },
    close() {
      mirror?.close();
    },
  };
  return writer;
}
