// The PostgreSQL conversation store (lethe/postgres): every process of a fleet reads and writes
// the same conversations. pg is an optional peer dependency, loaded only when this store is made.
//
// Concurrency: every write to a conversation locks its row first (SELECT … FOR UPDATE, or an
// UPDATE of it), so appends from many processes are serialised per conversation, each seq is
// recorded once, and entries are numbered (n) in the order they became visible. The engine's
// state is a compare-and-set on state_version in one UPDATE.
import { createHash, randomUUID } from "node:crypto";
import type { Pool, PoolClient } from "pg";
import { LetheInputError, checkHistory } from "../messages/input.ts";
import { show } from "../messages/input-values.ts";
import { contentKey } from "../messages/key.ts";
import type { Message } from "../messages/types.ts";
import { TRANSCRIPT_VERSION, type TranscriptLine } from "../session/transcript-format.ts";
import { StoreError, maskUrl } from "./errors.ts";
import { checkConversationId, checkMeter, checkUuids } from "./ids.ts";
import { checkUrl, ensureSchema, storeError, tables, type Queryable, type Tables } from "./postgres-schema.ts";
import type { AppendResult, Conversation, ConversationInfo, ConversationStore, EngineSnapshot, MeterState } from "./types.ts";

export interface PostgresStoreOptions {
  /** How long to wait for a connection (ms); default 10 s. */
  connectTimeoutMs?: number;
  /** A PostgreSQL schema to keep lethe's tables in (created if missing); default: the search_path's. */
  schema?: string;
}

/** No statement runs longer than this on the server, and the client gives up on an answer a little after. */
const STATEMENT_TIMEOUT_MS = 30_000;
const QUERY_TIMEOUT_MS = 35_000;
/** A process that stopped mid-transaction (a hung worker) loses its locks after this. */
const IDLE_IN_TRANSACTION_MS = 60_000;
const NO_PG = "lethe: the PostgreSQL store needs the pg package: npm install pg";

type PgModule = typeof import("pg");

async function loadPg(): Promise<PgModule> {
  try {
    const m = (await import("pg")) as PgModule & { default?: PgModule };
    return m.default ?? m;
  } catch (e) {
    const err = e as { code?: unknown; message?: unknown };
    if (err.code === "ERR_MODULE_NOT_FOUND" || err.code === "MODULE_NOT_FOUND") throw new StoreError("store_failed", NO_PG, { cause: e });
    throw new StoreError("store_failed", `lethe: the pg package failed to load: ${String(err.message).split("\n")[0]}`, { cause: e });
  }
}

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** An id PostgreSQL's text can hold: no NUL (the one character text cannot store). */
function checkText(v: unknown, where: string): asserts v is string {
  if (typeof v !== "string") throw new LetheInputError(where, `must be a string, got ${show(v)}`);
  if (v.includes("\0")) throw new LetheInputError(where, "holds a NUL character, which PostgreSQL cannot store");
}

/**
 * Well-formed Unicode: a lone surrogate has no UTF-8 form, so PostgreSQL would store U+FFFD
 * instead and two such ids would become one (and encodeURIComponent throws on it).
 */
function checkWellFormed(v: string, where: string): void {
  // In u-mode a proper pair is one code point, so only unpaired halves match.
  if (/\p{Cs}/u.test(v)) throw new LetheInputError(where, "holds a lone surrogate (not well-formed Unicode)");
}

/** A tool_use id: any text PostgreSQL can hold. */
function checkToolId(v: unknown, where: string): asserts v is string {
  checkText(v, where);
  checkWellFormed(v, where);
}

function toJson(v: unknown, where: string): string {
  try {
    const json = JSON.stringify(v);
    if (json === undefined) throw new Error("nothing to write");
    return json;
  } catch (e) {
    throw new LetheInputError(where, `cannot be written as JSON (${e instanceof Error ? e.message.split("\n")[0] : "unknown error"})`);
  }
}

/** The pool, with every call mapped to one StoreError line at its boundary. */
class Db {
  closed = false;
  constructor(
    readonly pool: Pool,
    readonly t: Tables,
    readonly masked: string,
    readonly timeouts: { connectMs: number; queryMs: number },
  ) {}

  /** Runs one public method's work: refused after close(), every failure mapped. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreError("store_failed", `lethe: the PostgreSQL store at ${this.masked} is closed`);
    try {
      return await work();
    } catch (e) {
      throw storeError(e, this.masked, this.timeouts);
    }
  }

  async query(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    return (await this.pool.query(sql, params)).rows as Record<string, unknown>[];
  }

  async tx<T>(work: (c: PoolClient) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    try {
      await c.query("BEGIN");
      const r = await work(c);
      await c.query("COMMIT");
      c.release();
      return r;
    } catch (e) {
      // A connection that cannot even roll back is dropped rather than reused.
      const broken = await c.query("ROLLBACK").then(
        () => false,
        () => true,
      );
      c.release(broken ? (e as Error) : undefined);
      throw e;
    }
  }
}

interface Row {
  seq: number | null;
  key: string | null;
  type: string;
  body: string;
}

class PgConversation implements Conversation {
  constructor(
    readonly id: string,
    private readonly cid: string,
    private readonly db: Db,
  ) {}

  private get t() {
    return this.db.t;
  }

  messageCount(): Promise<number> {
    return this.db.run(async () => Number((await this.db.query(`SELECT messages FROM ${this.t.conversations} WHERE cid = $1`, [this.cid]))[0]?.messages ?? 0));
  }

  appendMessages(from: number, messages: readonly Message[], opts?: { uuids?: readonly string[] }): Promise<AppendResult> {
    return this.db.run(async () => {
      if (!Number.isSafeInteger(from) || from < 0 || from > 2 ** 31 - 1) throw new LetheInputError("appendMessages(from)", `must be a whole number ≥ 0, got ${show(from)}`);
      checkHistory(messages, "appendMessages(messages)");
      const uuids = checkUuids(opts, messages.length);
      if (from + messages.length > 2 ** 31 - 1) throw new LetheInputError("appendMessages(messages)", "would take the conversation past 2,147,483,647 messages");
      const ts = new Date().toISOString();
      const bodies = messages.map((message, i) => toJson({ type: "message", uuid: uuids?.[i] ?? randomUUID(), ts, seq: from + i, message }, `appendMessages(messages[${i}])`));
      const keys = messages.map((m, i) => {
        const k = contentKey(m);
        if (k === undefined) throw new LetheInputError(`appendMessages(messages[${i}]).content`, "cannot be written as JSON");
        return k;
      });
      return this.db.tx((c) => this.append(c, from, messages, keys, bodies, ts));
    });
  }

  /** The transaction of appendMessages, with the conversation row locked. */
  private async append(c: PoolClient, from: number, messages: readonly Message[], keys: string[], bodies: string[], ts: string): Promise<AppendResult> {
    const t = this.t;
    const count = Number((await c.query(`SELECT messages FROM ${t.conversations} WHERE cid = $1 FOR UPDATE`, [this.cid])).rows[0]?.messages ?? 0);
    if (from > count) {
      throw new LetheInputError("appendMessages(from)", `is ${from}, past the end: ${count} message${count === 1 ? " is" : "s are"} recorded (a gap would lose their order)`);
    }
    const overlap = Math.min(from + messages.length, count);
    const stored = new Map<number, string | null>();
    if (overlap > from) {
      const r = await c.query(`SELECT seq, key FROM ${t.entries} WHERE conversation = $1 AND seq >= $2 AND seq < $3`, [this.cid, from, overlap]);
      for (const row of r.rows as { seq: number; key: string | null }[]) stored.set(row.seq, row.key);
    }
    const rows: Row[] = [];
    const result: AppendResult = { added: 0, existing: 0, rewritten: [] };
    for (let i = 0; i < messages.length; i++) {
      const seq = from + i;
      if (seq >= count) rows.push({ seq, key: keys[i]!, type: "message", body: bodies[i]! });
      else if (stored.get(seq) === keys[i]) result.existing++;
      else {
        // The host rewrote its history: the recorded message stays, the new one is kept beside it.
        result.rewritten.push(seq);
        rows.push({ seq: null, key: keys[i]!, type: "event", body: toJson({ type: "event", ts, name: "rewritten", seq, message: messages[i] }, `appendMessages(messages[${i}])`) });
      }
    }
    if (rows.length === 0) return result;
    const inserted = await c.query(
      `INSERT INTO ${t.entries} (conversation, seq, key, type, body)
       SELECT $1, x.seq, x.key, x.type, x.body FROM unnest($2::int[], $3::text[], $4::text[], $5::json[]) WITH ORDINALITY AS x(seq, key, type, body, ord)
       ORDER BY x.ord
       ON CONFLICT (conversation, seq) WHERE seq IS NOT NULL DO NOTHING
       RETURNING seq`,
      [this.cid, rows.map((r) => r.seq), rows.map((r) => r.key), rows.map((r) => r.type), rows.map((r) => r.body)],
    );
    const added = (inserted.rows as { seq: number | null }[]).filter((r) => r.seq !== null).length;
    const messageRows = rows.filter((r) => r.seq !== null).length;
    result.added = added;
    result.existing += messageRows - added; // conflicts: only if the count and the rows disagreed
    await c.query(`UPDATE ${t.conversations} SET messages = GREATEST(messages, $2::int), updated = now() WHERE cid = $1`, [this.cid, from + messages.length]);
    return result;
  }

  appendEntry(entry: Parameters<Conversation["appendEntry"]>[0]): Promise<void> {
    return this.db.run(async () => {
      const e = entry as { type?: unknown };
      if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw new LetheInputError("appendEntry(entry)", `must be an object, got ${show(entry)}`);
      if (e.type !== "boundary" && e.type !== "event") throw new LetheInputError("appendEntry(entry).type", `must be "boundary" or "event", got ${show(e.type)}`);
      const body = toJson({ ...entry, ts: new Date().toISOString() }, "appendEntry(entry)");
      const t = this.t;
      // The UPDATE locks the conversation row: the entry lands after every append before it.
      await this.db.query(
        `WITH c AS (UPDATE ${t.conversations} SET updated = now() WHERE cid = $1 RETURNING cid)
         INSERT INTO ${t.entries} (conversation, type, body) SELECT cid, $2, $3::json FROM c`,
        [this.cid, e.type, body],
      );
    });
  }

  state(): Promise<EngineSnapshot | null> {
    return this.db.run(async () => ((await this.db.query(`SELECT state FROM ${this.t.conversations} WHERE cid = $1`, [this.cid]))[0]?.state as EngineSnapshot | null | undefined) ?? null);
  }

  meter(): Promise<MeterState | null> {
    return this.db.run(async () => checkMeter((await this.db.query(`SELECT meter FROM ${this.t.conversations} WHERE cid = $1`, [this.cid]))[0]?.meter));
  }

  saveMeter(meter: MeterState): Promise<void> {
    return this.db.run(async () => {
      const m = checkMeter(meter, "saveMeter(meter)");
      await this.db.query(`UPDATE ${this.t.conversations} SET meter = $2::json WHERE cid = $1`, [this.cid, JSON.stringify(m)]);
    });
  }

  saveState(expected: number, next: Omit<EngineSnapshot, "version" | "saved">): Promise<{ saved: boolean; state: EngineSnapshot }> {
    return this.db.run(async () => {
      if (!Number.isSafeInteger(expected) || expected < 0 || expected >= 2 ** 31 - 1) throw new LetheInputError("saveState(expected)", `must be a whole number ≥ 0, got ${show(expected)}`);
      if (typeof next !== "object" || next === null || Array.isArray(next)) throw new LetheInputError("saveState(next)", `must be an object, got ${show(next)}`);
      const json = toJson({ ...next, version: expected + 1, saved: new Date().toISOString() }, "saveState(next)");
      const t = this.t;
      const won = await this.db.query(`UPDATE ${t.conversations} SET state = $3::json, state_version = $2::int + 1, updated = now() WHERE cid = $1 AND state_version = $2::int RETURNING cid`, [this.cid, expected, json]);
      if (won.length === 1) return { saved: true, state: JSON.parse(json) as EngineSnapshot };
      const row = (await this.db.query(`SELECT state, state_version FROM ${t.conversations} WHERE cid = $1`, [this.cid]))[0];
      const state = row?.state as EngineSnapshot | null | undefined;
      // Nothing stored yet, yet the caller expected a version: there is no winner's state to give.
      if (!state) throw new LetheInputError("saveState(expected)", `is ${expected}, but no state is saved yet (expected 0)`);
      return { saved: false, state };
    });
  }

  saveResult(toolUseId: string, text: string): Promise<string> {
    return this.db.run(async () => {
      const ref = this.resultRef(toolUseId);
      if (typeof text !== "string") throw new LetheInputError("saveResult(text)", `must be a string, got ${show(text)}`);
      const t = this.t;
      await this.db.query(
        `WITH c AS (UPDATE ${t.conversations} SET updated = now() WHERE cid = $1 RETURNING cid)
         INSERT INTO ${t.results} (conversation, tool_sha256, tool_use_id, content) SELECT cid, $2, $3, $4::json FROM c
         ON CONFLICT (conversation, tool_sha256) DO UPDATE SET content = excluded.content`,
        [this.cid, sha256(toolUseId), toolUseId, JSON.stringify(text)],
      );
      return ref;
    });
  }

  resultRef(toolUseId: string): string {
    checkToolId(toolUseId, "resultRef(toolUseId)");
    return `lethe-store:conversation/${encodeURIComponent(this.id)}/tool-results/${encodeURIComponent(toolUseId)}`;
  }

  loadResult(toolUseId: string): Promise<string | undefined> {
    return this.db.run(async () => {
      checkToolId(toolUseId, "loadResult(toolUseId)");
      const rows = await this.db.query(`SELECT content FROM ${this.t.results} WHERE conversation = $1 AND tool_sha256 = $2`, [this.cid, sha256(toolUseId)]);
      return rows[0]?.content as string | undefined;
    });
  }

  lines(): Promise<TranscriptLine[]> {
    return this.db.run(async () => {
      const t = this.t;
      const [head, entries] = await Promise.all([
        this.db.query(`SELECT created, header FROM ${t.conversations} WHERE cid = $1`, [this.cid]),
        this.db.query(`SELECT body FROM ${t.entries} WHERE conversation = $1 ORDER BY n`, [this.cid]),
      ]);
      const h = (head[0]?.header ?? {}) as { cwd?: string; model?: string };
      const created = head[0]?.created instanceof Date ? (head[0].created as Date).toISOString() : String(head[0]?.created);
      const header: TranscriptLine = { type: "session", id: this.id, created, cwd: h.cwd ?? "", ...(h.model !== undefined ? { model: h.model } : {}), version: TRANSCRIPT_VERSION };
      return [header, ...entries.map((r) => r.body as TranscriptLine)];
    });
  }
}

class PgStore implements ConversationStore {
  readonly kind = "postgres" as const;
  private closing: Promise<void> | undefined;
  constructor(private readonly db: Db) {}

  get location(): string {
    return this.db.masked;
  }

  conversation(id: string, init?: { cwd?: string; model?: string }): Promise<Conversation> {
    return this.db.run(async () => {
      checkConversationId(id);
      checkWellFormed(id, "conversationId");
      if (init !== undefined && (typeof init !== "object" || init === null)) throw new LetheInputError("conversation(init)", `must be an object, got ${show(init)}`);
      if (init?.cwd !== undefined) checkText(init.cwd, "conversation(init.cwd)");
      if (init?.model !== undefined) checkText(init.model, "conversation(init.model)");
      const t = this.db.t;
      const key = sha256(id);
      const find = async () => (await this.db.query(`SELECT cid FROM ${t.conversations} WHERE id_sha256 = $1`, [key]))[0]?.cid as string | undefined;
      // Opening an existing conversation writes nothing; the first opener's cwd and model stay.
      let cid = await find();
      if (cid === undefined) {
        const header = toJson({ cwd: init?.cwd ?? process.cwd(), ...(init?.model !== undefined ? { model: init.model } : {}) }, "conversation(init)");
        const made = await this.db.query(`INSERT INTO ${t.conversations} (id, id_sha256, header) VALUES ($1, $2, $3::json) ON CONFLICT (id_sha256) DO NOTHING RETURNING cid`, [id, key, header]);
        // Someone else created it meanwhile: their row, read in a new snapshot.
        cid = (made[0]?.cid as string | undefined) ?? (await find());
      }
      if (cid === undefined) throw new StoreError("store_failed", `lethe: the PostgreSQL store at ${this.db.masked} failed: conversation ${JSON.stringify(id.slice(0, 80))} could not be created`);
      return new PgConversation(id, String(cid), this.db);
    });
  }

  list(): Promise<ConversationInfo[]> {
    return this.db.run(async () => {
      const rows = await this.db.query(`SELECT id, messages, updated, header->>'cwd' AS cwd FROM ${this.db.t.conversations} ORDER BY updated DESC, cid DESC`);
      return rows.map((r) => ({ id: r.id as string, messages: Number(r.messages), ...(typeof r.cwd === "string" ? { cwd: r.cwd } : {}), updated: (r.updated as Date).toISOString() }));
    });
  }

  close(): Promise<void> {
    this.db.closed = true;
    return (this.closing ??= this.db.pool.end().catch(() => {}));
  }
}

/**
 * Opens the PostgreSQL store at `url` (postgres:// or postgresql://): connects, and creates or
 * checks the schema, so a wrong URL, password or version fails here, in one StoreError line.
 */
export async function createPostgresStore(url: string, opts: PostgresStoreOptions = {}): Promise<ConversationStore> {
  const masked = maskUrl(typeof url === "string" ? url : "");
  checkUrl(url, masked);
  const connectMs = opts.connectTimeoutMs ?? 10_000;
  if (typeof connectMs !== "number" || !(connectMs > 0) || !Number.isFinite(connectMs)) throw new LetheInputError("createPostgresStore(opts.connectTimeoutMs)", `must be a positive number of milliseconds, got ${show(connectMs)}`);
  if (opts.schema !== undefined) {
    checkText(opts.schema, "createPostgresStore(opts.schema)");
    if (opts.schema.length === 0 || Buffer.byteLength(opts.schema) > 63) throw new LetheInputError("createPostgresStore(opts.schema)", "must be 1–63 bytes long (a PostgreSQL name)");
  }
  const pg = await loadPg();
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: connectMs,
    idleTimeoutMillis: 10_000,
    allowExitOnIdle: true,
    application_name: "lethe",
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    keepAlive: true,
  });
  // An idle connection that dies (a server restart) is dropped by the pool; the next call
  // reconnects. Without a listener that 'error' event would end the process.
  pool.on("error", () => {});
  const db = new Db(pool, tables(opts.schema === undefined ? undefined : pg.escapeIdentifier(opts.schema)), masked, { connectMs, queryMs: QUERY_TIMEOUT_MS });
  try {
    await db.run(async () => {
      const c = await pool.connect();
      try {
        await ensureSchema(c as unknown as Queryable, db.t, masked);
        c.release();
      } catch (e) {
        c.release(e as Error);
        throw e;
      }
    });
  } catch (e) {
    db.closed = true;
    await pool.end().catch(() => {});
    throw e;
  }
  return new PgStore(db);
}
