// Issue 22 (2): the CLI agent on a conversation store. A session started with `-p --store …` in
// one workspace continues with `--continue` (LETHE_STORE) from another, as on another machine:
// the store holds every message once, in order, the boundaries and the tool results, and the
// continued session starts from the summary, not from the whole history. `lethe export`,
// `lethe sessions` and `lethe view` read it there. Both stores: a folder, and a real PostgreSQL.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AddressInfo, type Socket, connect, createServer } from "node:net";
import { startPostgres, type PgCluster } from "../../scripts/pg-cluster.ts";
import { connectStore } from "../../src/store/connect.ts";
import type { Step } from "../support/fakes/common.ts";
import { builtBin, cliEnv, closedPort, idsOf, isSummaryRequest, keyEnv, makeWorkspace, providerArgs, runCli, startFake } from "./support.ts";

const SUMMARY = "<analysis>walking through the rows</analysis>\n<summary>\n1. Goal — print every batch of rows.\n8. Current work — printing batches one by one.\n9. Next step — print the next batch.\n</summary>";
const CALLS = 24;
const rows = (i: number, lines: number) => `seq 1 ${lines} | awk '{print "batch ${i} row " $1 ": value=" ($1*7919)%10007 " status=ok"}'`;
const notes = (i: number) => `Notes after batch ${i}: ${"the values stay consistent and every status is ok; ".repeat(30)}`;

/**
 * The first run: batch 3 prints 5,000 rows (over the budget: its full text is kept apart), the
 * others 120, each with notes. Then, in the second run, the answer to the follow-up question.
 */
function script() {
  let n = 0;
  return (body: any): Step => {
    if (isSummaryRequest(body)) return { text: SUMMARY };
    if (JSON.stringify(body.messages.at(-1)).includes("How many rows did batch 3 print")) return { text: "Batch 3 printed 5,000 rows." };
    n++;
    if (n > CALLS) return { text: `Done: printed ${CALLS} batches.` };
    return { text: notes(n), toolUses: [{ name: "bash", input: { command: rows(n, n === 3 ? 5_000 : 120) } }] };
  };
}

let cluster: PgCluster;
before(async () => {
  cluster = await startPostgres();
});
after(async () => {
  await cluster?.stop();
});

interface Entry {
  type: string;
  seq?: number;
  uuid?: string;
  kind?: string;
  message?: { role: string; content: any };
}

const textOf = (m: { content: any }): string => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

/** Starts `lethe view`, returns its address and a way to stop it. */
async function startView(args: string[], env: NodeJS.ProcessEnv): Promise<{ url: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [builtBin(), "view", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      const m = /lethe view: (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on("close", (code) => reject(new Error(`lethe view exited ${code}: ${err}${out}`)));
  });
  return { url, stop: () => new Promise((r) => (child.on("close", (code) => r(code)), child.kill("SIGINT"))) };
}

for (const kind of ["files", "postgres"] as const) {
  test(`${kind}: -p --store in one workspace, --continue (LETHE_STORE) in another: every message once, in order; the continued session starts from the summary; export, sessions and view read the store`, async () => {
    const a = makeWorkspace();
    const b = makeWorkspace();
    const folder = mkdtempSync(join(tmpdir(), "lethe-store-"));
    const store = kind === "files" ? folder : await cluster.createDatabase(`cli_${process.pid}`);
    const fake = await startFake("anthropic", { script: script(), contextWindow: 16_000 });
    try {
      const common = [...providerArgs("anthropic", fake), "--context-window", "16000", "--max-output-tokens", "2000", "--yes"];
      const r1 = await runCli([...common, "--store", store, "--cwd", a.dir, "-p", "Print every batch of rows."], { env: cliEnv(a, keyEnv("anthropic")) });
      assert.equal(r1.code, 0, r1.stderr);
      assert.match(r1.stdout, /Done: printed 24 batches/);
      assert.ok(fake.requests.some(isSummaryRequest), "the first run summarised");
      assert.equal(existsSync(join(a.dir, ".lethe", "sessions")), false, "the session is in the store, not in .lethe/sessions");
      const firstRequests = fake.requests.length;

      const r2 = await runCli([...common, "--cwd", b.dir, "--continue", "-p", "How many rows did batch 3 print?"], { env: cliEnv(b, { ...keyEnv("anthropic"), LETHE_STORE: store }) });
      assert.equal(r2.code, 0, r2.stderr);
      assert.match(r2.stdout, /5,000 rows/);
      assert.match(r2.stderr, /continuing the newest one/);
      const sent = fake.requests.slice(firstRequests).find((x) => !isSummaryRequest(x))!;
      const sentText = JSON.stringify(sent.messages);
      assert.match(sentText, /Current work — printing batches one by one/, "the continued session starts from the summary");
      assert.match(sentText, /How many rows did batch 3 print/);
      assert.ok(sent.messages.length < 20, `from the summary, not the whole history (${sent.messages.length} messages sent)`);

      // The store's record: every message once, at consecutive positions, in the order they were sent.
      const list = await runCli(["sessions", "--store", store], { env: cliEnv(a) });
      assert.equal(list.code, 0, list.stderr);
      const id = /(\d{8}-\d{6}-\d{3}-[0-9a-f]{10})/.exec(list.stdout)?.[1];
      assert.ok(id, list.stdout);
      const exported = await runCli(["export", id, "--store", store, "--format", "json"], { env: cliEnv(a) });
      assert.equal(exported.code, 0, exported.stderr);
      const entries = (JSON.parse(exported.stdout) as { entries: Entry[] }).entries;
      const messages = entries.filter((e) => e.type === "message");
      assert.deepEqual(messages.map((m) => m.seq), messages.map((_, i) => i), "seq 0, 1, 2, … with no gap and no repeat");
      assert.equal(new Set(messages.map((m) => m.uuid)).size, messages.length);
      // 1 prompt + 24 × (call + result) + the answer, then the second prompt and its answer.
      assert.equal(messages.length, 1 + 2 * CALLS + 1 + 2);
      assert.match(textOf(messages[0]!.message!), /Print every batch/);
      assert.match(textOf(messages.at(-2)!.message!), /How many rows did batch 3 print/);
      assert.ok(entries.some((e) => e.type === "boundary" && e.kind === "summarize"), "the summary's boundary is in the store");
      assert.equal(entries.filter((e) => e.type === "event" && (e as { name?: string }).name === "rewritten").length, 0);

      // Batch 3's full output is kept with the conversation (the files store's folder, or the database).
      const call = messages.find((m) => m.message!.role === "assistant" && textOf(m.message!).includes("seq 1 5000"))!;
      const useId = (call.message!.content as { type: string; id: string }[]).find((x) => x.type === "tool_use")!.id;
      const s = await connectStore(store);
      try {
        const full = await (await s.conversation(id)).loadResult(useId);
        assert.ok(full?.includes("batch 3 row 4999"), `the full result of ${useId} is in the store`);
      } finally {
        await s.close();
      }

      const view = await startView(["--store", store, id.slice(0, 20)], cliEnv(a));
      try {
        const session = (await (await fetch(`${view.url}/api/session`)).json()) as { id: string; total: number };
        assert.equal(session.id, id);
        assert.ok(session.total >= messages.length, `the viewer sees the whole conversation (${session.total} entries)`);
        const page = (await (await fetch(`${view.url}/api/entries?from=0&limit=5`)).json()) as { entries: unknown[] };
        assert.equal(page.entries.length, 5);
      } finally {
        assert.equal(await view.stop(), 0);
      }
    } finally {
      await fake.close();
      a.cleanup();
      b.cleanup();
      rmSync(folder, { recursive: true, force: true });
    }
  });
}

for (const kind of ["files", "postgres"] as const) {
  test(`${kind}: SIGKILL while a request is out: every message that request carried is in the store, and --continue goes on from them`, async () => {
    const ws = makeWorkspace();
    const folder = mkdtempSync(join(tmpdir(), "lethe-store-"));
    const db = `kill_${process.pid}`;
    // PostgreSQL behind a slow link (each write 300 ms late): a message still on its way to the
    // store when the request went out would be lost by the kill.
    const link = kind === "postgres" ? await slowLink(cluster.port, 300) : undefined;
    if (kind === "postgres") await cluster.createDatabase(db);
    const store = kind === "files" ? folder : `postgres://${cluster.user}:${cluster.password}@127.0.0.1:${link!.port}/${db}`;
    let n = 0;
    const fake = await startFake("anthropic", {
      script: (body: any): Step => (lastTextIs(body, "go on") ? { text: "went on" } : { toolUses: [{ name: "bash", input: { command: `echo step ${++n}` } }] }),
      // The seventh request never gets its answer: the process is killed while it waits.
      latencyMs: (_body, index) => (index === 6 ? 15_000 : 0),
    });
    try {
      const common = [...providerArgs("anthropic", fake), "--yes", "--cwd", ws.dir, "--store", store];
      const child = spawn(process.execPath, [builtBin(), ...common, "-p", "Run the steps."], { env: cliEnv(ws, keyEnv("anthropic")), stdio: ["ignore", "ignore", "pipe"] });
      const closed = new Promise((r) => child.on("close", r));
      while (fake.requests.length < 7) await new Promise((r) => setTimeout(r, 20));
      child.kill("SIGKILL");
      await closed;
      const pending = fake.requests[6];
      const s = await connectStore(store);
      let stored: string;
      try {
        const [info] = await s.list();
        stored = JSON.stringify((await (await s.conversation(info!.id)).lines()).filter((l) => l.type === "message"));
      } finally {
        await s.close();
      }
      const { uses, results } = idsOf(pending);
      assert.equal(uses.length, 6);
      for (const id of [...uses, ...results]) assert.ok(stored.includes(JSON.stringify(id)), `${id} was sent, so it is in the store`);
      assert.match(stored, /Run the steps/);
      const r = await runCli([...common, "--continue", "-p", "go on"], { env: cliEnv(ws, keyEnv("anthropic")) });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /went on/);
      const resumed = fake.requests.at(-1);
      for (const id of uses) assert.ok(JSON.stringify(resumed.messages).includes(JSON.stringify(id)), `${id} is in the continued session`);
    } finally {
      await fake.close();
      link?.close();
      ws.cleanup();
      rmSync(folder, { recursive: true, force: true });
    }
  });
}

/** A TCP relay to 127.0.0.1:`port` that holds each chunk from the client `delayMs` before passing it on. */
async function slowLink(port: number, delayMs: number): Promise<{ port: number; close(): void }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    sockets.add(client).add(upstream);
    client.on("data", (d) => void setTimeout(() => upstream.write(d), delayMs));
    upstream.on("data", (d) => client.write(d));
    const end = () => (client.destroy(), upstream.destroy());
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

test("the REPL on a store: /clear starts a new conversation there, /resume lists the store's, --resume goes on with one", async () => {
  const ws = makeWorkspace();
  const folder = mkdtempSync(join(tmpdir(), "lethe-store-"));
  const fake = await startFake("anthropic", { script: (body: any): Step => ({ text: `answer to ${/(first|second|third) question/.exec(JSON.stringify(body.messages.at(-1)))?.[1]}` }) });
  try {
    const common = [...providerArgs("anthropic", fake), "--cwd", ws.dir, "--store", folder];
    const r1 = await runCli(common, { env: cliEnv(ws, keyEnv("anthropic")), input: "first question\n/clear\nsecond question\n/resume\n/exit\n" });
    assert.equal(r1.code, 0, r1.stderr);
    assert.match(r1.stdout, /answer to first[\s\S]*New session[\s\S]*answer to second/);
    const listed = [...r1.stdout.matchAll(/^[* ] (\d{8}-\d{6}-\d{3}-[0-9a-f]{10}) .* 2 msgs/gm)].map((m) => m[1]!);
    assert.equal(listed.length, 2, r1.stdout);
    const s = await connectStore(folder);
    try {
      const texts = async (id: string) => JSON.stringify((await (await s.conversation(id)).lines()).filter((l) => l.type === "message"));
      const first = (await Promise.all(listed.map(async (id) => [id, await texts(id)] as const))).find(([, t]) => t.includes("first question"))![0];
      const r2 = await runCli([...common, "--resume", first.slice(0, 22)], { env: cliEnv(ws, keyEnv("anthropic")), input: "third question\n/exit\n" });
      assert.equal(r2.code, 0, r2.stderr);
      assert.match(r2.stdout, /answer to third/);
      assert.match(JSON.stringify(fake.requests.at(-1).messages), /first question[\s\S]*answer to first[\s\S]*third question/);
      const t = await texts(first);
      assert.match(t, /first question[\s\S]*answer to first[\s\S]*third question[\s\S]*answer to third/);
      assert.doesNotMatch(t, /second question/);
    } finally {
      await s.close();
    }
  } finally {
    await fake.close();
    ws.cleanup();
    rmSync(folder, { recursive: true, force: true });
  }
});

const lastTextIs = (body: any, text: string) => JSON.stringify(body.messages.at(-1)).includes(text);

test("a store that cannot be reached: one line with its code, exit 1, before any request", async () => {
  const ws = makeWorkspace();
  const fake = await startFake("anthropic", { script: [{ text: "never" }] });
  try {
    const port = await closedPort();
    const r = await runCli([...providerArgs("anthropic", fake), "--store", `postgres://lethe:secret@127.0.0.1:${port}/x`, "--cwd", ws.dir, "-p", "hello"], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /store/i);
    assert.doesNotMatch(r.stderr, /secret|\n\s+at /);
    assert.equal(fake.requests.length, 0);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});
