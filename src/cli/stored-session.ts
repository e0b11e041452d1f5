// A CLI session kept in a conversation store (--store <path|url>, or LETHE_STORE): started on one
// machine, continued with --continue or --resume on any other that reaches the store.
//
// The store holds the transcript (each message before it is sent: the session flushes the
// writer before every model request) and the tool results. The agent's tools still work on a
// local folder: recall searches it, subagents keep their transcripts there, hooks are given its
// transcript's path. With the files store that folder is the conversation's own; with
// PostgreSQL it is a mirror under <workspace>/.lethe/stores/, written line for line with the
// store and rebuilt from the store when a session is resumed (the store is the truth).
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "../messages/types.ts";
import { type SessionPaths, SessionNotFoundError, TOOL_RESULTS_DIR, TRANSCRIPT_FILE, ensureLetheDir, letheDir, newSessionId } from "../session/paths.ts";
import { type TranscriptEntry, type TranscriptWriter, openTranscript, resumeContext, serializeEntry } from "../session/transcript.ts";
import { writeFileAtomic } from "../session/tool-results.ts";
import { conversationFolder } from "../store/files.ts";
import { type StoreTranscript, openStoreTranscript } from "../store/transcript.ts";
import type { ConversationStore } from "../store/types.ts";
import { ConfigError } from "./errors.ts";

export interface StoredSession {
  paths: SessionPaths;
  writer: StoreTranscript;
  /** The context a resumed session starts from (empty for a new one). */
  history: Message[];
  /** Notes for the user (which conversation --continue picked, and why). */
  warnings: string[];
}

export interface StoredOpenOptions {
  workspace: string;
  model: string;
  provider: string;
  resume?: string;
  continueLatest?: boolean;
}

/** The conversation an id names (--resume, /resume, lethe view): the id, or a prefix of exactly one id. */
export async function resolveConversation(store: ConversationStore, wanted: string): Promise<string> {
  const ids = (await store.list()).map((c) => c.id);
  if (ids.includes(wanted)) return wanted;
  const matches = ids.filter((id) => id.startsWith(wanted));
  if (matches.length === 1) return matches[0]!;
  const shown = JSON.stringify(wanted.length > 80 ? `${wanted.slice(0, 80)}…` : wanted);
  if (matches.length > 1) throw new SessionNotFoundError(`lethe: conversation id ${shown} is ambiguous (${matches.length} conversations in ${store.location} start with it); give more of it`, wanted);
  throw new SessionNotFoundError(`lethe: no conversation ${shown} in ${store.location} (lethe sessions --store … lists them)`, wanted);
}

/** The conversation --continue picks: the newest started in this workspace, else the newest of all. */
async function latestId(store: ConversationStore, workspace: string): Promise<{ id: string; warning?: string }> {
  const all = (await store.list()).filter((c) => c.messages > 0);
  const here = all.find((c) => c.cwd === workspace);
  if (here) return { id: here.id };
  const newest = all[0];
  if (!newest) throw new ConfigError(`lethe: no conversation to continue in ${store.location} (start one without --continue)`);
  return { id: newest.id, warning: `no conversation in ${store.location} was started in ${workspace}; continuing the newest one, ${newest.id}${newest.cwd ? ` (started in ${newest.cwd})` : ""}` };
}

/** The local folder of a conversation: its own (files store) or a mirror (PostgreSQL). */
function localFolder(store: ConversationStore, workspace: string, id: string): { dir: string; mirror: boolean } {
  if (store.kind === "files") return { dir: join(store.location, conversationFolder(id)), mirror: false };
  ensureLetheDir(workspace);
  const where = createHash("sha256").update(store.location).digest("hex").slice(0, 16);
  return { dir: join(letheDir(workspace), "stores", where, conversationFolder(id)), mirror: true };
}

/** Opens (or starts) the session's conversation in `store`. */
export async function openStoredSession(store: ConversationStore, o: StoredOpenOptions): Promise<StoredSession> {
  const warnings: string[] = [];
  let id: string;
  if (o.resume !== undefined) id = await resolveConversation(store, o.resume.trim());
  else if (o.continueLatest) {
    const latest = await latestId(store, o.workspace);
    id = latest.id;
    if (latest.warning) warnings.push(latest.warning);
  } else id = newSessionId();
  const resuming = o.resume !== undefined || o.continueLatest === true;
  const conversation = await store.conversation(id, { cwd: o.workspace, model: o.model });
  const next = await conversation.messageCount();
  const lines = resuming ? await conversation.lines() : [];
  const entries = lines.filter((l): l is TranscriptEntry => l.type !== "session");
  const local = localFolder(store, o.workspace, id);
  mkdirSync(join(local.dir, TOOL_RESULTS_DIR), { recursive: true });
  const paths: SessionPaths = { id, dir: local.dir, transcript: join(local.dir, TRANSCRIPT_FILE), toolResults: join(local.dir, TOOL_RESULTS_DIR) };
  let mirror: TranscriptWriter | undefined;
  if (local.mirror) {
    // The store is the truth: the mirror starts as what it holds.
    if (lines.length > 0) writeFileAtomic(paths.transcript, lines.map(serializeEntry).join(""));
    mirror = openTranscript(paths.transcript, { header: { id, cwd: o.workspace, model: o.model, provider: o.provider, store: store.location } });
  }
  const writer = openStoreTranscript(conversation, { next, path: paths.transcript, ...(mirror ? { mirror } : {}) });
  // The context's messages are the store's lines: a boundary that removes one names it.
  writer.adoptLines?.(entries);
  return { paths, writer, history: resuming ? resumeContext(entries) : [], warnings };
}
