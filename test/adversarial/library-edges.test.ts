// Hostile input at the library's edges: every public entry point that takes messages (or engine
// options) answers with one short LetheInputError naming the field, never a raw RangeError (stack
// overflow), a TypeError (cycles, BigInt), an error thrown by a caller's getter or Proxy, or a 1 MB
// value echoed whole. A session folder that cannot be written is a one-line SessionStorageError.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs, { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { types } from "node:util";
import { LetheError, LetheInputError, SessionStorageError, checkHistory, createEngine, fromOpenAI, isValid, repair, toOpenAI, validate } from "../../src/index.ts";
import { createOpenAIAdapter } from "../../src/adapters/openai.ts";
import { lockSession } from "../../src/session/lock.ts";
import { MAX_VALUES } from "../../src/messages/input-values.ts";

const WINDOW = { contextWindow: 100_000, maxOutputTokens: 1_000 };
const MAX_LINE = 300;

const nest = (depth: number, leaf: unknown = "x"): unknown => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};
const boom = (what: string) => () => {
  throw new Error(`${what} boom`);
};
const throwingProxy = (target: object = {}) =>
  new Proxy(target, { get: boom("get"), has: boom("has"), ownKeys: boom("ownKeys"), getOwnPropertyDescriptor: boom("descriptor"), getPrototypeOf: boom("prototype") });
const revoked = () => {
  const r = Proxy.revocable([], {});
  r.revoke();
  return r.proxy;
};
const getter = (obj: object, key: string) => Object.defineProperty(obj, key, { get: boom("getter"), enumerable: true });
const cyclic = () => {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
};
const huge = "a".repeat(1 << 20);

const u = (content: unknown) => ({ role: "user", content });
/** The hostile message is always the last one (observe's reply takes it alone). */
const withInput = (input: unknown) => [u("go"), { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input }] }];

/** Anthropic-shape histories no entry point can read. */
const HOSTILE: Record<string, () => unknown> = {
  "10k-deep role": () => [{ role: nest(10_000), content: "hi" }],
  "10k-deep content": () => [u(nest(10_000))],
  "10k-deep tool input": () => withInput({ a: nest(10_000) }),
  "tool_result in a tool_result 10k deep": () => {
    let r: unknown = { type: "tool_result", tool_use_id: "t1", content: "x" };
    for (let i = 0; i < 10_000; i++) r = { type: "tool_result", tool_use_id: "t1", content: [r] };
    return [...withInput({}), u([r])];
  },
  "cyclic role": () => [{ role: cyclic(), content: "hi" }],
  "cyclic tool input": () => withInput(cyclic()),
  "BigInt role": () => [{ role: 1n, content: "hi" }],
  "BigInt in a tool input": () => withInput({ n: 1n }),
  "BigInt in an unknown block": () => [u([{ type: "future_kind", n: 1n }])],
  "BigInt text": () => [u([{ type: "text", text: 1n }])],
  "throwing toJSON in a tool input": () => withInput({ toJSON: boom("toJSON") }),
  "throwing getter on role": () => [getter({ content: "hi" }, "role")],
  "throwing getter on a block": () => [u([getter({ type: "text" }, "text")])],
  "throwing Proxy message": () => [throwingProxy()],
  "throwing Proxy block": () => [u([throwingProxy()])],
  "throwing Proxy tool input": () => withInput(throwingProxy()),
  "throwing Proxy history": () => throwingProxy([u("hi")]),
  "revoked Proxy history": () => revoked(),
  "1 MB role": () => [{ role: huge, content: "hi" }],
};

/** OpenAI Chat Completions messages no entry point can read. */
const HOSTILE_OPENAI: Record<string, () => unknown> = {
  "10k-deep role": () => [{ role: nest(10_000), content: "hi" }],
  "10k-deep content": () => [u(nest(10_000))],
  "10k-deep part type": () => [u([{ type: nest(10_000) }])],
  "cyclic role": () => [{ role: cyclic(), content: "hi" }],
  "BigInt role": () => [{ role: 1n, content: "hi" }],
  "BigInt tool_call_id": () => [u("go"), { role: "tool", tool_call_id: 1n, content: "x" }],
  "throwing getter on role": () => [getter({ content: "hi" }, "role")],
  "throwing Proxy message": () => [throwingProxy()],
  "throwing Proxy tool call": () => [u("go"), { role: "assistant", content: null, tool_calls: [throwingProxy()] }],
  "throwing Proxy list": () => throwingProxy([u("hi")]),
  "revoked Proxy list": () => revoked(),
  "1 MB role": () => [{ role: huge, content: "hi" }],
};

/** Why `e` is not the error wanted, or "" when it is a short one-line LetheInputError. */
function wrongError(e: unknown): string {
  if (!(e instanceof LetheInputError)) return `${(e as Error)?.constructor?.name}: ${String((e as Error)?.message).slice(0, 100)}`;
  if (e.message.includes("\n")) return `a message of several lines: ${e.message.slice(0, 100)}`;
  if (e.message.length > MAX_LINE) return `a ${e.message.length}-char message: ${e.message.slice(0, 100)}…`;
  return "";
}

/** Runs every case through `call`; fails naming each case that did not give a short LetheInputError. */
async function expectAll(cases: Record<string, () => unknown>, call: (input: never) => unknown): Promise<void> {
  const wrong: string[] = [];
  for (const [name, make] of Object.entries(cases)) {
    try {
      await call(make() as never);
      wrong.push(`${name}: no error`);
    } catch (e) {
      const why = wrongError(e);
      if (why) wrong.push(`${name}: ${why}`);
    }
  }
  assert.deepEqual(wrong, []);
}

/** The hostile message of a case: its last one. */
const hostileMessage = (h: unknown): unknown => (types.isProxy(h) || !Array.isArray(h) ? h : h.at(-1));
const engine = () => createEngine(WINDOW);
const adapter = () => createOpenAIAdapter({ engine: engine() });
const reply = { role: "assistant", content: "ok" };
const usage = { input_tokens: 10, output_tokens: 1 };

const ENTRY_POINTS: Record<string, (h: never) => unknown> = {
  validate: (h) => validate(h),
  isValid: (h) => isValid(h),
  repair: (h) => repair(h),
  checkHistory: (h) => checkHistory(h),
  toOpenAI: (h) => toOpenAI(h),
  "toOpenAI strict": (h) => toOpenAI(h, { strict: true }),
  "engine.prepare": (h) => engine().prepare(h),
  "engine.prepare, after a valid call (the host's own list)": (h) => {
    const e = engine();
    const first = [u("hi")];
    e.prepare(first as never);
    const next = h as unknown;
    return e.prepare((!types.isProxy(next) && Array.isArray(next) ? [...first, ...next] : next) as never);
  },
  "engine.beforeRequest": (h) => engine().beforeRequest(h),
  "engine.compact": (h) => engine().compact(h),
  "engine.recover": (h) => engine().recover(h, { kind: "prompt_too_long", message: "too long" } as never),
  "engine.observe (sent)": (h) => engine().observe(h, reply as never, usage),
  "engine.observe (reply)": (h) => engine().observe([u("hi")] as never, hostileMessage(h) as never, usage),
};

for (const [name, call] of Object.entries(ENTRY_POINTS)) {
  test(`${name}: hostile histories give a short LetheInputError`, async () => {
    await expectAll(HOSTILE, call);
  });
}

const fakeClient = { chat: { completions: { create: async () => ({ choices: [{ message: { role: "assistant", content: "ok" } }] }) } } };
const OPENAI_ENTRY_POINTS: Record<string, (h: never) => unknown> = {
  fromOpenAI: (h) => fromOpenAI(h),
  "openai adapter.compact": (h) => adapter().compact(h),
  "openai adapter.create": (h) => adapter().create(fakeClient, { model: "m", messages: h }),
  "openai adapter.observe": (h) => adapter().observe({ choices: [{ message: hostileMessage(h) }] }),
};

for (const [name, call] of Object.entries(OPENAI_ENTRY_POINTS)) {
  test(`${name}: hostile messages give a short LetheInputError`, async () => {
    await expectAll(HOSTILE_OPENAI, call);
  });
}

test("the error names the field and quotes at most ~60 chars of the value", () => {
  const thrown = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e as Error;
    }
    assert.fail("no error");
  };
  const big = thrown(() => validate([u("a"), { role: "assistant", content: "b" }, u("c"), { role: huge, content: "d" }] as never));
  assert.match(big.message, /^lethe: history\[3\]\.role: must be "user" or "assistant", got a 1,048,576-char string "a{10,60}…"$/);
  assert.match(thrown(() => toOpenAI([{ role: huge, content: "d" }] as never)).message, /^toOpenAI: message 0 has unknown role a 1,048,576-char string "a{10,60}…"$/);
  assert.match(thrown(() => fromOpenAI([{ role: huge, content: "d" }] as never)).message, /^fromOpenAI: message 0 has unknown role a 1,048,576-char string "a{10,60}…"$/);
  assert.match(thrown(() => validate([{ role: nest(10_000), content: "hi" }] as never)).message, /^lethe: history\[0\]\.role: must be "user" or "assistant", got an array$/);
  assert.match(thrown(() => validate([{ role: 1n, content: "hi" }] as never)).message, /history\[0\]\.role: must be "user" or "assistant", got a BigInt/);
  assert.match(thrown(() => validate(withInput({ n: 1n }) as never)).message, /^lethe: history\[1\]\.content\[0\]\.input: .*BigInt/);
  assert.match(thrown(() => validate(withInput(cyclic()) as never)).message, /^lethe: history\[1\]\.content\[0\]\.input: .*(nested|cycl)/);
  assert.match(thrown(() => validate([u("ok"), getter({ content: "hi" }, "role")] as never)).message, /^lethe: history\[1\]: .*getter boom/);
  assert.match(thrown(() => validate(revoked() as never)).message, /^lethe: history: /);
});

test("a tool input that shares one object down 21 levels (2 million paths) is refused at the value bound, not walked", () => {
  // Each level's two keys are getters that count their reads: walking every path reads them
  // about 4.2 million times; a check that stops at MAX_VALUES reads them about that often.
  let reads = 0;
  let shared: unknown = { leaf: 1 };
  for (let i = 0; i < 21; i++) {
    const below = shared;
    const level = {};
    for (const key of ["a", "b"]) Object.defineProperty(level, key, { get: () => (reads++, below), enumerable: true });
    shared = level;
  }
  for (const [name, call] of [["validate", () => validate(withInput(shared) as never)], ["prepare", () => engine().prepare(withInput(shared) as never)], ["toOpenAI", () => toOpenAI(withInput(shared) as never)]] as const) {
    reads = 0;
    assert.throws(call, (e) => wrongError(e) === "");
    assert.ok(reads > 0 && reads <= 1.1 * MAX_VALUES, `${name} read the shared object's keys ${reads.toLocaleString("en-US")} times`);
  }
});

// ── createEngine options ─────────────────────────────────────────────────────────

test("createEngine: every option of the wrong type is a LetheInputError naming it", () => {
  const bad: Record<string, unknown> = {
    sessionDir: 42,
    store: "disk",
    config: [],
    model: 4,
    media: "gemini",
    summarizer: "gpt",
    summarizerMode: "llm",
    hooks: 1,
    transcript: "file.jsonl",
    transcriptHoldsHistory: "yes",
    workspace: {},
    readFile: "cat",
    now: 0,
    onEvent: true,
  };
  const wrong: string[] = [];
  for (const [key, value] of Object.entries(bad)) {
    try {
      createEngine({ ...WINDOW, [key]: value } as never);
      wrong.push(`${key}: accepted`);
    } catch (e) {
      const why = wrongError(e);
      if (why) wrong.push(`${key}: ${why}`);
      else if (!(e as Error).message.includes(key)) wrong.push(`${key}: not named in ${(e as Error).message}`);
    }
  }
  assert.deepEqual(wrong, []);
  assert.throws(() => createEngine({ ...WINDOW, sessionDir: 42 } as never), (e) => /^lethe: .*sessionDir must be .*string.*, got 42$/.test((e as Error).message));
});

test("createEngine: a misspelled option is refused with a suggestion", () => {
  assert.throws(() => createEngine({ ...WINDOW, sesionDir: "/tmp/x" } as never), (e) => e instanceof LetheInputError && /"sesionDir".*did you mean sessionDir\?/.test(e.message));
  assert.throws(() => createEngine({ ...WINDOW, contextwindow: 5 } as never), (e) => e instanceof LetheInputError && /did you mean contextWindow\?/.test(e.message));
  assert.throws(() => createEngine({ ...WINDOW, zzzzzzzzzz: 1 } as never), (e) => e instanceof LetheInputError && !/did you mean/.test(e.message));
  assert.throws(() => createEngine({ ...WINDOW, [huge]: 1 } as never), (e) => wrongError(e) === "");
  // Nested config keys: the zod schema is strict.
  assert.throws(() => createEngine({ ...WINDOW, config: { snip: { enabeld: false } } } as never), (e) => e instanceof LetheInputError && /snip\.enabeld: unknown key \(did you mean enabled\?\)/.test(e.message));
  assert.throws(() => createEngine({ ...WINDOW, config: { snip: { [huge]: false } } } as never), (e) => wrongError(e) === "");
});

test("createEngine: hostile option values and objects are a LetheInputError", () => {
  const cases: Record<string, () => unknown> = {
    "BigInt contextWindow": () => ({ contextWindow: 100_000n, maxOutputTokens: 1_000 }),
    "1 MB contextWindow": () => ({ contextWindow: huge, maxOutputTokens: 1_000 }),
    "throwing getter": () => getter({ ...WINDOW }, "model"),
    "throwing Proxy": () => throwingProxy(),
    "throwing Proxy config": () => ({ ...WINDOW, config: throwingProxy() }),
    "revoked Proxy": () => revoked(),
    "NUL in sessionDir": () => ({ ...WINDOW, sessionDir: "/tmp/a\0b" }),
  };
  const wrong: string[] = [];
  for (const [name, make] of Object.entries(cases)) {
    try {
      createEngine(make() as never);
      wrong.push(`${name}: accepted`);
    } catch (e) {
      const why = wrongError(e);
      if (why) wrong.push(`${name}: ${why}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test("createEngine: every documented option still passes", () => {
  const e = createEngine({
    ...WINDOW,
    sessionDir: undefined,
    store: { save: () => "mem://x", load: () => undefined },
    config: { snip: { enabled: false } },
    model: "gpt-4o",
    media: "openai",
    summarizerMode: "digest",
    hooks: {},
    transcriptHoldsHistory: false,
    workspace: tmpdir(),
    readFile: () => undefined,
    now: () => 0,
    onEvent: () => {},
  });
  assert.equal(e.prepare([u("hi")] as never).history.length, 1);
});

// ── the session lock on a folder that cannot be written ───────────────────────────

test("lockSession: a read-only file system is one SessionStorageError line, not 'EROFS … lock'", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-lock-"));
  const real = fs.openSync;
  fs.openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    if (String(path).endsWith("lock")) throw Object.assign(new Error(`EROFS: read-only file system, open '${String(path)}'`), { code: "EROFS", errno: -30, syscall: "open" });
    return (real as (...a: unknown[]) => number)(path, ...rest);
  }) as typeof fs.openSync;
  syncBuiltinESMExports();
  try {
    assert.throws(
      () => lockSession(dir, "s1"),
      (e) => e instanceof SessionStorageError && e instanceof LetheError && e.code === "session_storage" && !e.message.includes("\n") && /^lethe: cannot keep the session in .*lethe-lock-.*: the file system is read-only \(EROFS\)/.test(e.message),
    );
  } finally {
    fs.openSync = real;
    syncBuiltinESMExports();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("lockSession: a session folder that is a file is one SessionStorageError line", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-lock-"));
  try {
    const notDir = join(dir, "session");
    writeFileSync(notDir, "a file, not a folder");
    assert.throws(() => lockSession(notDir, "s1"), (e) => e instanceof SessionStorageError && /^lethe: cannot keep the session in .*session: .*\(ENOTDIR\)/.test(e.message) && !e.message.includes("\n"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
