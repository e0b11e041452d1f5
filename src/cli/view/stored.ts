// `lethe view --store …`: the folder the viewer reads for a store's conversation. The files
// store's conversation is a session folder already (read live); a PostgreSQL conversation is
// copied into a temporary one (as the store held it when the viewer started), removed at exit.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SessionPaths, TOOL_RESULTS_DIR, TRANSCRIPT_FILE } from "../../session/paths.ts";
import { serializeEntry } from "../../session/transcript.ts";
import { writeFileAtomic } from "../../session/tool-results.ts";
import { connectStore } from "../../store/connect.ts";
import { conversationFolder } from "../../store/files.ts";
import { UsageError } from "../errors.ts";
import { resolveConversation } from "../stored-session.ts";

export interface StoredFolder {
  paths: SessionPaths;
  /** Removes the copy (if one was made). */
  release(): Promise<void>;
  note?: string;
}

const pathsOf = (id: string, dir: string): SessionPaths => ({ id, dir, transcript: join(dir, TRANSCRIPT_FILE), toolResults: join(dir, TOOL_RESULTS_DIR) });

/** The conversation `wanted` (an id or a unique prefix; the newest when undefined) of the store at `location`. */
export async function storedSessionFolder(location: string, wanted: string | undefined): Promise<StoredFolder> {
  const store = await connectStore(location);
  try {
    let id: string;
    if (wanted === undefined) {
      const newest = (await store.list())[0];
      if (!newest) throw new UsageError(`no conversation to view in ${store.location} yet`);
      id = newest.id;
    } else id = await resolveConversation(store, wanted);
    if (store.kind === "files") return { paths: pathsOf(id, join(store.location, conversationFolder(id))), release: async () => {} };
    const lines = await (await store.conversation(id)).lines();
    const root = mkdtempSync(join(tmpdir(), "lethe-view-"));
    const paths = pathsOf(id, join(root, "session"));
    try {
      mkdirSync(paths.toolResults, { recursive: true });
      writeFileAtomic(paths.transcript, lines.map(serializeEntry).join(""));
    } catch (e) {
      rmSync(root, { recursive: true, force: true });
      throw e;
    }
    return { paths, release: async () => rmSync(root, { recursive: true, force: true }), note: `conversation ${id} as ${store.location} held it at ${new Date().toISOString()} (restart to see later turns)` };
  } finally {
    await store.close();
  }
}
