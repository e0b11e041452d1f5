// The PostgreSQL store against a real, throwaway server (scripts/pg-cluster.ts): the store
// contract (each test in a schema of its own), then what only a database server can get wrong:
// racing schema creation, a newer schema, bad credentials, addresses and URLs, and workers
// that are separate processes, some killed mid-append.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createServer, type AddressInfo, type Server } from "node:net";
import { resolve } from "node:path";
import { startPostgres, type PgCluster } from "../../scripts/pg-cluster.ts";
import { maskUrl } from "../../src/store/errors.ts";
import { createPostgresStore } from "../../src/store/postgres.ts";
import { SCHEMA_VERSION } from "../../src/store/postgres-schema.ts";
import type { ConversationStore } from "../../src/store/types.ts";
import type { Message } from "../../src/messages/types.ts";
import { msg, rejectsInput, storeContract, type OpenedStore } from "./contract.ts";

const MODULE = resolve("src/store/postgres.ts");
let cluster: PgCluster;
let schemas = 0;

before(async () => {
  cluster = await startPostgres();
});
after(async () => {
  await cluster?.stop();
});

/** A store in a schema no other test uses, and a way to open it again. */
async function open(schema = `t${++schemas}`): Promise<OpenedStore> {
  const made: ConversationStore[] = [];
  const mk = async () => {
    const s = await createPostgresStore(cluster.url, { schema });
    made.push(s);
    return s;
  };
  const store = await mk();
  return { store, reopen: mk, cleanup: async () => void (await Promise.all(made.map((s) => s.close()))) };
}

const admin = <T = Record<string, unknown>>(sql: string, params: unknown[] = [], url = cluster.url): Promise<T[]> => cluster.query<T>(sql, params, url);
const database = (name: string): Promise<string> => cluster.createDatabase(name);

/** Rejects with a StoreError of `code` in one line that shows no password; how long it took (ms). */
async function rejectsStore(p: () => Promise<unknown>, code: string, match?: RegExp): Promise<number> {
  const t0 = performance.now();
  await assert.rejects(p, (e: { code?: unknown; message?: unknown }) => {
    const m = String(e.message);
    assert.equal(e.code, code, m);
    assert.match(m, /^lethe: [^\n]+$/, "one line");
    assert.ok(!m.includes(cluster.password), "no password in the message");
    if (match) assert.match(m, match);
    return true;
  });
  return performance.now() - t0;
}

storeContract("postgres", () => open());

test("schema: 6 stores starting at the same moment against an empty database create it once", { timeout: 60_000 }, async () => {
  const url = await database("fleet");
  for (const schema of [undefined, "fleet_schema"]) {
    const stores = await Promise.all(Array.from({ length: 6 }, () => createPostgresStore(url, schema ? { schema } : {})));
    try {
      const convs = await Promise.all(stores.map((s) => s.conversation("shared")));
      await Promise.all(convs.map((c) => c.appendMessages(0, [msg(0)])));
      assert.equal(await convs[5]!.messageCount(), 1);
      const ns = schema ?? "public";
      assert.deepEqual(await admin(`SELECT version FROM ${ns}.lethe_schema`, [], url), [{ version: SCHEMA_VERSION }]);
      // One transaction made the tables and wrote the version, and nothing rewrote it since.
      const [once] = await admin<{ same: boolean }>(`SELECT (SELECT xmin FROM ${ns}.lethe_schema)::text = (SELECT xmin FROM pg_class WHERE oid = '${ns}.lethe_entries'::regclass)::text AS same`, [], url);
      assert.equal(once?.same, true);
      const tables = await admin<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", [ns], url);
      assert.deepEqual(tables.map((r) => r.t), ["lethe_conversations", "lethe_entries", "lethe_results", "lethe_schema"]);
      assert.equal((await stores[0]!.list()).length, 1, "one conversation, opened by six stores");
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  }
});

test("schema: a store at a newer version is refused in one line (store_schema), and nothing is changed", async () => {
  await admin("CREATE SCHEMA future; CREATE TABLE future.lethe_schema (version int NOT NULL); INSERT INTO future.lethe_schema VALUES (99)");
  await rejectsStore(() => createPostgresStore(cluster.url, { schema: "future" }), "store_schema");
  await assert.rejects(createPostgresStore(cluster.url, { schema: "future" }), {
    message: `lethe: the store at ${maskUrl(cluster.url)} has schema version 99, newer than this lethe (${SCHEMA_VERSION}): upgrade lethe`,
  });
  assert.deepEqual(await admin("SELECT table_name FROM information_schema.tables WHERE table_schema = 'future'"), [{ table_name: "lethe_schema" }]);
});

test("schema: a store written by the first version (no meter column) is migrated once on open, and keeps what it held", async () => {
  const first = await createPostgresStore(cluster.url, { schema: "v1" });
  try {
    await (await first.conversation("old")).appendMessages(0, [msg(0), msg(1)]);
  } finally {
    await first.close();
  }
  // Back to what version 1 made.
  await admin("ALTER TABLE v1.lethe_conversations DROP COLUMN meter; UPDATE v1.lethe_schema SET version = 1");
  const stores = await Promise.all(Array.from({ length: 4 }, () => createPostgresStore(cluster.url, { schema: "v1" })));
  try {
    assert.deepEqual(await admin("SELECT version FROM v1.lethe_schema"), [{ version: SCHEMA_VERSION }]);
    const c = await stores[0]!.conversation("old");
    assert.equal(await c.messageCount(), 2);
    assert.equal(await c.meter(), null);
    await c.saveMeter({ model: "m", factor: 1.25, lastResponseAt: 1_000 });
    assert.deepEqual(await (await stores[3]!.conversation("old")).meter(), { model: "m", factor: 1.25, lastResponseAt: 1_000 });
  } finally {
    await Promise.all(stores.map((x) => x.close()));
  }
});

test("a wrong password: store_auth within a few seconds", async () => {
  const u = new URL(cluster.url);
  u.password = "wrong-password";
  const ms = await rejectsStore(() => createPostgresStore(u.toString()), "store_auth", /refused the credentials/);
  assert.ok(ms < 5_000, `${Math.round(ms)} ms`);
});

test("a closed port: store_unreachable, connection refused, within connectTimeoutMs; a silent server: within connectTimeoutMs", async () => {
  const closed = await new Promise<number>((done) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => done(port));
    });
  });
  const refused = await rejectsStore(() => createPostgresStore(`postgres://lethe:secret@127.0.0.1:${closed}/lethe`, { connectTimeoutMs: 30_000 }), "store_unreachable", /cannot reach the PostgreSQL store at postgres:\/\/lethe:\*\*\*\*@127\.0\.0\.1:\d+\/lethe: connection refused$/);
  assert.ok(refused < 10_000, `${Math.round(refused)} ms: a refusal does not wait for the timeout`);

  // Accepts the connection and never answers: only the timeout ends the wait.
  const sockets = new Set<import("node:net").Socket>();
  const silent: Server = createServer((s) => void sockets.add(s));
  await new Promise<void>((done) => silent.listen(0, "127.0.0.1", done));
  try {
    const port = (silent.address() as AddressInfo).port;
    const ms = await rejectsStore(() => createPostgresStore(`postgresql://lethe:secret@127.0.0.1:${port}/lethe`, { connectTimeoutMs: 500 }), "store_unreachable", /no answer within 0\.5 s/);
    // Not before the 0.5 s asked for; well before the 10 s default.
    assert.ok(ms >= 450 && ms < 5_000, `${Math.round(ms)} ms`);
  } finally {
    for (const s of sockets) s.destroy();
    silent.close();
  }
});

test("a mistyped URL: store_url at once, without connecting, the password masked", async () => {
  for (const url of ["postgress://lethe:secret@127.0.0.1:5432/lethe", "postgres://lethe:secret@host:notaport/db", "mysql://lethe:secret@127.0.0.1/db", "http://127.0.0.1/", "not a url", ""]) {
    const ms = await rejectsStore(() => createPostgresStore(url), "store_url");
    assert.ok(ms < 5_000, `${url}: ${Math.round(ms)} ms`);
    await assert.rejects(createPostgresStore(url), (e: Error) => !e.message.includes("secret"));
  }
});

test("a database that does not exist: store_failed, naming it", async () => {
  const u = new URL(cluster.url);
  u.pathname = "/no_such_db";
  await rejectsStore(() => createPostgresStore(u.toString()), "store_failed", /no_such_db.*create it/);
});

test("ids and tool ids PostgreSQL cannot hold (NUL) or that are not well-formed are refused in one line; refs name no host or password", async () => {
  const { store, cleanup } = await open();
  try {
    await rejectsInput(store.conversation("a\u0000b"), "NUL");
    await rejectsInput(store.conversation("lone \ud800"), "lone surrogate");
    const c = await store.conversation("a/b 😀");
    await rejectsInput(c.saveResult("t\u0000", "x"), "NUL tool id");
    await rejectsInput(() => c.resultRef("\udc00"), "lone surrogate tool id");
    const ref = c.resultRef("toolu_1/x");
    assert.equal(ref, "lethe-store:conversation/a%2Fb%20%F0%9F%98%80/tool-results/toolu_1%2Fx");
    assert.equal(store.location, maskUrl(cluster.url));
    assert.ok(!store.location.includes(cluster.password));
    const apps = await admin<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'lethe'");
    assert.ok(Number(apps[0]?.n) >= 1, "connections say application_name lethe");
  } finally {
    await cleanup();
  }
});

test("after close(), every call fails with store_failed; close() is idempotent", async () => {
  const { store, cleanup } = await open();
  const c = await store.conversation("x");
  await store.close();
  await store.close();
  await rejectsStore(() => store.list(), "store_failed", /is closed/);
  await rejectsStore(() => store.conversation("y"), "store_failed", /is closed/);
  await rejectsStore(() => c.appendMessages(0, [msg(0)]), "store_failed", /is closed/);
  await rejectsStore(() => c.lines(), "store_failed", /is closed/);
  await cleanup();
});

test("without the pg package: one line, store_failed, npm install pg (and importing the module does not load pg)", async () => {
  const hook = `export async function resolve(s, c, next) { if (s === "pg") throw Object.assign(new Error("Cannot find package 'pg'"), { code: "ERR_MODULE_NOT_FOUND" }); return next(s, c); }`;
  const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  const code = `const { createPostgresStore } = await import(${JSON.stringify(MODULE)});
try { await createPostgresStore("postgres://u:p@127.0.0.1:1/db"); console.log("no error"); } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
  const out = await run(["--import", `data:text/javascript,${encodeURIComponent(register)}`, "--input-type=module", "-e", code]);
  assert.deepEqual(JSON.parse(out.trim()), { code: "store_failed", message: "lethe: the PostgreSQL store needs the pg package: npm install pg" });
});

// ── separate processes ───────────────────────────────────────────────────────────────

/** A worker: node + tsx running `body` with `store` and `msg` in scope. */
function worker(body: string, schema: string, ...args: string[]): ChildProcessWithoutNullStreams {
  const code = `import { createPostgresStore } from ${JSON.stringify(MODULE)};
const msg = (i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: [{ type: "text", text: "message " + i }] });
const store = await createPostgresStore(process.env.LETHE_TEST_URL, { schema: ${JSON.stringify(schema)} });
${body}`;
  return spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code, ...args], { env: { ...process.env, LETHE_TEST_URL: cluster.url } });
}

function run(args: string[]): Promise<string> {
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, ["--import", "tsx", ...args]);
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("close", (code) => (code === 0 ? done(out) : fail(new Error(`exit ${code}: ${out}${err}`))));
  });
}

/** Lines of a child's stdout, as they come. */
function onLines(p: ChildProcessWithoutNullStreams, each: (line: string) => void): void {
  let buf = "";
  p.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      each(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
}

const exited = (p: ChildProcessWithoutNullStreams) => new Promise<{ code: number | null; signal: NodeJS.Signals | null; err: string }>((done) => {
  let err = "";
  p.stderr.on("data", (d) => (err += d));
  p.on("close", (code, signal) => done({ code, signal, err }));
});

/** Every message of the conversation: each seq once, in order, msg(seq) at seq. */
async function assertIntact(store: ConversationStore, id: string): Promise<number> {
  const lines = await (await store.conversation(id)).lines();
  const seqs = lines.filter((l) => l.type === "message").map((l) => l.seq as number);
  assert.deepEqual(seqs, seqs.map((_, i) => i), "seqs 0, 1, 2, … each once, in order");
  for (const l of lines) if (l.type === "message") assert.deepEqual(l.message, msg(l.seq as number) as Message);
  assert.deepEqual(lines.filter((l) => l.type === "event"), [], "nothing was rewritten");
  return seqs.length;
}

test("4 worker processes appending the same 40 messages in overlapping chunks at once: each seq exactly once, in order", { timeout: 60_000 }, async () => {
  const { store, cleanup } = await open("procs");
  const kids: ChildProcessWithoutNullStreams[] = [];
  try {
    const body = `const c = await store.conversation("procs");
process.stdout.write("ready\\n");
await new Promise((r) => process.stdin.once("data", r));
let added = 0;
const size = Number(process.argv.at(-1));
for (let from = 0; from < 40; from += size - 1) added += (await c.appendMessages(from, Array.from({ length: Math.min(size, 40 - from) }, (_, j) => msg(from + j)))).added;
process.stdout.write(JSON.stringify({ added }) + "\\n");
await store.close();`;
    kids.push(...[2, 3, 5, 7].map((size) => worker(body, "procs", String(size))));
    const ready = kids.map((k) => new Promise<void>((r) => onLines(k, (l) => l === "ready" && r())));
    const results: number[] = [];
    kids.forEach((k) => onLines(k, (l) => l.startsWith("{") && results.push((JSON.parse(l) as { added: number }).added)));
    const ends = kids.map(exited);
    await Promise.all(ready);
    for (const k of kids) k.stdin.end("go\n"); // end: an open stdin would keep the worker alive
    for (const e of await Promise.all(ends)) assert.equal(e.code, 0, e.err);
    assert.equal(results.reduce((a, b) => a + b, 0), 40, `added per worker: ${results.join(", ")}`);
    assert.equal(await assertIntact(store, "procs"), 40);
  } finally {
    for (const k of kids) if (k.exitCode === null && k.signalCode === null) k.kill("SIGKILL");
    await cleanup();
  }
});

test("workers SIGKILLed in the middle of appending lose no acknowledged message, and leave no lock behind", { timeout: 120_000 }, async (t) => {
  const { store, cleanup } = await open("killed");
  // Each round, from what is recorded: re-send the last 2 (a retried turn) and 3 new ones; print
  // every seq once the append returned.
  const body = `const c = await store.conversation("killed");
let count = await c.messageCount();
process.stdout.write("ready\\n");
for (;;) {
  const from = Math.max(0, count - 2);
  const chunk = Array.from({ length: count - from + 3 }, (_, j) => msg(from + j));
  await c.appendMessages(from, chunk);
  count = from + chunk.length;
  process.stdout.write("ack " + chunk.map((_, j) => from + j).join(" ") + "\\n");
}`;
  const all: ChildProcessWithoutNullStreams[] = [];
  try {
    const acked = new Set<number>();
    for (let round = 0; round < 3; round++) {
      // Two workers at once on the same conversation, each killed at its own moment.
      const kids = [0, 1].map(() => worker(body, "killed"));
      all.push(...kids);
      const ends = kids.map(exited);
      await Promise.all(
        kids.map(
          (k, i) =>
            new Promise<void>((done) => {
              let acks = 0;
              onLines(k, (l) => {
                if (!l.startsWith("ack ")) return;
                for (const n of l.slice(4).split(" ")) acked.add(Number(n));
                if (++acks === 15 + 10 * i) setTimeout(() => (k.kill("SIGKILL"), done()), Math.random() * 5);
              });
            }),
        ),
      );
      for (const e of await Promise.all(ends)) assert.equal(e.signal, "SIGKILL", e.err);
      const count = await assertIntact(store, "killed");
      const missing = [...acked].filter((n) => n >= count);
      assert.deepEqual(missing, [], "every acknowledged seq is recorded");
      t.diagnostic(`round ${round}: ${acked.size} acknowledged, ${count} recorded`);
    }
    // The killed workers' transactions left no lock: another append goes through at once.
    const c = await store.conversation("killed");
    const n = await c.messageCount();
    const t0 = performance.now();
    assert.deepEqual(await c.appendMessages(n, [msg(n)]), { added: 1, existing: 0, rewritten: [] });
    assert.ok(performance.now() - t0 < 5_000, "no lock left to wait on");
    await assertIntact(store, "killed");
  } finally {
    for (const k of all) if (k.exitCode === null && k.signalCode === null) k.kill("SIGKILL");
    await cleanup();
  }
});
