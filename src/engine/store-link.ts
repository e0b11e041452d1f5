// The engine's link to a conversation store: what it knows of the conversation, and the queues
// the synchronous layers write into (tool results, boundary lines) until the call's end flushes
// them (stored.ts). Kept apart from stored.ts so the engine's state can hold a link without
// importing the engine's calls.
import { LetheInputError } from "../messages/input.ts";
import type { LedgerList, ToolResultStore } from "../compaction/types.ts";
import type { BoundaryEntry, EventEntry, MessageEntry } from "../session/transcript-format.ts";
import type { TranscriptWriter } from "../session/transcript.ts";
import type { Conversation, ConversationStore } from "../store/types.ts";

export interface StoreLink {
  readonly store: ConversationStore;
  readonly id: string;
  conversation: Conversation | undefined;
  /** The version of the state this engine works from (0: none). */
  version: number;
  /** Messages the store holds, as far as this engine knows. */
  recorded: number;
  readonly results: Map<string, string>;
  readonly entries: (Omit<BoundaryEntry, "ts"> | Omit<EventEntry, "ts">)[];
  /** The meter's writes after replies (observe is synchronous), in order; engine.flush() waits for them. */
  writing: Promise<void> | undefined;
  /** A write of the meter that failed, for engine.flush() to report. */
  failed: unknown;
  /** The ledger of the state this engine works from (saved again with a state that has none of its own). */
  ledger: LedgerList | undefined;
  /** Content keys of a stored state's rebuilt history (to recognise it passed back), by state version. */
  rebuiltKeys?: { version: number; keys: string[] };
}

export function isConversationStore(v: unknown): v is ConversationStore {
  return typeof v === "object" && v !== null && typeof (v as ConversationStore).conversation === "function";
}

export function createLink(store: ConversationStore, id: string): StoreLink {
  return { store, id, conversation: undefined, version: 0, recorded: 0, results: new Map(), entries: [], writing: undefined, failed: undefined, ledger: undefined };
}

export const notOpen = (): never => {
  throw new LetheInputError("engine", "with a conversation store, call beforeRequest (or compact) first: prepare() is synchronous and cannot open the conversation");
};

/** The layers' tool-result store: writes are queued and go out after the call. */
export function linkResults(link: StoreLink): ToolResultStore {
  return {
    save(toolUseId, text) {
      const ref = (link.conversation ?? notOpen()).resultRef(toolUseId);
      link.results.set(toolUseId, text);
      return ref;
    },
    load(toolUseId) {
      return link.results.get(toolUseId);
    },
  };
}

/** The boundary log's writer: lines are queued and go out after the call. */
export function linkTranscript(link: StoreLink): TranscriptWriter {
  const queue = <T extends { type: string }>(e: T): T => (link.entries.push(e as never), e);
  return {
    path: `${link.store.location}#${link.id}`,
    append: (e) => void queue(e),
    appendMessage: (message) => ({ type: "message", uuid: "", ts: "", message }) as MessageEntry,
    appendBoundary: (b) => queue({ type: "boundary", ...b }) as BoundaryEntry,
    appendEvent: (name, data) => queue({ type: "event", name, ...data }) as EventEntry,
    close() {},
  };
}

