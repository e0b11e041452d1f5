import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import type { Message } from "../../src/messages/types.ts";
import {
  TORN_TAIL_EVENT,
  TRANSCRIPT_VERSION,
  type MessageEntry,
  loadTranscript,
  openTranscript,
  resumeContext,
  serializeEntry,
} from "../../src/session/transcript.ts";
import {
  SessionNotFoundError,
  createSessionDir,
  ensureLetheDir,
  isValidSessionId,
  latestSession,
  listSessions,
  newSessionId,
  resolveSession,
  sessionPaths,
} from "../../src/session/paths.ts";
import { arbHistory } from "../support/arbitraries.ts";
import { calls, results, said, user } from "../support/build.ts";
import { LetheInputError } from "../../src/messages/input.ts";
import { createEngine } from "../../src/engine/index.ts";

const here = dirname(fileURLToPath(import.meta.url));

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "lethe-transcript-"));
}

function withDir(fn: (dir: string) => void | Promise<void>) {
  return async () => {
    const dir = tmp();
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

const tricky: Message[] = [
  user("line one\nline two\r\n\u2028\u2029 日本語 🎉 \u0000 \"quoted\" \\ back"),
  calls(["bash", { command: "echo 'hi'\n", nested: { a: [1, 2.5, null, true] } }, "toolu_1"]),
  results(["toolu_1", [{ type: "text", text: "block list" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }]]),
  { role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature: "sig" }, { type: "text", text: "lone \ud800 surrogate" }] },
  { role: "user", content: "plain string content" },
];

// ───────────────────────── round trip ─────────────────────────

test("append/load round trip: header, messages (real JSON blocks), boundary, event", withDir((dir) => {
  const path = join(dir, "s", "transcript.jsonl");
  const w = openTranscript(path, { header: { id: "abc", cwd: "/w", model: "claude-x" }, now: () => 0 });
  const written = tricky.map((m) => w.appendMessage(m));
  const b = w.appendBoundary({ kind: "summarize", tokens_before: 1000, tokens_after: 100, summary: "S", history: [user("summary")], details: { x: 1 } });
  const e = w.appendEvent("note", { a: 1 });
  w.close();

  const text = readFileSync(path, "utf8");
  const lines = text.split("\n");
  assert.equal(lines.pop(), "", "every line ends in a newline");
  assert.equal(lines.length, 1 + tricky.length + 2, "one line per entry");
  for (const l of lines) assert.equal(typeof JSON.parse(l).type, "string");

  const t = loadTranscript(path);
  assert.deepEqual(t.warnings, []);
  assert.deepEqual(t.errors, []);
  assert.deepEqual(t.header, { type: "session", id: "abc", created: new Date(0).toISOString(), cwd: "/w", model: "claude-x", version: TRANSCRIPT_VERSION });
  assert.deepEqual(t.entries, [...written, b, e]);
  assert.deepEqual(t.entries.slice(0, tricky.length).map((x) => (x as MessageEntry).message), tricky);
  assert.equal(new Set(written.map((x) => x.uuid)).size, written.length, "uuids are unique");
}));

test("reopening appends after what is there and writes the header only once", withDir((dir) => {
  const path = join(dir, "t.jsonl");
  const w1 = openTranscript(path, { header: { id: "a", cwd: "/" } });
  w1.appendMessage(user("one"));
  w1.close();
  const w2 = openTranscript(path, { header: { id: "a", cwd: "/" } });
  w2.appendMessage(said("two"));
  w2.close();
  const t = loadTranscript(path);
  assert.deepEqual(t.warnings, []);
  assert.equal(t.header?.id, "a");
  assert.deepEqual(resumeContext(t.entries), [user("one"), said("two")]);
  assert.throws(() => w2.appendMessage(user("closed")), /closed/);
}));

test("append rejects an entry without a type; loading a missing file throws one line", withDir((dir) => {
  const w = openTranscript(join(dir, "t.jsonl"));
  assert.throws(() => w.append({} as never), /type/);
  w.close();
  assert.throws(() => loadTranscript(join(dir, "nope.jsonl")), (err: Error) => /no transcript at/.test(err.message) && !err.message.includes("\n"));
}));

// ───────────────────────── crash safety on load ─────────────────────────

test("a torn last line (half a line) is skipped with a warning, never thrown", withDir((dir) => {
  const path = join(dir, "t.jsonl");
  const w = openTranscript(path, { header: { id: "a", cwd: "/" } });
  const kept = [w.appendMessage(user("one")), w.appendMessage(said("two"))];
  w.close();
  const line = serializeEntry({ type: "message", uuid: "torn", ts: "x", message: user("x".repeat(100)) });
  appendFileSync(path, line.slice(0, Math.floor(line.length / 2)));

  const t = loadTranscript(path);
  assert.deepEqual(t.errors, []);
  assert.equal(t.warnings.length, 1);
  assert.match(t.warnings[0] as string, /:4: .*torn/);
  assert.ok(!(t.warnings[0] as string).includes("\n"));
  assert.deepEqual(t.entries, kept);
}));

test("an unparseable line in the middle is an error naming its line number; the rest loads", withDir((dir) => {
  const path = join(dir, "t.jsonl");
  const w = openTranscript(path, { header: { id: "a", cwd: "/" } });
  const a = w.appendMessage(user("one"));
  w.close();
  appendFileSync(path, '{"type":"message","uuid":"bad", broken\n');
  appendFileSync(path, '["not an object"]\n');
  const w2 = openTranscript(path);
  const b = w2.appendMessage(said("two"));
  w2.close();

  const t = loadTranscript(path);
  assert.equal(t.errors.length, 2);
  assert.match(t.errors[0] as string, /t\.jsonl:3: unparseable line/);
  assert.match(t.errors[1] as string, /t\.jsonl:4: /);
  for (const e of t.errors) assert.ok(!e.includes("\n"));
  assert.deepEqual(t.warnings, []);
  assert.deepEqual(t.entries, [a, b]);
}));

test("a message line with the wrong shape is an error, an unknown type a warning", withDir((dir) => {
  const path = join(dir, "t.jsonl");
  writeFileSync(path, [
    JSON.stringify({ type: "session", id: "a", created: "c", cwd: "/", version: 1 }),
    JSON.stringify({ type: "message", uuid: "u1", ts: "t", message: { role: "robot", content: "x" } }),
    JSON.stringify({ type: "future-thing", x: 1 }),
    JSON.stringify({ type: "message", uuid: "u2", ts: "t", message: user("ok") }),
    "",
  ].join("\n"));
  const t = loadTranscript(path);
  assert.equal(t.errors.length, 1);
  assert.match(t.errors[0] as string, /:2: message entry without a valid message/);
  assert.equal(t.warnings.length, 1);
  assert.match(t.warnings[0] as string, /:3: unknown entry type "future-thing"/);
  assert.deepEqual(resumeContext(t.entries), [user("ok")]);
}));

test("reopening after a crash terminates the torn line: the fragment stays, new lines load, no error", withDir((dir) => {
  const path = join(dir, "t.jsonl");
  const w = openTranscript(path, { header: { id: "a", cwd: "/" } });
  const a = w.appendMessage(user("one"));
  w.close();
  const fragment = serializeEntry({ type: "message", uuid: "torn", ts: "x", message: said("never acknowledged") }).slice(0, 30);
  appendFileSync(path, fragment);

  const w2 = openTranscript(path, { header: { id: "a", cwd: "/" } });
  const b = w2.appendMessage(said("after the crash"));
  const c = w2.appendMessage(user("and more"));
  w2.close();

  assert.ok(readFileSync(path, "utf8").includes(`${fragment}\n`), "the fragment is kept, terminated");
  const t = loadTranscript(path);
  assert.deepEqual(t.errors, []);
  assert.equal(t.warnings.length, 1);
  assert.match(t.warnings[0] as string, /:3: .*torn/);
  const msgs = t.entries.filter((e) => e.type === "message");
  assert.deepEqual(msgs, [a, b, c]);
  assert.ok(t.entries.some((e) => e.type === "event" && e.name === TORN_TAIL_EVENT));
}));

// ───────────────────────── resume ─────────────────────────

test("resumeContext: the last boundary's history plus everything appended after it", withDir((dir) => {
  const path = join(dir, "t.jsonl");
  const w = openTranscript(path, { header: { id: "a", cwd: "/" } });
  assert.deepEqual(resumeContext([]), []);
  w.appendMessage(user("m1"));
  w.appendMessage(said("m2"));
  w.appendMessage(user("m3"));
  let t = loadTranscript(path);
  assert.deepEqual(resumeContext(t.entries), [user("m1"), said("m2"), user("m3")], "no boundary: all since the start");

  const rebuilt1 = [user("summary one"), said("ok"), user("m3")];
  w.appendBoundary({ kind: "summarize", tokens_before: 900, tokens_after: 90, history: rebuilt1 });
  w.appendMessage(said("m4"));
  w.appendMessage(user("m5"));
  const rebuilt2 = [user("summary two"), said("ok"), user("m5")];
  w.appendBoundary({ kind: "manual", tokens_before: 800, tokens_after: 80, history: rebuilt2 });
  t = loadTranscript(path);
  assert.deepEqual(resumeContext(t.entries), rebuilt2, "boundary last: just its history");

  w.appendMessage(said("m6"));
  // A record-only boundary (no history) does not move the resume point.
  w.appendBoundary({ kind: "budget", tokens_before: 500, tokens_after: 400 });
  w.appendEvent("turn", { n: 3 });
  w.appendMessage(user("m7"));
  w.close();
  t = loadTranscript(path);
  assert.deepEqual(resumeContext(t.entries), [...rebuilt2, said("m6"), user("m7")]);
}));

test("property: resume gives back exactly the live context after any mix of appends and compactions", async () => {
  await fc.assert(
    fc.asyncProperty(
      arbHistory({ maxRounds: 15 }),
      fc.array(fc.nat(), { maxLength: 40 }),
      fc.integer({ min: 0, max: 1000 }),
      async (history, choices, crashPoint) => {
        const dir = tmp();
        try {
          const path = join(dir, "t.jsonl");
          const w = openTranscript(path, { header: { id: "p", cwd: "/" } });
          let live: Message[] = [];
          history.forEach((m, i) => {
            w.appendMessage(m);
            live.push(m);
            const c = choices[i % Math.max(1, choices.length)] ?? 0;
            if (choices.length > 0 && c % 5 === 0) {
              // A compaction: the context is replaced by a rebuilt history.
              const keep = c % 4;
              live = [user(`summary ${i}`), ...live.slice(Math.max(0, live.length - keep))];
              w.appendBoundary({ kind: "summarize", tokens_before: 10, tokens_after: 5, history: live });
            } else if (c % 7 === 0) {
              w.appendBoundary({ kind: "micro", tokens_before: 10, tokens_after: 9 });
            }
          });
          w.close();
          // Half the time, a torn write at the end (a crash mid-append) must not change the result.
          if (crashPoint % 2 === 0) appendFileSync(path, serializeEntry({ type: "message", uuid: "x", ts: "x", message: user("lost") }).slice(0, 1 + (crashPoint % 40)));
          const t = loadTranscript(path);
          assert.deepEqual(t.errors, []);
          assert.deepEqual(resumeContext(t.entries), JSON.parse(JSON.stringify(live)));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    ),
    { numRuns: 60 },
  );
});

// ───────────────────────── a real crash ─────────────────────────

interface ChildRun {
  printed: { uuid: string; hash: string }[];
}

function runAndKill(path: string, seed: number, killAfter: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(here, "crash-child.ts"), path, String(seed)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let killed = false;
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d: string) => (err += d));
    child.stdout.on("data", (d: string) => {
      out += d;
      if (!killed && out.split("\n").length - 1 >= killAfter) {
        killed = true;
        // A little random slack, so the kill lands anywhere in the append/print loop.
        setTimeout(() => child.kill("SIGKILL"), Math.floor(Math.random() * 10));
      }
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (signal !== "SIGKILL") {
        reject(new Error(`crash child exited with ${code}/${signal}: ${err}`));
        return;
      }
      const lines = out.split("\n");
      lines.pop(); // an unterminated tail was not fully printed
      resolve({
        printed: lines.map((l) => {
          const [uuid, hash] = l.split(" ");
          return { uuid: uuid as string, hash: hash as string };
        }),
      });
    });
  });
}

const sha = (m: Message) => createHash("sha256").update(JSON.stringify(m)).digest("hex");

test("SIGKILL at a random moment: every acknowledged message is on disk, loading succeeds", withDir(async (dir) => {
  for (let run = 0; run < 5; run++) {
    const path = join(dir, `run${run}`, "transcript.jsonl");
    const seed = 1 + Math.floor(Math.random() * 1e9);
    const killAfter = 1 + Math.floor(Math.random() * 40);
    const { printed } = await runAndKill(path, seed, killAfter);
    assert.ok(printed.length >= killAfter, `run ${run}: the child printed ${printed.length} lines`);

    const t = loadTranscript(path);
    const ctx = `run ${run} (seed ${seed}, killAfter ${killAfter})`;
    assert.deepEqual(t.errors, [], ctx);
    assert.ok(t.warnings.length <= 1, `${ctx}: at most the last line torn: ${t.warnings.join("; ")}`);
    assert.equal(t.header?.id, "crash");
    const onDisk = t.entries.filter((e): e is MessageEntry => e.type === "message");
    // Every acknowledged message is there, in order, byte for byte; at most one more
    // (appended, killed before it could print).
    assert.ok(onDisk.length >= printed.length && onDisk.length <= printed.length + 1, `${ctx}: ${onDisk.length} on disk, ${printed.length} printed`);
    printed.forEach((p, i) => {
      const e = onDisk[i] as MessageEntry;
      assert.equal(e.uuid, p.uuid, `${ctx}: message ${i}`);
      assert.equal(sha(e.message), p.hash, `${ctx}: message ${i} content`);
    });
    assert.deepEqual(resumeContext(t.entries), onDisk.map((e) => e.message));

    // The session goes on after the crash: a reopened writer appends cleanly.
    const w = openTranscript(path, { header: { id: "crash", cwd: "/" } });
    const next = w.appendMessage(user("resumed"));
    w.close();
    const t2 = loadTranscript(path);
    assert.deepEqual(t2.errors, [], ctx);
    assert.ok(t2.warnings.length <= 1, ctx);
    const after = t2.entries.filter((e): e is MessageEntry => e.type === "message");
    assert.deepEqual(after, [...onDisk, next]);
  }
}));

// ───────────────────────── session layout ─────────────────────────

test("session ids are filename safe and sort by creation time", () => {
  const a = newSessionId(Date.UTC(2025, 0, 2, 3, 4, 5, 6));
  assert.match(a, /^20250102-030405-006-[0-9a-f]{10}$/);
  assert.ok(isValidSessionId(a));
  const ids = [Date.UTC(2024, 11, 31, 23, 59, 59, 999), Date.UTC(2025, 0, 1), Date.UTC(2025, 0, 1, 0, 0, 0, 1), Date.UTC(2031, 5, 6)].map((t) => newSessionId(t));
  assert.deepEqual([...ids].sort(), ids);
  assert.notEqual(newSessionId(0), newSessionId(0));
  for (const bad of ["", "..", "../x", "a/b", ".hidden", "a b", "x".repeat(200)]) assert.ok(!isValidSessionId(bad), bad);
});

test(".lethe/ gets a .gitignore with * (an existing one is left alone); session folders have tool-results/", withDir((ws) => {
  const s = createSessionDir(ws);
  assert.equal(readFileSync(join(ws, ".lethe", ".gitignore"), "utf8"), "*\n");
  assert.equal(s.dir, join(ws, ".lethe", "sessions", s.id));
  assert.equal(s.transcript, join(s.dir, "transcript.jsonl"));
  assert.equal(s.toolResults, join(s.dir, "tool-results"));
  assert.deepEqual(sessionPaths(ws, s.id), s);
  writeFileSync(join(ws, ".lethe", ".gitignore"), "custom\n");
  ensureLetheDir(ws);
  assert.equal(readFileSync(join(ws, ".lethe", ".gitignore"), "utf8"), "custom\n");
}));

test("listSessions: newest first, with preview, message count and last modified; latestSession skips empty ones", withDir((ws) => {
  assert.deepEqual(listSessions(ws), []);
  assert.equal(latestSession(ws), undefined);
  const mk = (id: string, msgs: Message[], mtime: number) => {
    const s = createSessionDir(ws, id);
    const w = openTranscript(s.transcript, { header: { id, cwd: ws, model: "m" } });
    for (const m of msgs) w.appendMessage(m);
    w.close();
    utimesSync(s.transcript, mtime, mtime);
    return s;
  };
  mk("20250101-000000-000-aaaaaaaaaa", [user("old task"), said("done")], 1000);
  mk("20250102-000000-000-bbbbbbbbbb", [results(["t", "x"]), user("  Fix the\n  login   bug in src/auth.ts " + "and more ".repeat(30)), said("ok"), user("thanks")], 3000);
  mk("20250103-000000-000-cccccccccc", [], 5000);
  mkdirSync(join(ws, ".lethe", "sessions", "not a session"), { recursive: true });

  const list = listSessions(ws);
  assert.deepEqual(list.map((s) => s.id), ["20250103-000000-000-cccccccccc", "20250102-000000-000-bbbbbbbbbb", "20250101-000000-000-aaaaaaaaaa"]);
  const b = list[1]!;
  assert.equal(b.messageCount, 4);
  assert.ok(b.preview.startsWith("Fix the login bug in src/auth.ts and more"), b.preview);
  assert.ok(b.preview.length <= 80 && !b.preview.includes("\n"));
  assert.equal(b.lastModified.getTime(), 3000 * 1000);
  assert.equal(b.model, "m");
  assert.equal(list[0]!.messageCount, 0);
  assert.equal(list[0]!.preview, "");
  assert.equal(latestSession(ws)?.id, "20250102-000000-000-bbbbbbbbbb");
}));

test("resolveSession: exact id, unique prefix; unknown or unsafe ids give a one-line error", withDir((ws) => {
  createSessionDir(ws, "20250101-000000-000-aaaaaaaaaa");
  createSessionDir(ws, "20250101-000000-000-abbbbbbbbb");
  assert.equal(resolveSession(ws, "20250101-000000-000-aaaaaaaaaa").id, "20250101-000000-000-aaaaaaaaaa");
  assert.equal(resolveSession(ws, "20250101-000000-000-ab").id, "20250101-000000-000-abbbbbbbbb");
  const oneLine = (re: RegExp) => (err: unknown) => err instanceof SessionNotFoundError && re.test(err.message) && !err.message.includes("\n");
  assert.throws(() => resolveSession(ws, "nope"), oneLine(/no session "nope" in .*sessions/));
  assert.throws(() => resolveSession(ws, "20250101-000000-000-a"), oneLine(/ambiguous/));
  assert.throws(() => resolveSession(ws, "../../etc"), oneLine(/not a valid session id/));
  assert.throws(() => resolveSession(join(ws, "empty"), "x"), oneLine(/no sessions yet/));
}));

test("latestSession picks by modification time and reads only the start of a transcript (a 3 GB one is not parsed whole)", withDir((ws) => {
  const mk = (id: string, msgs: Message[]) => {
    const s = createSessionDir(ws, id);
    const w = openTranscript(s.transcript, { header: { id, cwd: ws, model: "m" } });
    for (const m of msgs) w.appendMessage(m);
    w.close();
    return s;
  };
  mk("20250101-000000-000-aaaaaaaaaa", [user("old task"), said("done")]);
  const big = mk("20250102-000000-000-bbbbbbbbbb", [results(["t", "x"]), user("the big session")]);
  // Sparse: 3 GB on paper, nothing on disk. Reading it whole fails (over Node's 2 GB buffer limit).
  truncateSync(big.transcript, 3 * 1024 ** 3);
  utimesSync(join(ws, ".lethe", "sessions", "20250101-000000-000-aaaaaaaaaa", "transcript.jsonl"), 1000, 1000);
  utimesSync(big.transcript, 3000, 3000);
  const latest = latestSession(ws);
  assert.equal(latest?.id, "20250102-000000-000-bbbbbbbbbb");
  assert.equal(latest?.preview, "the big session");
  assert.equal(latest?.model, "m");
}));

test("a message the engine refuses (a system role mid-history, content that is not a message) is refused by the transcript too, in one line, and nothing is written; what is written resumes whole", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-transcript-"));
  try {
    const path = join(dir, "t.jsonl");
    const t = openTranscript(path, { header: { id: "s", cwd: dir } });
    t.appendMessage({ role: "user", content: "hello" });
    for (const bad of [{ role: "system", content: "be brief" }, { role: "user", content: [{ text: "no type" }] }, { role: "assistant" }]) {
      assert.throws(() => t.appendMessage(bad as never), (e: Error) => e instanceof LetheInputError && /^lethe: transcript: message[^\n]*$/.test(e.message), JSON.stringify(bad));
    }
    t.appendMessage({ role: "assistant", content: [{ type: "text", text: "hi" }] });
    t.close();
    const loaded = loadTranscript(path);
    assert.deepEqual([loaded.errors, loaded.warnings], [[], []]);
    assert.deepEqual(resumeContext(loaded.entries).map((m) => m.role), ["user", "assistant"]);
    assert.throws(() => createEngine({ contextWindow: 10_000, maxOutputTokens: 1_000 }).prepare([{ role: "system", content: "x" } as never]), /must be "user" or "assistant", got "system"/, "the engine says the same");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
