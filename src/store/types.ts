// The conversation store: everything lethe keeps per conversation, behind one interface, so a
// host that builds a fresh engine for every request (a route handler, a serverless function, a
// worker of a fleet) picks up where the last one stopped. Two implementations: files (the
// embedded default, today's .lethe/sessions/<id>/ layout) and PostgreSQL (lethe/postgres).
//
// What a conversation holds:
//   messages   every message the host sent, once, at its position (seq 0, 1, …): appends are
//              idempotent, so a host that retries a turn after a crash records nothing twice;
//   entries    boundaries and events, in order with the messages (the transcript);
//   results    the full text of tool results a layer moved out of the context;
//   state      the engine's compacted state (EngineSnapshot), written with a compare-and-set on
//              its version, so when two processes compact at once the loser adopts the winner's.
import type { Message } from "../messages/types.ts";
import type { LedgerList } from "../compaction/types.ts";
import type { BoundaryEntry, EventEntry, TranscriptLine } from "../session/transcript-format.ts";

/**
 * What an engine made of the conversation so far, as structured data (never parsed back out of
 * message text): the history the layers last rewrote (a summary, a snip, cleared results) and
 * which of the host's messages it stands for. Saved only when a layer rewrote the history, so a
 * fresh engine continues from it exactly as a long-lived one would, instead of redoing the work.
 */
export interface EngineSnapshot {
  /** 1 for the first state saved, one more for each after it. */
  version: number;
  /** `rebuilt` stands for the host's messages [0, covers). */
  covers: number;
  /** Content keys of the host's messages just before `covers` (the last few), to recognise the same history. */
  coverKeys: string[];
  /** Content keys of the host's first messages (a few), likewise. */
  headKeys: string[];
  /** The history the engine made of messages [0, covers): what the model sees instead of them. */
  rebuilt: Message[];
  /** A smaller window the server revealed (a learned window stays learned). */
  window?: { contextWindow: number; maxOutputTokens: number };
  /** Every file read and modified in what the compactions took out of the context, whole (`rebuilt` carries it capped, as text for the model). */
  ledger?: LedgerList;
  /** ISO time the state was saved. */
  saved: string;
}

/**
 * What engines learned from the provider's replies on this conversation: how the provider's token
 * counts compare with lethe's estimate (the meter's correction), and when the last reply arrived
 * (micro's cold-cache path). Written after every reply, last writer wins: it is a measure, not a
 * history, so it is kept apart from the versioned EngineSnapshot.
 */
export interface MeterState {
  /** The model the correction was learned on (another model's is not used). */
  model: string;
  /** Provider tokens per estimated token (an average over the replies). */
  factor: number;
  /** When the last reply arrived (ms since the epoch). */
  lastResponseAt: number;
}

/** What appendMessages did. */
export interface AppendResult {
  /** Messages newly recorded. */
  added: number;
  /** Messages already recorded with the same content (a retried turn): skipped. */
  existing: number;
  /**
   * Positions already recorded with different content (a host that rewrote its history): the
   * new version is kept as a "rewritten" event, never lost, and the recorded one stays.
   */
  rewritten: number[];
}

/** One conversation in a store. Every method is safe to call from many processes at once. */
export interface Conversation {
  readonly id: string;
  /** How many messages are recorded (the seq the next new message gets). */
  messageCount(): Promise<number>;
  /**
   * Records messages at seq from, from + 1, …: idempotently (see AppendResult). `from` past the end
   * is an error. `opts.uuids` names each message's transcript uuid (a writer that must name a
   * message before the store answers, as boundaries and retractions do); new ones are made otherwise.
   */
  appendMessages(from: number, messages: readonly Message[], opts?: { uuids?: readonly string[] }): Promise<AppendResult>;
  /** Appends a boundary or an event to the transcript, after everything recorded so far. */
  appendEntry(entry: Omit<BoundaryEntry, "ts"> | Omit<EventEntry, "ts">): Promise<void>;
  /** The engine's state, or null when nothing was compacted yet. */
  state(): Promise<EngineSnapshot | null>;
  /**
   * Saves `next` as version expected + 1 when the stored version is still `expected` (0: none).
   * Otherwise nothing is written and the stored state (the winner's) comes back with saved false.
   */
  saveState(expected: number, next: Omit<EngineSnapshot, "version" | "saved">): Promise<{ saved: boolean; state: EngineSnapshot }>;
  /** What engines learned from the replies so far, or null before the first. */
  meter(): Promise<MeterState | null>;
  /** Replaces it (last writer wins). */
  saveMeter(meter: MeterState): Promise<void>;
  /** Keeps a tool result's full text; returns the reference markers name (a path, or a store URL). */
  saveResult(toolUseId: string, text: string): Promise<string>;
  /** The reference saveResult gives for this id (known before it is saved: layers need it synchronously). */
  resultRef(toolUseId: string): string;
  loadResult(toolUseId: string): Promise<string | undefined>;
  /** Every line of the transcript in order: the header first, then messages, boundaries and events. */
  lines(): Promise<TranscriptLine[]>;
}

/** One conversation as store.list() gives it. */
export interface ConversationInfo {
  id: string;
  messages: number;
  /** The folder the conversation was started in (its header's cwd), when known. */
  cwd?: string;
  /** ISO time of the last change. */
  updated: string;
}

/** Where conversations are kept: connectStore(path | file: | postgres://) opens one. */
export interface ConversationStore {
  readonly kind: "files" | "postgres";
  /** Where it is, with any password masked. */
  readonly location: string;
  /** Opens a conversation, creating it on first use. An id must be 1–1,000 characters, any of them. */
  conversation(id: string, init?: { cwd?: string; model?: string }): Promise<Conversation>;
  /** The conversations in the store, newest change first. */
  list(): Promise<ConversationInfo[]>;
  /** Releases connections (PostgreSQL); the files store has nothing to release. */
  close(): Promise<void>;
}

/** The longest conversation id a store accepts (a database key must stay indexable). */
export const MAX_CONVERSATION_ID = 1_000;
