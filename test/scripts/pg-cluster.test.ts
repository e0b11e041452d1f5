// The throwaway PostgreSQL that the store's tests and benchmarks run against (scripts/pg-cluster.ts):
// a real server, never a mock, never skipped (.ci/run installs Debian's postgresql).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { connect } from "node:net";
import { resolve } from "node:path";
import { Client } from "pg";
import { startPostgres, type PgCluster } from "../../scripts/pg-cluster.ts";

const HARNESS = resolve("scripts/pg-cluster.ts");

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = connect({ host: "127.0.0.1", port });
    s.once("connect", () => (s.destroy(), done(true)));
    s.once("error", () => done(false));
  });
}

async function pgError(config: ConstructorParameters<typeof Client>[0]): Promise<{ code?: string; message: string }> {
  const c = new Client(config);
  try {
    await c.connect();
  } catch (e) {
    return e as { code?: string; message: string };
  } finally {
    await c.end().catch(() => {});
  }
  assert.fail("connected");
}

/** A child process (node + tsx) that starts a cluster, prints it, then runs `then` (or is killed with SIGKILL). */
function child(then: string, kill = false): Promise<{ code: number | null; signal: NodeJS.Signals | null; cluster: { dir: string; port: number } }> {
  const code = `import { startPostgres } from ${JSON.stringify(HARNESS)};
const c = await startPostgres();
process.stdout.write(JSON.stringify({ dir: c.dir, port: c.port }) + "\\n");
${then}`;
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => {
      out += d;
      if (kill && out.includes("\n")) p.kill("SIGKILL");
    });
    p.stderr.on("data", (d) => (err += d));
    p.on("error", fail);
    p.on("close", (code, signal) => {
      try {
        done({ code, signal, cluster: JSON.parse(out.split("\n")[0]!) });
      } catch {
        fail(new Error(`child: exit ${code} ${signal}\n${out}${err}`));
      }
    });
  });
}

test("two clusters at once: each its own port, folder, password and data; password auth; stop() closes the port and removes the folder", { timeout: 180_000 }, async (t) => {
  const t0 = performance.now();
  const [a, b] = (await Promise.all([startPostgres({ log: (l) => t.diagnostic(`a ${l}`) }), startPostgres({ log: (l) => t.diagnostic(`b ${l}`) })])) as [PgCluster, PgCluster];
  t.diagnostic(`two clusters started in parallel in ${Math.round(performance.now() - t0)} ms`);
  try {
    assert.notEqual(a.port, b.port);
    assert.notEqual(a.dir, b.dir);
    assert.notEqual(a.password, b.password);
    for (const c of [a, b]) {
      assert.equal(c.host, "127.0.0.1");
      assert.equal(c.user, "lethe");
      assert.equal(c.database, "lethe");
      assert.equal(c.url, `postgresql://lethe:${encodeURIComponent(c.password)}@127.0.0.1:${c.port}/lethe`);
      assert.ok(c.password.length >= 16);
      assert.equal(statSync(`${c.dir}/data`).mode & 0o777, 0o700, "the data dir is 0700");
      if (process.getuid?.() === 0) assert.notEqual(statSync(`${c.dir}/data`).uid, 0, "as root, the cluster belongs to an unprivileged user");
      assert.ok(await listening(c.port));
    }

    // A table, a row written and read back, in each cluster separately.
    for (const [c, body] of [[a, "from a"], [b, "from b"]] as const) {
      await c.query("CREATE TABLE note (id integer PRIMARY KEY, body text NOT NULL, at timestamptz NOT NULL DEFAULT now())");
      await c.query("INSERT INTO note (id, body) VALUES ($1, $2)", [1, body]);
    }
    assert.deepEqual(await a.query("SELECT id, body FROM note"), [{ id: 1, body: "from a" }]);
    assert.deepEqual(await b.query("SELECT id, body FROM note"), [{ id: 1, body: "from b" }]);

    const [who] = await a.query<Record<string, string | boolean>>("SELECT current_user AS user, current_database() AS db, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS super");
    assert.deepEqual(who, { user: "lethe", db: "lethe", super: true });
    const settings = Object.fromEntries(
      (await a.query<{ name: string; setting: string }>("SELECT name, setting FROM pg_settings WHERE name = ANY($1)", [["listen_addresses", "fsync", "synchronous_commit", "full_page_writes", "max_connections", "password_encryption"]])).map((r) => [r.name, r.setting]),
    );
    assert.deepEqual(settings, { listen_addresses: "127.0.0.1", fsync: "off", synchronous_commit: "off", full_page_writes: "off", max_connections: "100", password_encryption: "scram-sha-256" });
    const [hba] = await a.query<{ n: string }>("SELECT count(*) AS n FROM pg_hba_file_rules WHERE auth_method NOT IN ('scram-sha-256')");
    assert.equal(hba?.n, "0", "every pg_hba rule asks for the password");

    // The wrong password, and the other cluster's, are refused: invalid_password (28P01).
    const wrong = await pgError({ host: a.host, port: a.port, user: a.user, database: a.database, password: `${a.password}x` });
    assert.equal(wrong.code, "28P01", wrong.message);
    const crossed = await pgError({ host: a.host, port: a.port, user: a.user, database: a.database, password: b.password });
    assert.equal(crossed.code, "28P01", crossed.message);
  } finally {
    const t1 = performance.now();
    await Promise.all([a.stop(), b.stop()]);
    t.diagnostic(`both stopped in ${Math.round(performance.now() - t1)} ms`);
  }
  for (const c of [a, b]) {
    assert.equal(existsSync(c.dir), false, `${c.dir} removed`);
    assert.equal(await listening(c.port), false, `port ${c.port} closed`);
  }
  await a.stop(); // idempotent
});

test("one cluster, timed: start, a query, stop", { timeout: 120_000 }, async (t) => {
  const t0 = performance.now();
  const c = await startPostgres();
  const started = performance.now() - t0;
  const [row] = await c.query<{ one: number }>("SELECT 1 AS one");
  assert.equal(row?.one, 1);
  const t1 = performance.now();
  await c.stop();
  t.diagnostic(`start ${Math.round(started)} ms, stop ${Math.round(performance.now() - t1)} ms`);
  assert.equal(existsSync(c.dir), false);
});

test("a cluster the process forgot to stop is stopped and removed when the process exits", { timeout: 120_000 }, async () => {
  const r = await child("process.exitCode = 0;");
  assert.equal(r.code, 0);
  assert.equal(existsSync(r.cluster.dir), false, `${r.cluster.dir} removed`);
  assert.equal(await listening(r.cluster.port), false, `port ${r.cluster.port} closed`);
});

test("a cluster whose process is killed (SIGKILL) goes down with it; the next start sweeps its folder", { timeout: 120_000 }, async () => {
  const r = await child("setInterval(() => {}, 1000);", true);
  assert.equal(r.signal, "SIGKILL");
  let up = true;
  for (let i = 0; i < 200 && up; i++) {
    up = await listening(r.cluster.port);
    if (up) await new Promise((d) => setTimeout(d, 50));
  }
  assert.equal(up, false, `port ${r.cluster.port} closed: the server died with its parent`);
  assert.ok(existsSync(r.cluster.dir), "nothing ran to remove the folder");
  const c = await startPostgres();
  await c.stop();
  assert.equal(existsSync(r.cluster.dir), false, `${r.cluster.dir} swept`);
});
