// The history of one run and the transcript it is written to. Every message goes to the
// transcript before it joins the history that is sent (write-ahead), so a killed process loses
// nothing that reached the model. A refused turn is taken back out of the history; the
// transcript keeps it, marked retracted, so a resume agrees.
import { RETRACTED_EVENT, type TranscriptWriter } from "../session/transcript.ts";
import type { ContentBlock, Message } from "../messages/types.ts";
import type { AgentEvent } from "./types.ts";

export interface Conversation {
  /** The live context: what the next request sends (a compaction replaces it). */
  history: Message[];
  /** Writes `m` to the transcript, then adds it to the history and reports it ("message"). */
  append(m: Message): void;
  /**
   * A note of lethe's to the model ("[lethe] …") before the next request: its own message in the
   * transcript, joined to the last message when that is the user's (tool results), as roles alternate.
   */
  appendNote(text: string): void;
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
    appendNote(text) {
      const m: Message = { role: "user", content: [{ type: "text", text }] };
      const entry = transcript?.appendMessage(m);
      if (entry) appended.push(entry.uuid);
      const h = conversation.history;
      const last = h[h.length - 1];
      if (last?.role === "user") h[h.length - 1] = { role: "user", content: [...(typeof last.content === "string" ? [{ type: "text" as const, text: last.content }] : last.content), ...(m.content as ContentBlock[])] };
      else h.push(m);
      emit({ type: "message", message: m });
    },
    retractRun(note) {
      transcript?.append({ type: "event", ts: new Date().toISOString(), name: RETRACTED_EVENT, uuids: appended.slice(), note });
      conversation.history = conversation.history.slice(0, runStart);
    },
  };
  return conversation;
}
