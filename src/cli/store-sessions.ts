// `lethe sessions --store <path|url>` and `lethe export <id> --store <path|url>`: the same table
// and the same exports, read from a conversation store (any worker's conversations, from any
// machine that reaches it) instead of this workspace's .lethe/sessions.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Message } from "../messages/types.ts";
import type { LoadedTranscript, SessionHeader, TranscriptEntry } from "../session/transcript-format.ts";
import { connectStore } from "../store/connect.ts";
import type { ConversationStore } from "../store/types.ts";
import { UsageError } from "./errors.ts";
import { exportMarkdown, sessionStats, sessionsTable } from "./session-report.ts";

/** A conversation's lines as a loaded transcript. */
async function transcriptOf(store: ConversationStore, id: string): Promise<LoadedTranscript> {
  const lines = await (await store.conversation(id)).lines();
  const header = lines[0]?.type === "session" ? (lines[0] as SessionHeader) : null;
  return { header, entries: lines.filter((l): l is TranscriptEntry => l.type !== "session"), warnings: [], errors: [] };
}

function preview(t: LoadedTranscript): string {
  for (const e of t.entries) {
    if (e.type !== "message" || e.message.role !== "user") continue;
    const m: Message = e.message;
    const text = typeof m.content === "string" ? m.content : m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(" ");
    if (text.trim()) return text.replace(/\s+/g, " ").trim().slice(0, 60);
  }
  return "";
}

export interface StoreCommand {
  command: "sessions" | "export";
  store: string;
  positional: string[];
  format: string;
  output?: string;
  cwd: string;
}

export async function runStoreSessionCommand(c: StoreCommand, out: (text: string) => void): Promise<number> {
  const store = await connectStore(c.store);
  try {
    if (c.command === "sessions") {
      const rows = [];
      for (const info of await store.list()) {
        const t = await transcriptOf(store, info.id);
        rows.push(sessionStats({ id: info.id, dir: "", transcript: "", toolResults: "", preview: preview(t), messageCount: info.messages, lastModified: new Date(info.updated), ...(t.header?.created ? { created: t.header.created } : {}) }, t));
      }
      out(`${rows.length ? sessionsTable(rows) : `No conversations in ${store.location} yet.`}\n`);
      return 0;
    }
    if (c.positional.length !== 1) throw new UsageError("lethe export needs one conversation id (lethe sessions --store … lists them)");
    const id = c.positional[0]!;
    if (!(await store.list()).some((i) => i.id === id)) throw new UsageError(`no conversation ${JSON.stringify(id)} in ${store.location} (lethe sessions --store … lists them)`);
    const t = await transcriptOf(store, id);
    const text = c.format === "json" ? `${JSON.stringify({ header: t.header, entries: t.entries }, null, 2)}\n` : exportMarkdown(id, t);
    if (c.output) writeFileSync(resolve(c.cwd, c.output), text);
    else out(text);
    return 0;
  } finally {
    await store.close();
  }
}
