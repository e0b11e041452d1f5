// A throwaway PostgreSQL for tests and benchmarks: a real server (Debian's `postgresql` package,
// which .ci/run installs), initdb'd into a fresh temp folder, password auth over TCP on 127.0.0.1
// only, durability off (fsync, synchronous_commit, full_page_writes), gone again after stop().
// Each call starts its own cluster on its own free port, so parallel test processes do not meet.
//
// initdb and postgres refuse to run as root; as root (this machine and CI) both run as `nobody`
// through setpriv (util-linux), and the temp folder is chown'd to it. The server is our child,
// started with setpriv's --pdeathsig, so it dies with the process that started it even when that
// process is killed outright; a process 'exit' handler stops clusters a test forgot, and the
// folders of clusters whose process died are swept by the next start.
import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, appendFileSync, chmodSync, chownSync, closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { Client } from "pg";

export interface PgCluster {
  /** postgresql://lethe:…@127.0.0.1:port/lethe */
  url: string;
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  /** The temp folder: data/ (the cluster), run/ (its unix socket), postgres.log. */
  dir: string;
  /** Immediate shutdown (no checkpoint: nothing is kept), then the folder is removed. Idempotent. */
  stop(): Promise<void>;
  /** Runs one statement as the superuser, on its own connection (to `url`, default the cluster's database); its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], url?: string): Promise<T[]>;
  /** Creates an empty database; its URL. */
  createDatabase(name: string): Promise<string>;
}

async function queryAt<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

export interface StartOptions {
  /** Progress lines (binaries, timings, port); silent by default. */
  log?: (line: string) => void;
}

const USER = "lethe";
const DATABASE = "lethe";
const HOST = "127.0.0.1";
const PREFIX = "lethe-pg-";
/** The whole start: initdb, then the server until it accepts connections. */
const STARTUP_MS = 60_000;
const NOT_FOUND = "PostgreSQL server binaries not found: install Debian's postgresql package (.ci/run does)";

// ── binaries ─────────────────────────────────────────────────────────────────────────

const isExecutable = (p: string) => {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
};
const complete = (bin: string) => ["initdb", "pg_ctl", "postgres"].every((b) => isExecutable(join(bin, b)));

/** The folder of initdb, pg_ctl and postgres: initdb's on PATH (symlinks followed, so the three match), else Debian's newest /usr/lib/postgresql/<major>/bin. */
export function findPostgresBin(): string | undefined {
  for (const d of (process.env.PATH ?? "").split(delimiter)) {
    if (!d || !isExecutable(join(d, "initdb"))) continue;
    const bin = dirname(realpathSync(join(d, "initdb")));
    if (complete(bin)) return bin;
  }
  const root = "/usr/lib/postgresql";
  let majors: string[] = [];
  try {
    majors = readdirSync(root).filter((v) => complete(join(root, v, "bin")));
  } catch {
    return undefined;
  }
  const num = (v: string) => v.split(".").map((n) => Number.parseInt(n, 10) || 0);
  majors.sort((a, b) => {
    const [x, y] = [num(a), num(b)];
    for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (y[i] ?? 0) - (x[i] ?? 0);
    return 0;
  });
  return majors[0] === undefined ? undefined : join(root, majors[0], "bin");
}

let found: { bin: string; version: string } | undefined;
function binaries(): { bin: string; version: string } {
  if (found) return found;
  const bin = findPostgresBin();
  if (!bin) throw new Error(NOT_FOUND);
  const r = spawnSync(join(bin, "postgres"), ["--version"], { encoding: "utf8", env: childEnv() });
  const version = r.stdout?.trim() ?? "";
  const major = Number(/\(PostgreSQL\)\s+(\d+)/.exec(version)?.[1]);
  if (r.status !== 0 || !(major >= 10)) throw new Error(`${join(bin, "postgres")} --version: ${version || r.stderr || r.error?.message} (PostgreSQL 10 or later is needed)`);
  return (found = { bin, version });
}

// ── running as root ──────────────────────────────────────────────────────────────────

interface Drop {
  uid: number;
  gid: number;
}

/** Whom initdb and the server run as when we are root: nobody (and its own group). */
function unprivileged(): Drop {
  const r = spawnSync("getent", ["passwd", "nobody"], { encoding: "utf8" });
  const f = r.stdout?.trim().split(":") ?? [];
  const uid = Number(f[2]);
  const gid = Number(f[3]);
  if (r.status !== 0 || !Number.isInteger(uid) || !Number.isInteger(gid) || uid === 0) throw new Error("running as root, and there is no user 'nobody' to run PostgreSQL as (initdb refuses root)");
  return { uid, gid };
}

let setprivPath: string | null | undefined;
function setpriv(): string | null {
  if (setprivPath === undefined) setprivPath = (process.env.PATH ?? "").split(delimiter).concat("/usr/bin", "/bin").map((d) => join(d || ".", "setpriv")).find(isExecutable) ?? null;
  return setprivPath;
}

/**
 * The command line that runs `cmd` as `drop` (setpriv; required when root) and, for the server,
 * with a parent-death signal (setpriv when there is one; SIGQUIT is PostgreSQL's immediate shutdown).
 */
function command(cmd: string, args: string[], drop: Drop | undefined, pdeath: boolean): [string, string[]] {
  const sp = setpriv();
  if (drop && !sp) throw new Error("running as root: setpriv (util-linux) is needed to run PostgreSQL as nobody (initdb refuses root)");
  if (!sp || (!drop && !pdeath)) return [cmd, args];
  const opts = drop ? [`--reuid=${drop.uid}`, `--regid=${drop.gid}`, "--clear-groups"] : [];
  if (pdeath) opts.push("--pdeathsig=SIGQUIT");
  return [sp, [...opts, "--", cmd, ...args]];
}

/** The environment for PostgreSQL's programs: no PG* variables of the caller's (PGDATA, PGPORT, …), messages in English. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(PG|LC_|LANG)/.test(k)) env[k] = v;
  env.LC_ALL = "C";
  return env;
}

/** A folder for the cluster: the temp folder, unless `drop` could not reach into it or a unix socket path there would be too long (108 bytes). */
function baseDir(drop: Drop | undefined): string {
  const t = tmpdir();
  if (t.length > 60) return "/tmp";
  if (!drop) return t;
  for (let d = t; ; d = dirname(d)) {
    try {
      if ((statSync(d).mode & 0o001) === 0) return "/tmp";
    } catch {
      return "/tmp";
    }
    if (dirname(d) === d) return t;
  }
}

// ── liveness, stale folders, forgotten clusters ──────────────────────────────────────

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8")); // a zombie is dead
  } catch {
    return true;
  }
}

const firstLinePid = (file: string) => {
  try {
    return Number.parseInt(readFileSync(file, "utf8").split("\n")[0] ?? "", 10);
  } catch {
    return NaN;
  }
};

/** Removes the folders of earlier clusters whose starting process and server are both gone (killed before stop() or 'exit' ran). */
function sweep(base: string) {
  let names: string[] = [];
  try {
    names = readdirSync(base).filter((n) => n.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const n of names) {
    const d = join(base, n);
    const owner = firstLinePid(join(d, "owner.pid"));
    if (Number.isNaN(owner) || alive(owner) || alive(firstLinePid(join(d, "data", "postmaster.pid")))) continue;
    try {
      rmSync(d, { recursive: true, force: true });
    } catch {
      // another process's sweep, or not ours to remove
    }
  }
}

interface Live {
  dir: string;
  data: string;
  drop: Drop | undefined;
  child: ChildProcess | undefined;
}
const live = new Set<Live>();
let exitHook = false;

/** Synchronous stop for the 'exit' handler: pg_ctl stop -m immediate (waits for the server to go), then the folder. */
function stopSync(c: Live) {
  live.delete(c);
  const pid = c.child?.pid;
  if (pid !== undefined && c.child!.exitCode === null && c.child!.signalCode === null) {
    const [cmd, args] = command(join(binaries().bin, "pg_ctl"), ["stop", "-D", c.data, "-m", "immediate", "-w", "-t", "10"], c.drop, false);
    spawnSync(cmd, args, { stdio: "ignore", env: childEnv(), cwd: c.dir, timeout: 15_000 });
    if (alive(pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
  }
  rmSync(c.dir, { recursive: true, force: true });
}

// ── start ────────────────────────────────────────────────────────────────────────────

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, HOST, () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

function run(cmd: string, args: string[], opts: { cwd: string; timeout: number }): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { ...opts, env: childEnv(), encoding: "utf8", maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: unknown; killed?: boolean }) | null;
      const out = `${stdout}${stderr}${e?.killed ? `\n(killed after ${opts.timeout} ms)` : ""}${e && typeof e.code === "string" ? `\n${e.message}` : ""}`;
      resolve({ code: e ? (typeof e.code === "number" ? e.code : -1) : 0, out });
    });
  });
}

/** Starts a fresh cluster (initdb, server, database `lethe`); within 60 s, else throws with the tail of the server's log. */
export async function startPostgres(opts: StartOptions = {}): Promise<PgCluster> {
  const log = opts.log ?? (() => {});
  const t0 = performance.now();
  const ms = (t: number) => `${Math.round(performance.now() - t)} ms`;
  const { bin, version } = binaries();
  const drop = process.getuid?.() === 0 ? unprivileged() : undefined;
  const base = baseDir(drop);
  sweep(base);

  const dir = mkdtempSync(join(base, PREFIX));
  const data = join(dir, "data");
  const sock = join(dir, "run");
  const logFile = join(dir, "postgres.log");
  const pwfile = join(dir, "pwfile");
  const password = randomBytes(18).toString("base64url");
  const c: Live = { dir, data, drop, child: undefined };
  live.add(c);
  if (!exitHook) {
    exitHook = true;
    process.on("exit", () => {
      for (const l of [...live]) stopSync(l);
    });
  }
  log(`postgres: ${version} (${bin})${drop ? `, as uid ${drop.uid} (we are root)` : ""}, in ${dir}`);

  try {
    writeFileSync(join(dir, "owner.pid"), `${process.pid}\n`);
    mkdirSync(sock, { mode: 0o700 });
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    if (drop) for (const p of [dir, sock, pwfile]) chownSync(p, drop.uid, drop.gid);

    // initdb: the superuser `lethe` with the random password, scram for every connection.
    const t1 = performance.now();
    const [icmd, iargs] = command(join(bin, "initdb"), ["-D", data, `--username=${USER}`, `--pwfile=${pwfile}`, "--auth=scram-sha-256", "--encoding=UTF8", "--no-locale", "--no-sync"], drop, false);
    const init = await run(icmd, iargs, { cwd: dir, timeout: STARTUP_MS });
    rmSync(pwfile, { force: true });
    if (init.code !== 0) throw new Error(`initdb failed (exit ${init.code}):\n${init.out.trimEnd().split("\n").slice(-30).join("\n")}`);
    if ((statSync(data).mode & 0o777) !== 0o700) chmodSync(data, 0o700);
    appendFileSync(
      join(data, "postgresql.conf"),
      [
        "",
        "# lethe's throwaway test cluster (scripts/pg-cluster.ts)",
        `listen_addresses = '${HOST}'`,
        `unix_socket_directories = ${quote(sock)}`,
        "unix_socket_permissions = 0700",
        "fsync = off",
        "synchronous_commit = off",
        "full_page_writes = off",
        "shared_buffers = 16MB",
        "max_connections = 100",
        "password_encryption = 'scram-sha-256'",
        "",
      ].join("\n"),
    );
    log(`postgres: initdb ${ms(t1)}`);

    // The server, on a free port; another process may take the port between our probe and the
    // server's bind: then the server exits at once and we try another.
    const deadline = t0 + STARTUP_MS;
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const t2 = performance.now();
      const fd = openSync(logFile, "a");
      if (drop) chownSync(logFile, drop.uid, drop.gid);
      const logStart = statSync(logFile).size;
      const [cmd, args] = command(join(bin, "postgres"), ["-D", data, "-p", String(port)], drop, true);
      const child = spawn(cmd, args, { cwd: dir, env: childEnv(), stdio: ["ignore", fd, fd] });
      closeSync(fd);
      child.unref();
      c.child = child;
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.once("error", () => {}); // spawn failure shows as exit (code -2 &c.) and in the log check below

      const state = await waitReady(data, child, deadline, () => readFileSync(logFile).subarray(logStart).toString("utf8"));
      if (state === "port-taken" && attempt < 5) {
        await exited;
        log(`postgres: port ${port} was taken, trying another`);
        continue;
      }
      if (state !== "ready") {
        const why = state === "timeout" ? `did not start within ${STARTUP_MS / 1000} s` : state === "port-taken" ? `found no free port in ${attempt} tries` : `exited during startup (${child.exitCode ?? child.signalCode})`;
        throw new Error(`PostgreSQL ${why}; the end of its log:\n${tail(logFile)}`);
      }

      // Accepting connections: the database, over TCP with the password (which this checks too).
      const admin = new Client({ host: HOST, port, user: USER, password, database: "postgres", connectionTimeoutMillis: 10_000 });
      try {
        await admin.connect();
        await admin.query(`CREATE DATABASE ${DATABASE}`);
      } catch (e) {
        throw new Error(`PostgreSQL started but CREATE DATABASE failed: ${(e as Error).message}; the end of its log:\n${tail(logFile)}`);
      } finally {
        await admin.end().catch(() => {});
      }
      log(`postgres: listening on ${HOST}:${port}, ready in ${ms(t2)} (${ms(t0)} in all)`);

      let stopping: Promise<void> | undefined;
      const url = `postgresql://${USER}:${encodeURIComponent(password)}@${HOST}:${port}/${DATABASE}`;
      return {
        url,
        query: (sql, params, at = url) => queryAt(at, sql, params),
        async createDatabase(name) {
          if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain database name: ${JSON.stringify(name)}`);
          await queryAt(url, `CREATE DATABASE ${name}`);
          return url.replace(/\/[^/]*$/, `/${name}`);
        },
        host: HOST,
        port,
        database: DATABASE,
        user: USER,
        password,
        dir,
        stop: () => (stopping ??= stopAsync(c, exited, log)),
      };
    }
  } catch (e) {
    stopSync(c);
    throw e;
  }
}

/** Waits for the server's postmaster.pid to say "ready" (what pg_ctl -w waits for): it has bound its port and accepts connections. */
async function waitReady(data: string, child: ChildProcess, deadline: number, thisLog: () => string): Promise<"ready" | "exited" | "port-taken" | "timeout"> {
  const pidFile = join(data, "postmaster.pid");
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      return /could not create any TCP\/IP sockets|Address already in use/.test(thisLog()) ? "port-taken" : "exited";
    }
    if (existsSync(pidFile)) {
      const lines = readFileSync(pidFile, "utf8").split("\n");
      if (Number(lines[0]) === child.pid && lines[7]?.trim() === "ready") return "ready";
    }
    await sleep(10);
  }
  return "timeout";
}

async function stopAsync(c: Live, exited: Promise<void>, log: (line: string) => void): Promise<void> {
  const t = performance.now();
  live.delete(c);
  const child = c.child;
  if (child && child.exitCode === null && child.signalCode === null) {
    // What `pg_ctl stop -m immediate` does (SIGQUIT to the postmaster), but we own the process
    // and so can wait for its exit itself. The postmaster exits after its backends.
    child.kill("SIGQUIT");
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(c.dir, { recursive: true, force: true });
  log(`postgres: stopped and removed in ${Math.round(performance.now() - t)} ms`);
}
