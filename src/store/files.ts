// The files store, lethe's embedded default: one folder per conversation, today's session layout.
//
//   <root>/<conversation>/transcript.jsonl   header, then messages (each with its seq), boundaries, events
//   <root>/<conversation>/tool-results/      full texts layers moved out of the context
//   <root>/<conversation>/state.json         the engine's state (EngineSnapshot), written atomically
//   <root>/<conversation>/seq.json           a checkpoint: messages counted up to a byte offset
//
// The transcript is the truth; seq.json only saves reading it again: a process killed between the
// two is caught up from the checkpoint's offset. Appends and compare-and-sets hold a short lock
// file, so processes sharing a machine record each message once. A session written before seqs
// existed is counted once on first use and goes on from there.
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, statSync, writeSync } from "node:fs";
import { createHash, randomUUID } from "node:crypto";
import { join, resolve } from "node:path";
import { LetheInputError, checkHistory } from "../messages/input.ts";
import { contentKey } from "../messages/key.ts";
import type { Message } from "../messages/types.ts";
import { loadTranscript } from "../session/transcript-read.ts";
import { type SessionHeader, TORN_TAIL_EVENT, TRANSCRIPT_VERSION, type TranscriptLine } from "../session/transcript-format.ts";
import { resultFileName, writeFileAtomic } from "../session/tool-results.ts";
import { StoreError } from "./errors.ts";
import { withFileLock } from "./file-lock.ts";
import { checkConversationId, checkMeter, checkUuids } from "./ids.ts";
import type { AppendResult, Conversation, ConversationInfo, ConversationStore, EngineSnapshot, MeterState } from "./types.ts";

/** Keys of this many newest messages are kept in the checkpoint (a retried turn compares against them). */
const KEYS_KEPT = 256;
const MESSAGE_PREFIX = '{"type":"message"';

interface Checkpoint {
  count: number;
  /** The transcript's bytes the count covers (whole lines). */
  bytes: number;
  /** Keys of messages [count - keys.length, count). */
  keys: string[];
}

/** The folder of a conversation: its id when that is a plain name, else a readable prefix and a hash. */
export function conversationFolder(id: string): string {
  if (/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$/.test(id) && !id.endsWith(".")) return id;
  const safe = id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 60);
  return `${safe}-${createHash("sha256").update(id).digest("hex").slice(0, 16)}`;
}

const fail = (what: string, e: unknown): StoreError =>
  e instanceof StoreError || e instanceof LetheInputError ? (e as StoreError) : new StoreError("store_failed", `lethe: ${what}: ${(e as Error)?.message?.split("\n")[0] ?? String(e)}`, { cause: e });

function readJson<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/** Counts the messages of `path` from the checkpoint's offset on (whole lines only). */
function catchUp(path: string, cp: Checkpoint): Checkpoint {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return cp;
    throw e;
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= cp.bytes) return cp;
    const buf = Buffer.alloc(size - cp.bytes);
    readSync(fd, buf, 0, buf.length, cp.bytes);
    const end = buf.lastIndexOf(0x0a);
    if (end < 0) return cp;
    let { count } = cp;
    const keys = cp.keys.slice();
    for (const line of buf.subarray(0, end).toString("utf8").split("\n")) {
      if (!line.startsWith(MESSAGE_PREFIX)) continue;
      let entry: { seq?: unknown; key?: unknown; message?: Message };
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // a torn line in the middle: the loader reports it
      }
      const seq = typeof entry.seq === "number" ? entry.seq : count;
      if (seq !== count) continue; // a rewritten copy of an earlier seq is an event, never a message
      keys.push(typeof entry.key === "string" ? entry.key : (entry.message && contentKey(entry.message)) ?? "");
      count++;
    }
    return { count, bytes: cp.bytes + end + 1, keys: keys.slice(-KEYS_KEPT) };
  } finally {
    closeSync(fd);
  }
}

/** Whether the file at `path` holds exactly `text` (a missing file does not). */
function sameText(path: string, text: string): boolean {
  try {
    const st = statSync(path);
    return st.size === Buffer.byteLength(text, "utf8") && readFileSync(path, "utf8") === text;
  } catch {
    return false;
  }
}

class FileConversation implements Conversation {
  private readonly transcript: string;
  private readonly lock: string;
  private readonly results: string;
  constructor(
    readonly id: string,
    private readonly dir: string,
  ) {
    this.transcript = join(dir, "transcript.jsonl");
    this.lock = join(dir, "append.lock");
    this.results = join(dir, "tool-results");
  }

  /** Creates the folder and the header line when new (under the lock). */
  async init(init: { cwd?: string; model?: string }): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    if (existsSync(this.transcript)) return;
    await withFileLock(this.lock, () => {
      if (existsSync(this.transcript)) return;
      const header: SessionHeader = { type: "session", id: this.id, created: new Date().toISOString(), cwd: init.cwd ?? process.cwd(), ...(init.model ? { model: init.model } : {}), version: TRANSCRIPT_VERSION };
      writeFileAtomic(this.transcript, `${JSON.stringify(header)}\n`);
    });
  }

  private checkpoint(): Checkpoint {
    const cp = catchUp(this.transcript, readJson<Checkpoint>(join(this.dir, "seq.json")) ?? { count: 0, bytes: 0, keys: [] });
    return cp;
  }

  /** Appends whole lines in one write; a torn last line (a killed writer) is closed off first. */
  private write(lines: string[]): void {
    const fd = openSync(this.transcript, "a+");
    try {
      const size = fstatSync(fd).size;
      let prefix = "";
      if (size > 0) {
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, size - 1);
        if (last[0] !== 0x0a) prefix = `\n${JSON.stringify({ type: "event", ts: new Date().toISOString(), name: TORN_TAIL_EVENT })}\n`;
      }
      const buf = Buffer.from(prefix + lines.join(""), "utf8");
      for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
    } finally {
      closeSync(fd);
    }
  }

  async messageCount(): Promise<number> {
    try {
      return this.checkpoint().count;
    } catch (e) {
      throw fail(`cannot read conversation ${JSON.stringify(this.id)}`, e);
    }
  }

  appendMessages(from: number, messages: readonly Message[], opts?: { uuids?: readonly string[] }): Promise<AppendResult> {
    if (!Number.isSafeInteger(from) || from < 0) return Promise.reject(new LetheInputError("appendMessages", `from must be a whole number ≥ 0, got ${String(from)}`));
    let uuids: readonly string[] | undefined;
    try {
      checkHistory(messages, "appendMessages: messages");
      uuids = checkUuids(opts, messages.length);
    } catch (e) {
      return Promise.reject(e);
    }
    return withFileLock(this.lock, () => {
      try {
        let cp = this.checkpoint();
        if (from > cp.count) throw new LetheInputError("appendMessages", `from (${from}) is past the ${cp.count} messages recorded: a gap would lose their order`);
        const out: AppendResult = { added: 0, existing: 0, rewritten: [] };
        const lines: string[] = [];
        const ts = new Date().toISOString();
        let older: Map<number, string> | undefined;
        messages.forEach((message, i) => {
          const seq = from + i;
          const key = contentKey(message);
          if (key === undefined) throw new LetheInputError(`appendMessages: message ${i}`, "cannot be written as JSON");
          if (seq < cp.count) {
            const first = cp.count - cp.keys.length;
            const stored = seq >= first ? cp.keys[seq - first] : (older ??= this.keysBefore(first)).get(seq);
            if (stored === key) out.existing++;
            else {
              out.rewritten.push(seq);
              lines.push(`${JSON.stringify({ type: "event", ts, name: "rewritten", seq, key, message })}\n`);
            }
            return;
          }
          lines.push(`${JSON.stringify({ type: "message", uuid: uuids?.[i] ?? randomUUID(), ts, seq, key, message })}\n`);
          out.added++;
        });
        if (lines.length === 0) return out;
        this.write(lines);
        cp = catchUp(this.transcript, cp);
        writeFileAtomic(join(this.dir, "seq.json"), JSON.stringify(cp));
        return out;
      } catch (e) {
        throw fail(`cannot record messages of conversation ${JSON.stringify(this.id)}`, e);
      }
    });
  }

  /** Keys of messages before `first` (a rare retry of an old turn): read from the transcript. */
  private keysBefore(first: number): Map<number, string> {
    const keys = new Map<number, string>();
    let seq = 0;
    for (const e of loadTranscript(this.transcript).entries) {
      if (e.type !== "message" || seq >= first) continue;
      keys.set(seq++, typeof e.key === "string" ? e.key : (contentKey(e.message) ?? ""));
    }
    return keys;
  }

  appendEntry(entry: Parameters<Conversation["appendEntry"]>[0]): Promise<void> {
    const type = (entry as { type?: unknown } | null)?.type;
    if (type !== "boundary" && type !== "event") return Promise.reject(new LetheInputError("appendEntry", `takes a boundary or an event (messages go through appendMessages), got type ${JSON.stringify(type)}`));
    return withFileLock(this.lock, () => {
      try {
        this.write([`${JSON.stringify({ ...entry, ts: new Date().toISOString() })}\n`]);
      } catch (e) {
        throw fail(`cannot record in conversation ${JSON.stringify(this.id)}`, e);
      }
    });
  }

  async state(): Promise<EngineSnapshot | null> {
    try {
      return readJson<EngineSnapshot>(join(this.dir, "state.json"));
    } catch (e) {
      throw fail(`cannot read the state of conversation ${JSON.stringify(this.id)}`, e);
    }
  }

  saveState(expected: number, next: Omit<EngineSnapshot, "version" | "saved">): Promise<{ saved: boolean; state: EngineSnapshot }> {
    return withFileLock(this.lock, () => {
      try {
        const path = join(this.dir, "state.json");
        const stored = readJson<EngineSnapshot>(path);
        if ((stored?.version ?? 0) !== expected) return { saved: false, state: stored! };
        const state: EngineSnapshot = { ...next, version: expected + 1, saved: new Date().toISOString() };
        writeFileAtomic(path, JSON.stringify(state));
        return { saved: true, state };
      } catch (e) {
        throw fail(`cannot save the state of conversation ${JSON.stringify(this.id)}`, e);
      }
    });
  }

  async meter(): Promise<MeterState | null> {
    try {
      return checkMeter(readJson<unknown>(join(this.dir, "meter.json")));
    } catch (e) {
      if (e instanceof SyntaxError) return null; // a damaged measure is no measure
      throw fail(`cannot read the meter of conversation ${JSON.stringify(this.id)}`, e);
    }
  }

  async saveMeter(meter: MeterState): Promise<void> {
    const m = checkMeter(meter, "saveMeter(meter)");
    try {
      writeFileAtomic(join(this.dir, "meter.json"), JSON.stringify(m));
    } catch (e) {
      throw fail(`cannot save the meter of conversation ${JSON.stringify(this.id)}`, e);
    }
  }

  resultRef(toolUseId: string): string {
    return join(this.results, resultFileName(toolUseId));
  }

  async saveResult(toolUseId: string, text: string): Promise<string> {
    try {
      mkdirSync(this.results, { recursive: true });
      const path = this.resultRef(toolUseId);
      // Saved before with the same text (another engine on this conversation): not written again.
      if (sameText(path, text)) return path;
      writeFileAtomic(path, text);
      return path;
    } catch (e) {
      throw fail(`cannot keep a tool result of conversation ${JSON.stringify(this.id)}`, e);
    }
  }

  async loadResult(toolUseId: string): Promise<string | undefined> {
    try {
      return readFileSync(this.resultRef(toolUseId), "utf8");
    } catch {
      return undefined;
    }
  }

  async lines(): Promise<TranscriptLine[]> {
    const t = loadTranscript(this.transcript);
    return t.header ? [t.header, ...t.entries] : t.entries;
  }
}

/** A files store rooted at `root` (created on first use). */
export function createFilesStore(root: string): ConversationStore {
  const dir = resolve(root);
  return {
    kind: "files",
    location: dir,
    async conversation(id, init = {}) {
      checkConversationId(id);
      const c = new FileConversation(id, join(dir, conversationFolder(id)));
      try {
        await c.init(init);
      } catch (e) {
        throw fail(`cannot open conversation ${JSON.stringify(id)} in ${dir}`, e);
      }
      return c;
    },
    async list() {
      const out: ConversationInfo[] = [];
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw fail(`cannot list ${dir}`, e);
      }
      for (const name of names) {
        const transcript = join(dir, name, "transcript.jsonl");
        let updated: Date;
        try {
          updated = statSync(transcript).mtime;
        } catch {
          continue;
        }
        const first = readFileSync(transcript, "utf8").split("\n", 1)[0] ?? "";
        let id = name;
        let cwd: string | undefined;
        try {
          const h = JSON.parse(first) as { type?: string; id?: unknown; cwd?: unknown };
          if (h.type === "session" && typeof h.id === "string") id = h.id;
          if (h.type === "session" && typeof h.cwd === "string") cwd = h.cwd;
        } catch {
          // no header: named by its folder
        }
        const cp = catchUp(transcript, readJson<Checkpoint>(join(dir, name, "seq.json")) ?? { count: 0, bytes: 0, keys: [] });
        out.push({ id, messages: cp.count, ...(cwd !== undefined ? { cwd } : {}), updated: updated.toISOString() });
      }
      return out.sort((a, b) => b.updated.localeCompare(a.updated));
    },
    async close() {},
  };
}
