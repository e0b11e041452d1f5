// The history of one run and the transcript it is written to. Every message goes to the
// transcript before it joins the history that is sent (write-ahead), so a killed process loses
// nothing that reached the model. A refused turn is taken back out of the history; the
// transcript keeps it, marked retracted, so a resume agrees.
import { RETRACTED_EVENT, type TranscriptWriter } from "../session/transcript.ts";
import type { Message } from "../messages/types.ts";
import type { AgentEvent } from "./types.ts";

export interface Conversation {
  /** The live context: what the next request sends (a compaction replaces it). */
  history: Message[];
  /** Writes `m` to the transcript, then adds it to the history and reports it ("message"). */
  append(m: Message): void;
  /** Takes every message this run appended out of the history; the transcript marks them retracted, with `note`. */
  retractRun(note: string): void;
}

export function createConversation(start: readonly Message[], transcript: TranscriptWriter | undefined, emit: (e: AgentEvent) => void): Conversation {
  // Where this run's own messages start: a retraction takes everything from here out of the context.
  const runStart = start.length;
  /** Transcript uuids of the messages this run appended (a retraction names them). */
  const appended: string[] = [];
  const conversation: Conversation = {
    history: start.slice(),
    append(m) {
      const entry = transcript?.appendMessage(m);
      if (entry) appended.push(entry.uuid);
      conversation.history.push(m);
      emit({ type: "message", message: m });
    },
    retractRun(note) {
      transcript?.append({ type: "event", ts: new Date().toISOString(), name: RETRACTED_EVENT, uuids: appended.slice(), note });
      conversation.history = conversation.history.slice(0, runStart);
    },
  };
  return conversation;
}
