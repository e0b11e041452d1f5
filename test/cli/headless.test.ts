// The headless contract (SPEC.md, "The agent (CLI)"), through the real entry point as a subprocess:
// stdout carries only the answer (text), one JSON object (json) or JSON lines (stream-json); any
// failure is ONE line on stderr and a non-zero exit (2 for a bad command line).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";
import type { Step } from "../support/fakes/common.ts";
import { anthropicInputTokens } from "../support/fakes/anthropic.ts";
import { closedPort, builtBin, type Provider, ROOT, cliEnv, keyEnv, lastMessageText, makeWorkspace, onlySession, providerArgs, runCli, startFake, MODELS } from "./support.ts";

/** stderr is exactly one line (and no stack trace). */
function assertOneLine(stderr: string, pattern: RegExp) {
  const lines = stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `one line on stderr, got:\n${stderr}`);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(stderr, /\n\s+at /);
}

/** A port nothing listens on. */
test("--help and --version", async () => {
  const ws = makeWorkspace();
  try {
    const help = await runCli(["--help"], { env: cliEnv(ws) });
    assert.equal(help.code, 0);
    assert.match(help.stdout, /lethe -p "<prompt>"/);
    for (const flag of ["--provider", "--model", "--base-url", "--context-window", "--max-output-tokens", "--yes", "--cwd", "--resume", "--continue", "--summarizer", "--max-turns", "--output-format", "--auto-compact", "--compact-threshold"]) {
      assert.ok(help.stdout.includes(flag), `help mentions ${flag}`);
    }
    for (const env of ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "LETHE_MODEL"]) assert.ok(help.stdout.includes(env));
    const version = await runCli(["--version"], { env: cliEnv(ws) });
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  } finally {
    ws.cleanup();
  }
});

test("bad command lines: one-line usage error, exit 2, nothing on stdout", async () => {
  const ws = makeWorkspace();
  try {
    const cases: [string[], RegExp][] = [
      [["--bogus"], /^lethe: unknown option --bogus/],
      [["-p", "hi", "--context-window", "lots"], /--context-window needs a positive whole number/],
      [["-p", "hi", "--provider", "gemini"], /--provider must be one of anthropic, openai/],
      [["-p", "hi", "--output-format", "xml"], /--output-format must be one of text, json, stream-json/],
      [["--output-format", "json"], /needs -p/],
      [["-p", "hi", "--model"], /--model needs a value/],
      [["-p", "hi", "--resume", "x", "--continue"], /cannot be used together/],
      [["-p", "hi", "--cwd", join(ws.dir, "missing")], /--cwd: no such folder/],
      [["-p", "hi", "--compact-threshold", "banana"], /--compact-threshold needs a token count/],
    ];
    for (const [args, pattern] of cases) {
      const r = await runCli(args, { env: cliEnv(ws, { ANTHROPIC_API_KEY: "k" }) });
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stdout, "");
      assertOneLine(r.stderr, pattern);
    }
  } finally {
    ws.cleanup();
  }
});

test("missing API key, unreachable server, invalid settings: one line on stderr, exit 1", async () => {
  const ws = makeWorkspace();
  try {
    let r = await runCli(["-p", "hi", "--cwd", ws.dir], { env: cliEnv(ws) });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assertOneLine(r.stderr, /^lethe: ANTHROPIC_API_KEY is not set/);

    r = await runCli(["-p", "hi", "--provider", "openai", "--cwd", ws.dir], { env: cliEnv(ws) });
    assert.equal(r.code, 1);
    assertOneLine(r.stderr, /^lethe: OPENAI_API_KEY is not set/);

    // Unreachable: retried (fast, per settings), then one line.
    const port = await closedPort();
    const fast = makeWorkspace({ retry: { maxAttempts: 2, baseMs: 1, maxMs: 5 } });
    try {
      for (const provider of ["anthropic", "openai"] as Provider[]) {
        const url = provider === "anthropic" ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`;
        r = await runCli(["-p", "hi", "--provider", provider, "--base-url", url, "--cwd", fast.dir], { env: cliEnv(fast, keyEnv(provider)) });
        assert.equal(r.code, 1, r.stderr);
        assert.equal(r.stdout, "");
        assertOneLine(r.stderr, /^lethe: .*(connect|connection|ECONNREFUSED|fetch failed)/i);
      }
    } finally {
      fast.cleanup();
    }

    const broken = makeWorkspace("{ \"model\": \"x\", ");
    try {
      r = await runCli(["-p", "hi", "--cwd", broken.dir], { env: cliEnv(broken, { ANTHROPIC_API_KEY: "k" }) });
      assert.equal(r.code, 1);
      assertOneLine(r.stderr, /settings file .*\.lethe\/settings\.json is not valid JSON/);
    } finally {
      broken.cleanup();
    }
    const wrong = makeWorkspace({ contextWindow: "big" });
    try {
      r = await runCli(["-p", "hi", "--cwd", wrong.dir], { env: cliEnv(wrong, { ANTHROPIC_API_KEY: "k" }) });
      assert.equal(r.code, 1);
      assertOneLine(r.stderr, /settings file .*settings\.json: contextWindow: /);
    } finally {
      wrong.cleanup();
    }
  } finally {
    ws.cleanup();
  }
});

for (const provider of ["anthropic", "openai"] as Provider[]) {
  test(`${provider}: text, json and stream-json output`, async () => {
    let n = 0;
    const fake = await startFake(provider, {
      script: (): Step => (++n % 2 === 1 ? { text: "Looking.", toolUses: [{ name: "bash", input: { command: "echo hello-from-bash" } }] } : { text: "The command printed hello-from-bash." }),
    });
    const ws = makeWorkspace();
    try {
      const base = [...providerArgs(provider, fake), "--yes", "--cwd", ws.dir];
      const env = cliEnv(ws, keyEnv(provider));
      const text = await runCli([...base, "-p", "run echo"], { env });
      assert.equal(text.code, 0, text.stderr);
      assert.equal(text.stdout, "The command printed hello-from-bash.\n");
      assert.equal(text.stderr, "");
      assert.match(lastMessageText(fake.requests[1]), /hello-from-bash/);

      const json = await runCli([...base, "--output-format", "json", "-p", "run echo"], { env });
      assert.equal(json.code, 0, json.stderr);
      const lines = json.stdout.trim().split("\n");
      assert.equal(lines.length, 1, "one JSON object");
      const out = JSON.parse(lines[0]!);
      assert.equal(out.result, "The command printed hello-from-bash.");
      assert.match(out.session_id, /^\d{8}-\d{6}-\d{3}-[0-9a-f]{10}$/);
      assert.equal(out.num_turns, 2);
      assert.deepEqual(out.compactions, []);
      for (const k of ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]) assert.equal(typeof out.usage[k], "number", k);
      assert.ok(out.usage.output_tokens > 0);
      assert.equal(out.is_error, false);

      const stream = await runCli([...base, "--output-format", "stream-json", "-p", "run echo"], { env });
      assert.equal(stream.code, 0, stream.stderr);
      const events = stream.stdout.trim().split("\n").map((l) => JSON.parse(l));
      assert.equal(events[0].type, "system");
      assert.equal(events[0].subtype, "init");
      assert.ok(events[0].tools.includes("bash"));
      assert.deepEqual(events.slice(1, -1).map((e) => e.type), ["user", "assistant", "user", "assistant"]);
      assert.equal(events.at(-1).type, "result");
      assert.equal(events.at(-1).result, "The command printed hello-from-bash.");
      assert.equal(events.at(-1).session_id, events[0].session_id);
    } finally {
      await fake.close();
      ws.cleanup();
    }
  });
}

test("prompt from stdin with -p and no prompt", async () => {
  const fake = await startFake("anthropic", { script: (body: any) => ({ text: `You said: ${JSON.stringify(body.messages[0].content).includes("piped question") ? "piped question" : "?"}` }) });
  const ws = makeWorkspace();
  try {
    const r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p"], { env: cliEnv(ws, keyEnv("anthropic")), input: "piped question\n" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "You said: piped question\n");
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("headless without --yes: bash and writes are refused by the policy; the model is told which policy and how to allow it, stderr says so once, exit 0", async () => {
  let n = 0;
  const fake = await startFake("anthropic", {
    script: (): Step => {
      n++;
      if (n === 1) return { toolUses: [{ name: "bash", input: { command: "touch made-by-bash" } }, { name: "write_file", input: { path: "made-by-write.txt", content: "x" } }] };
      return { text: "I was not allowed to run that." };
    },
  });
  const ws = makeWorkspace();
  try {
    const r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p", "make files"], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "I was not allowed to run that.\n");
    assertOneLine(r.stderr, /refused bash \(touch made-by-bash\): denied by the permission policy \(mode default; headless, so no one can be asked\)\. Allow it with --allowedTools 'Bash\(touch made-by-bash:\*\)'/);
    assert.ok(!existsSync(join(ws.dir, "made-by-bash")));
    assert.ok(!existsSync(join(ws.dir, "made-by-write.txt")));
    const results = fake.requests[1].messages.at(-1).content.filter((b: any) => b.type === "tool_result");
    assert.equal(results.length, 2);
    for (const b of results) {
      assert.equal(b.is_error, true);
      assert.match(JSON.stringify(b.content), /denied by the permission policy \(mode default; headless/);
    }
    // …and the model is told why, once, after the results.
    assert.match(lastMessageText(fake.requests[1]), /runs headless: no one can answer permission questions/);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("--continue and --resume rebuild the context from the transcript", async () => {
  const fake = await startFake("anthropic", { script: (_b: any, i: number) => ({ text: `answer ${i + 1}` }) });
  const ws = makeWorkspace();
  try {
    const base = [...providerArgs("anthropic", fake), "--cwd", ws.dir, "--output-format", "json"];
    const env = cliEnv(ws, keyEnv("anthropic"));
    const first = JSON.parse((await runCli([...base, "-p", "first question"], { env })).stdout);
    const second = await runCli([...base, "--continue", "-p", "second question"], { env });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(JSON.parse(second.stdout).session_id, first.session_id);
    const sent = JSON.stringify(fake.requests[1].messages);
    assert.match(sent, /first question.*answer 1.*second question/);
    const third = await runCli([...base, "--resume", first.session_id.slice(0, 20), "-p", "third question"], { env });
    assert.equal(third.code, 0, third.stderr);
    assert.match(JSON.stringify(fake.requests[2].messages), /first question.*answer 1.*second question.*answer 2.*third question/);
    const s = onlySession(ws);
    assert.equal(s.transcript.entries.filter((e) => e.type === "message").length, 6);
    const missing = await runCli([...base, "--resume", "nope", "-p", "x"], { env });
    assert.equal(missing.code, 1);
    assertOneLine(missing.stderr, /no session "nope"/);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

for (const provider of ["anthropic", "openai"] as Provider[]) {
  test(`${provider}: max_tokens — the reply continues where it stopped, without repetition`, async () => {
    const stop = provider === "anthropic" ? "max_tokens" : "length";
    const fake = await startFake(provider, { script: [{ text: "Part one, ", stopReason: stop }, { text: "part two." }] });
    const ws = makeWorkspace();
    try {
      const r = await runCli([...providerArgs(provider, fake), "--cwd", ws.dir, "-p", "write two parts"], { env: cliEnv(ws, keyEnv(provider)) });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "Part one, part two.\n");
      assert.equal(fake.requests.length, 2);
      const second = JSON.stringify(fake.requests[1].messages);
      assert.match(second, /Part one, .*Continue exactly where you stopped/);
    } finally {
      await fake.close();
      ws.cleanup();
    }
  });
}

test("a stream cut mid-way is retried; nothing is duplicated; 429 retry-after is honoured", async () => {
  const steps: Step[] = [{ fault: "cut", afterEvents: 4, turn: { text: "a reply that gets cut off midway through" } }, { fault: "rate_limit", retryAfter: 1 }, { text: "complete reply" }];
  const fake = await startFake("anthropic", { script: steps });
  const ws = makeWorkspace();
  try {
    const r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "--output-format", "stream-json", "-p", "hello"], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const retries = events.filter((e) => e.type === "retry");
    assert.equal(retries.length, 2);
    assert.ok(retries[1].delay_ms >= 1000, `waited ${retries[1].delay_ms} ms for retry-after: 1`);
    assert.equal(events.at(-1).result, "complete reply");
    assert.equal(fake.requests.length, 3);
    const s = onlySession(ws);
    const messages = s.transcript.entries.filter((e) => e.type === "message").map((e) => (e as any).message);
    assert.deepEqual(messages.map((m) => m.role), ["user", "assistant"]);
    assert.doesNotMatch(JSON.stringify(messages), /cut off midway/);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("--fallback-model: after repeated overloaded errors the fallback model answers", async () => {
  const fake = await startFake("anthropic", { script: (body: any): Step => (body.model === MODELS.anthropic ? { fault: "overloaded" } : { text: `answered by ${body.model}` }) });
  const ws = makeWorkspace({ retry: { baseMs: 1, maxMs: 5 } });
  try {
    const r = await runCli([...providerArgs("anthropic", fake), "--fallback-model", "claude-haiku-4-5", "--cwd", ws.dir, "--output-format", "json", "-p", "hi"], {
      env: cliEnv(ws, keyEnv("anthropic")),
    });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.result, "answered by claude-haiku-4-5");
    assert.equal(out.model, "claude-haiku-4-5");
    assert.deepEqual(fake.requests.map((b) => b.model), [MODELS.anthropic, MODELS.anthropic, MODELS.anthropic, "claude-haiku-4-5"]);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("--max-turns: stops, says so in one line, exit 1; json says error_max_turns", async () => {
  const fake = await startFake("anthropic", { script: [{ text: "again", toolUses: [{ name: "glob", input: { pattern: "*" } }] }] });
  const ws = makeWorkspace();
  try {
    const r = await runCli([...providerArgs("anthropic", fake), "--max-turns", "2", "--cwd", ws.dir, "--output-format", "json", "-p", "loop"], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 1);
    assertOneLine(r.stderr, /stopped after 2 turns \(--max-turns\)/);
    const out = JSON.parse(r.stdout);
    assert.equal(out.subtype, "error_max_turns");
    assert.equal(out.num_turns, 2);
    assert.equal(fake.requests.length, 2);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("--compact-threshold and --auto-compact off: the threshold is the one given; off never summarises and refuses to send an over-window request", async () => {
  const rowsCmd = (i: number) => `seq 1 330 | awk '{print "batch ${i} row " $1 ": value=" ($1*7919)%10007 " status=ok"}'`;
  let n = 0;
  const fake = await startFake("anthropic", { contextWindow: 24_000, script: (): Step => ({ toolUses: [{ name: "bash", input: { command: rowsCmd(++n) } }] }) });
  const ws = makeWorkspace({ compaction: { micro: { enabled: false }, snip: { enabled: false } } });
  try {
    const base = [...providerArgs("anthropic", fake), "--context-window", "24000", "--max-output-tokens", "2000", "--yes", "--cwd", ws.dir];
    const env = cliEnv(ws, keyEnv("anthropic"));
    const init = await runCli([...base, "--compact-threshold", "0.75", "--max-turns", "1", "--output-format", "stream-json", "-p", "x"], { env });
    assert.equal(JSON.parse(init.stdout.split("\n")[0]!).auto_compact_threshold, 18_000);
    // Any value below the window is taken (issue 8: the half-window floor is gone); the window itself is refused.
    const low = await runCli([...base, "--compact-threshold", "5000", "--max-turns", "1", "--output-format", "stream-json", "-p", "x"], { env });
    assert.equal(JSON.parse(low.stdout.split("\n")[0]!).auto_compact_threshold, 5_000);
    const tooHigh = await runCli([...base, "--compact-threshold", "24000", "-p", "x"], { env });
    assert.equal(tooHigh.code, 2);
    assertOneLine(tooHigh.stderr, /must be below the context window/);

    const before = fake.requests.length;
    const off = await runCli([...base, "--auto-compact", "off", "--output-format", "json", "-p", "print forever"], { env });
    assert.equal(off.code, 1);
    assertOneLine(off.stderr, /over the [\d,]+ a request may carry in this window \(the rest is the reply.s\), and was not compacted \(auto-compact is off\); not sending it/);
    const sent = fake.requests.slice(before);
    assert.ok(sent.length > 3);
    for (const body of sent) assert.ok(anthropicInputTokens(body) <= 24_000);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("SIGINT in headless mode: the turn is cancelled, one line, exit 130", async () => {
  // The reply is held back until the test ends (a gate, not a timer: nothing to wait out afterwards).
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const fake = await startFake("anthropic", { script: async (): Promise<Step> => (await gate, { text: "too late" }) });
  const ws = makeWorkspace();
  try {
    const child = spawn(process.execPath, [builtBin(), ...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p", "wait"], { cwd: ROOT, env: cliEnv(ws, keyEnv("anthropic")), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.stdout.on("data", (d) => (stdout += d));
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
    child.kill("SIGINT");
    assert.equal(await exited, 130);
    assert.equal(stdout, "");
    assertOneLine(stderr, /^lethe: interrupted$/);
  } finally {
    open();
    await fake.close();
    ws.cleanup();
  }
});
