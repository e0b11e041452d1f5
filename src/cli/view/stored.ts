// `lethe view --store …`: the folder the viewer reads for a store's conversation. The files
// store's conversation is a session folder already (read live); a PostgreSQL conversation is
// copied into a temporary one (as the store held it when the viewer started), removed at exit.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SessionPaths, SessionNotFoundError, TOOL_RESULTS_DIR, TRANSCRIPT_FILE } from "../../session/paths.ts";
import { serializeEntry } from "../../session/transcript.ts";
import { writeFileAtomic } from "../../session/tool-results.ts";
import { connectStore } from "../../store/connect.ts";
import { conversationFolder } from "../../store/files.ts";
import { UsageError } from "../errors.ts";

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
    const all = await store.list();
    let id: string;
    if (wanted === undefined) {
      if (all.length === 0) throw new UsageError(`no conversation to view in ${store.location} yet`);
      id = all[0]!.id;
    } else {
      const matches = all.some((c) => c.id === wanted) ? [wanted] : all.filter((c) => c.id.startsWith(wanted)).map((c) => c.id);
      if (matches.length !== 1) {
        const shown = JSON.stringify(wanted.length > 80 ? `${wanted.slice(0, 80)}…` : wanted);
        throw new SessionNotFoundError(matches.length > 1 ? `lethe: conversation id ${shown} is ambiguous (${matches.length} conversations start with it); give more of it` : `lethe: no conversation ${shown} in ${store.location} (lethe sessions --store … lists them)`, wanted);
      }
      id = matches[0]!;
    }
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
