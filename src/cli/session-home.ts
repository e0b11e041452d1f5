// Where a CLI session lives: the workspace's .lethe/sessions, or a conversation store (--store,
// LETHE_STORE: ./stored-session.ts). Opening is two steps, so that a session being left is closed
// only once the next one is known to exist: `find` resolves what --resume, --continue, /clear or
// /resume name (and throws its one line if nothing fits); `open` then locks it, reads what a resume
// starts from and opens its transcript.
import { existsSync, statSync } from "node:fs";
import type { Message } from "../messages/types.ts";
import { type SessionLock, lockSession } from "../session/lock.ts";
import { type SessionPaths, type SessionSummary, createSessionDir, latestSession, listSessions, resolveSession } from "../session/paths.ts";
import { type TranscriptEntry, type TranscriptWriter, loadTranscript, openTranscript, resumeContext } from "../session/transcript.ts";
import { loadTranscriptTail } from "../session/transcript-tail.ts";
import { connectStore } from "../store/connect.ts";
import type { StoreTranscript } from "../store/transcript.ts";
import type { ConversationStore } from "../store/types.ts";
import type { RunConfig } from "./config.ts";
import { ConfigError, oneLine } from "./errors.ts";
import { openStoredSession } from "./stored-session.ts";

/** Which session: the one an id names, the latest, or (neither) a new one. */
export interface SessionChoice {
  resume?: string;
  continueLatest?: boolean;
}

/** An open session: locked, its transcript open, the context a resume starts from. */
export interface OpenedSession {
  paths: SessionPaths;
  transcript: TranscriptWriter;
  history: Message[];
  warnings: string[];
  /** New (not resumed): removed at close when no model answered (files only). */
  fresh: boolean;
  lock: SessionLock;
  /** On a store: the writer to flush before each request and at the end. */
  storeWriter?: StoreTranscript;
}

export interface SessionHome {
  /** Resolves the choice; `open()` on the result locks and opens it. */
  find(choice: SessionChoice): Promise<{ open(): OpenedSession }>;
  /** The sessions /resume can switch to, newest first. */
  list(): Promise<SessionSummary[]>;
  /** The store, once connected (undefined for the workspace's files). */
  readonly store: ConversationStore | undefined;
  /** Releases the store's connections. */
  close(): Promise<void>;
}

type Cfg = Pick<RunConfig, "workspace" | "model" | "provider" | "store">;

/** The workspace's latest session, or a one-line error saying why there is none to continue. */
function latestOrFail(workspace: string): SessionPaths {
  const latest = latestSession(workspace);
  if (latest) return latest;
  // Sessions whose transcripts hold no readable message are not "no session": say what is wrong.
  const unreadable = listSessions(workspace).find((x) => x.messageCount === 0 && existsSync(x.transcript) && statSync(x.transcript).size > 0);
  if (unreadable) {
    const loaded = loadTranscript(unreadable.transcript);
    const why = loaded.errors[0] ?? loaded.warnings[0] ?? "no message could be read from it";
    throw new ConfigError(`lethe: the latest session ${unreadable.id} has no readable message (${oneLine(why, 160)}); start a new session, or look at ${unreadable.transcript}`);
  }
  throw new ConfigError(`lethe: no session to continue in ${workspace} (start one without --continue)`);
}

/** The workspace's .lethe/sessions. */
function filesHome(cfg: Cfg): SessionHome {
  return {
    store: undefined,
    async find(choice) {
      const resume = choice.resume !== undefined || choice.continueLatest === true;
      const paths = choice.resume !== undefined ? resolveSession(cfg.workspace, choice.resume) : choice.continueLatest ? latestOrFail(cfg.workspace) : createSessionDir(cfg.workspace);
      return {
        open(): OpenedSession {
          // Before anything is read or written: a second process on this session stops here.
          const lock = lockSession(paths.dir, paths.id);
          let history: Message[] = [];
          let warnings: string[] = [];
          let readBack: TranscriptEntry[] = [];
          if (resume) {
            // From the last resume point on: a long session's file is not read from the start.
            const loaded = loadTranscriptTail(paths.transcript);
            warnings = [...loaded.errors, ...loaded.warnings];
            history = resumeContext(loaded.entries);
            readBack = loaded.entries;
          }
          const transcript = openTranscript(paths.transcript, { header: { id: paths.id, cwd: cfg.workspace, model: cfg.model, provider: cfg.provider } });
          // The context's messages are lines of this file: a boundary that removes one names it.
          transcript.adoptLines?.(readBack);
          return { paths, transcript, history, warnings, fresh: !resume, lock };
        },
      };
    },
    list: async () => listSessions(cfg.workspace),
    close: async () => {},
  };
}

/** A conversation store (connected on first use). */
function storeHome(cfg: Cfg & { store: string }): SessionHome {
  let store: ConversationStore | undefined;
  const connected = async () => (store ??= await connectStore(cfg.store));
  return {
    get store() {
      return store;
    },
    async find(choice) {
      const s = await openStoredSession(await connected(), { workspace: cfg.workspace, model: cfg.model, provider: cfg.provider, ...choice });
      return {
        open(): OpenedSession {
          let lock: SessionLock;
          try {
            lock = lockSession(s.paths.dir, s.paths.id);
          } catch (e) {
            s.writer.close();
            throw e;
          }
          return { paths: s.paths, transcript: s.writer, history: s.history, warnings: s.warnings, fresh: false, lock, storeWriter: s.writer };
        },
      };
    },
    async list() {
      return (await (await connected()).list()).map((c) => ({
        id: c.id,
        dir: "",
        transcript: "",
        toolResults: "",
        preview: c.cwd !== undefined && c.cwd !== cfg.workspace ? `(started in ${c.cwd})` : "",
        messageCount: c.messages,
        lastModified: new Date(c.updated),
      }));
    },
    async close() {
      const s = store;
      store = undefined;
      await s?.close();
    },
  };
}

/** The home the configuration names: --store / LETHE_STORE, else the workspace's files. */
export function sessionHome(cfg: Cfg): SessionHome {
  return cfg.store !== undefined ? storeHome({ ...cfg, store: cfg.store }) : filesHome(cfg);
}
