// The PostgreSQL store's schema (versioned, created on first use) and its error mapping: every
// failure of pg becomes one StoreError line with a code, never a stack and never a hang.
//
// Why the tables differ a little from the obvious design:
//   - Conversations are found by the SHA-256 of their id, and entries and results point at a
//     bigint key: an id may be 1,000 characters of any script (3,000 UTF-8 bytes), more than a
//     btree index row holds (2,704 bytes), so `id text primary key` would refuse some ids.
//   - Bodies, headers, states and results are `json`, not `jsonb`: jsonb refuses "\u0000" and
//     lone surrogates, which tool output does hold; json keeps the exact text we wrote.
//   - `messages` on the conversation row counts messages, so messageCount and list stay O(1).
import { createHash } from "node:crypto";
import { LetheError } from "../errors.ts";
import { StoreError } from "./errors.ts";

/** The schema version this lethe writes and reads. */
export const SCHEMA_VERSION = 2;

/** Table names, qualified with the store's schema when it has one (identifiers quoted by pg's escapeIdentifier). */
export interface Tables {
  schema: string;
  conversations: string;
  entries: string;
  results: string;
  /** The quoted schema, or "" for the search_path's. */
  ns: string;
}

export function tables(quotedSchema: string | undefined): Tables {
  const q = (name: string) => (quotedSchema ? `${quotedSchema}.${name}` : name);
  return { schema: q("lethe_schema"), conversations: q("lethe_conversations"), entries: q("lethe_entries"), results: q("lethe_results"), ns: quotedSchema ?? "" };
}

/** The statements of each version, in order: migrations[v - 1] brings a store from v - 1 to v. */
function migrations(t: Tables): string[][] {
  return [
    [
      `CREATE TABLE IF NOT EXISTS ${t.conversations} (
        cid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL,
        id_sha256 bytea NOT NULL UNIQUE,
        created timestamptz NOT NULL DEFAULT now(),
        updated timestamptz NOT NULL DEFAULT now(),
        header json NOT NULL,
        messages int NOT NULL DEFAULT 0,
        state json,
        state_version int NOT NULL DEFAULT 0)`,
      `CREATE INDEX IF NOT EXISTS lethe_conversations_updated ON ${t.conversations} (updated DESC)`,
      `CREATE TABLE IF NOT EXISTS ${t.entries} (
        conversation bigint NOT NULL REFERENCES ${t.conversations} (cid),
        n bigint GENERATED ALWAYS AS IDENTITY,
        seq int,
        key text,
        type text NOT NULL,
        body json NOT NULL,
        ts timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (conversation, n))`,
      `CREATE UNIQUE INDEX IF NOT EXISTS lethe_entries_seq ON ${t.entries} (conversation, seq) WHERE seq IS NOT NULL`,
      `CREATE TABLE IF NOT EXISTS ${t.results} (
        conversation bigint NOT NULL REFERENCES ${t.conversations} (cid),
        tool_sha256 bytea NOT NULL,
        tool_use_id text NOT NULL,
        content json NOT NULL,
        PRIMARY KEY (conversation, tool_sha256))`,
    ],
    // 2: what engines learned from the replies (the meter's correction, the last reply's time).
    [`ALTER TABLE ${t.conversations} ADD COLUMN IF NOT EXISTS meter json`],
  ];
}

/** The minimal client surface the schema code needs (a pg Client or PoolClient). */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

const UNDEFINED_TABLE = "42P01";

async function storedVersion(c: Queryable, t: Tables): Promise<number> {
  const r = await c.query(`SELECT coalesce(max(version), 0) AS v FROM ${t.schema}`);
  return Number(r.rows[0]?.v ?? 0);
}

/**
 * Brings the store to SCHEMA_VERSION. A store already there costs one query; otherwise one
 * transaction under an advisory lock (keyed by the schema) creates or migrates it, so many
 * workers starting at once against an empty database run the DDL exactly once.
 */
export async function ensureSchema(c: Queryable, t: Tables, masked: string): Promise<void> {
  const tooNew = (v: number) =>
    new StoreError("store_schema", `lethe: the store at ${masked} has schema version ${v}, newer than this lethe (${SCHEMA_VERSION}): upgrade lethe`);
  try {
    const v = await storedVersion(c, t);
    if (v > SCHEMA_VERSION) throw tooNew(v);
    if (v === SCHEMA_VERSION) return;
  } catch (e) {
    if ((e as { code?: unknown }).code !== UNDEFINED_TABLE) throw e;
  }
  const lock = createHash("sha256").update(`lethe-schema:${t.ns}`).digest().readInt32BE(0);
  await c.query("BEGIN");
  try {
    await c.query("SELECT pg_advisory_xact_lock($1::int, $2::int)", [0x1e7e, lock]);
    if (t.ns) await c.query(`CREATE SCHEMA IF NOT EXISTS ${t.ns}`);
    await c.query(`CREATE TABLE IF NOT EXISTS ${t.schema} (version int NOT NULL)`);
    const v = await storedVersion(c, t);
    if (v > SCHEMA_VERSION) throw tooNew(v);
    const steps = migrations(t);
    for (let next = v + 1; next <= SCHEMA_VERSION; next++) for (const sql of steps[next - 1]!) await c.query(sql);
    if (v < SCHEMA_VERSION) {
      await c.query(`DELETE FROM ${t.schema}`);
      await c.query(`INSERT INTO ${t.schema} (version) VALUES ($1)`, [SCHEMA_VERSION]);
    }
    await c.query("COMMIT");
  } catch (e) {
    await c.query("ROLLBACK").catch(() => {});
    throw e;
  }
}

// ── errors ───────────────────────────────────────────────────────────────────────────

/** The first line of a message, bounded, so a StoreError is always one line. */
function firstLine(text: string): string {
  const line = text.split("\n")[0]!.trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/** The code of a Node socket error, also when Node wraps several attempts in an AggregateError. */
function sysCode(e: { code?: unknown; errors?: unknown }): string | undefined {
  if (typeof e.code === "string") return e.code;
  const first = Array.isArray(e.errors) ? (e.errors[0] as { code?: unknown } | undefined) : undefined;
  return typeof first?.code === "string" ? first.code : undefined;
}

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found (DNS lookup failed)",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  ECONNRESET: "connection reset",
  EPIPE: "connection lost",
  // PostgreSQL refusing connections while it starts or stops.
  "57P01": "the server is shutting down",
  "57P02": "the server is shutting down",
  "57P03": "the server is not accepting connections yet",
};

/**
 * What a failure of pg means for the user, as one StoreError line (the original is its cause).
 * lethe's own errors (bad arguments, a newer schema) pass through as they are.
 */
export function storeError(e: unknown, masked: string, timeouts: { connectMs: number; queryMs: number }): LetheError {
  if (e instanceof LetheError) return e;
  const err = (typeof e === "object" && e !== null ? e : { message: String(e) }) as { code?: unknown; errors?: unknown; message?: unknown };
  const code = sysCode(err);
  const message = firstLine(typeof err.message === "string" ? err.message : String(e));
  const unreachable = (why: string) => new StoreError("store_unreachable", `lethe: cannot reach the PostgreSQL store at ${masked}: ${why}`, { cause: e });
  if (code && UNREACHABLE[code]) return unreachable(UNREACHABLE[code]);
  if (code === "28P01" || code === "28000") return new StoreError("store_auth", `lethe: the PostgreSQL store at ${masked} refused the credentials: ${message}`, { cause: e });
  if (code === "3D000") {
    return new StoreError("store_failed", `lethe: the PostgreSQL store at ${masked} has no such database (${message}): create it first, e.g. with createdb`, { cause: e });
  }
  if (code === undefined || !/^[0-9A-Z]{5}$/.test(code)) {
    // pg's own: "Connection terminated due to connection timeout", "Query read timeout",
    // "timeout exceeded when trying to connect", "Connection terminated unexpectedly".
    if (/timeout/i.test(message)) {
      const ms = /query read timeout/i.test(message) ? timeouts.queryMs : timeouts.connectMs;
      return unreachable(`no answer within ${Math.round(ms / 100) / 10} s`);
    }
    if (/Connection terminated|connection (was )?(closed|ended)/i.test(message)) return unreachable("the connection was lost");
  }
  return new StoreError("store_failed", `lethe: the PostgreSQL store at ${masked} failed: ${message}`, { cause: e });
}

/** Checks the URL before anything connects: parseable, and postgres:// or postgresql://. */
export function checkUrl(url: unknown, masked: string): void {
  if (typeof url !== "string" || url.trim() === "") throw new StoreError("store_url", "lethe: the PostgreSQL store needs a URL like postgres://user:password@host:5432/database");
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new StoreError("store_url", `lethe: not a valid PostgreSQL URL: ${masked} (expected postgres://user:password@host:5432/database)`);
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    throw new StoreError("store_url", `lethe: not a PostgreSQL URL: ${masked} (it must start with postgres:// or postgresql://)`);
  }
}
