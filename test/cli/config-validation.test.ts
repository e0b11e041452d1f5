// Configuration you can trust (issue 8, items 7 and 8): typos and bad values anywhere in the
// settings files or the library's config stop with one line naming the key; thresholds below half
// the window work; /compact never makes the context larger; housekeeping of errors and folders.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "../../src/cli/args.ts";
import { resolveRunConfig } from "../../src/cli/config.ts";
import { errorLine } from "../../src/cli/errors.ts";
import { loadSettings } from "../../src/cli/settings.ts";
import { createEngine } from "../../src/engine/index.ts";
import { toModelError } from "../../src/model/errors.ts";
import { openTranscript, loadTranscript } from "../../src/session/transcript.ts";
import { scriptedClient } from "../support/scripted-client.ts";
import { closedPort, cliEnv, keyEnv, makeWorkspace, runCli, thresholdOf } from "./support.ts";

const none = join(tmpdir(), "lethe-no-such-user-settings.json");
const env = { ANTHROPIC_API_KEY: "k" };

test("settings: unknown or invalid keys anywhere — inside compaction and hooks too — stop with one line naming the file and the key", () => {
  const cases: [unknown, RegExp][] = [
    [{ compaction: { micro: { keepRecnet: 5 } } }, /settings\.json: compaction\.micro\.keepRecnet: unknown key \(did you mean keepRecent\?\)$/],
    [{ compaction: { summary: { auto: "maybe" } } }, /settings\.json: compaction\.summary\.auto: /],
    [{ compaction: { budget: { previewChars: -1 } } }, /settings\.json: compaction\.budget\.previewChars: /],
    [{ compaction: { snp: {} } }, /settings\.json: compaction\.snp: unknown key \(did you mean snip\?\)$/],
    [{ modle: "x" }, /settings\.json: modle: unknown key \(did you mean model\?\)$/],
    [{ hooks: { PreCompcat: [{ command: "x" }] } }, /settings\.json: hooks\.PreCompcat: unknown hook event/],
    [{ hooks: { PreCompact: [{ command: "x", timout: 5 }] } }, /settings\.json: hooks\.PreCompact\.0\.timout: unknown key/],
    [{ permissions: { allow: ["Bash"], ask: [] } }, /settings\.json: permissions\.ask: unknown key/],
  ];
  for (const [settings, re] of cases) {
    const ws = makeWorkspace(settings);
    try {
      let message = "";
      try {
        loadSettings(ws.dir, none, true);
      } catch (e) {
        message = (e as Error).message;
      }
      assert.match(message, re, JSON.stringify(settings));
      assert.ok(message.includes(join(ws.dir, ".lethe", "settings.json")), "names the file");
      assert.equal(message.split("\n").length, 1);
    } finally {
      ws.cleanup();
    }
  }
});

test("createEngine: unknown keys, bad values, null, a missing or bad window are one-line errors, never a NaN threshold", () => {
  const ok = { contextWindow: 32_000, maxOutputTokens: 4_000 };
  const bad: [unknown, RegExp][] = [
    [{ ...ok, config: { summary: { auto: "maybe" } } }, /summary\.auto/],
    [{ ...ok, config: { micro: { keepRecnet: 1 } } }, /micro\.keepRecnet: unknown key \(did you mean keepRecent\?\)/],
    [{ ...ok, config: { budget: { previewChars: -5 } } }, /budget\.previewChars/],
    [{ ...ok, config: null }, /config must be an object/],
    [{ maxOutputTokens: 4_000 }, /contextWindow must be a positive whole number of tokens, got nothing/],
    [{ contextWindow: -5, maxOutputTokens: 10 }, /contextWindow must be a positive/],
    [{ contextWindow: Number.NaN, maxOutputTokens: 10 }, /contextWindow must be a positive/],
    [{ contextWindow: 1000, maxOutputTokens: 1000 }, /maxOutputTokens \(1000\) must be below contextWindow/],
    [{ ...ok, config: { threshold: { tokens: 40_000 } } }, /threshold\.tokens \(40000\) must be below contextWindow/],
    [null, /needs an options object/],
  ];
  for (const [opts, re] of bad) {
    assert.throws(() => createEngine(opts as never), (e: Error) => re.test(e.message) && !e.message.includes("\n"), JSON.stringify(opts));
  }
  const e = createEngine({ ...ok, config: { threshold: { tokens: 9_000 } } });
  assert.equal(e.threshold, 9_000, "an explicit threshold far below half the window");
});

test("--compact-threshold takes any value below the window (the quickstart's 120000 on a 1M model); at or over the window is refused; over the reply reserve is lowered with a warning", () => {
  const ws = makeWorkspace();
  try {
    let cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--model", "claude-sonnet-4-6", "--compact-threshold", "120000"]), env, { headless: true, userSettingsPath: none });
    assert.equal(cfg.contextWindow, 1_000_000);
    assert.equal(thresholdOf(cfg), 120_000);
    assert.deepEqual(cfg.warnings, []);
    cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--context-window", "100000", "--compact-threshold", "10%"]), env, { headless: true, userSettingsPath: none });
    assert.equal(thresholdOf(cfg), 10_000);
    assert.throws(() => resolveRunConfig(parseArgs(["--cwd", ws.dir, "--context-window", "100000", "--compact-threshold", "100000"]), env, { headless: true, userSettingsPath: none }), /must be below the context window \(100000 tokens\)/);
    cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--context-window", "100000", "--max-output-tokens", "8000", "--compact-threshold", "99000"]), env, { headless: true, userSettingsPath: none });
    assert.equal(thresholdOf(cfg), 92_000);
    assert.match(cfg.warnings.join("\n"), /leaves no room for the reply .* auto-compact runs at 92000/);
  } finally {
    ws.cleanup();
  }
});

test("/compact (engine.compact) never makes the context larger: the history is kept, a compact_skipped event says why, the transcript records no boundary", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-nogrow-"));
  try {
    const transcript = openTranscript(join(dir, "transcript.jsonl"), { header: { id: "s", cwd: dir } });
    const long = "This is the summary. ".repeat(200);
    const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, transcript, summarizer: { client: scriptedClient([`<summary>${long}</summary>`]), model: "m" } });
    const history = [
      { role: "user" as const, content: [{ type: "text" as const, text: "hi" }] },
      { role: "assistant" as const, content: [{ type: "text" as const, text: "hello" }] },
    ];
    const r = await engine.compact(history, { kind: "manual" });
    assert.deepEqual(r.history, history);
    const skipped = r.events.find((e) => e.kind === "compact_skipped");
    assert.ok(skipped, JSON.stringify(r.events));
    assert.match((skipped as { reason: string }).reason, /nothing to gain: the summary and what it keeps would be [\d,]+ tokens, the history is [\d,]+/);
    assert.ok(!r.events.some((e) => e.kind === "manual"), "no compaction reported");
    transcript.close();
    assert.equal(loadTranscript(join(dir, "transcript.jsonl")).entries.filter((e) => e.type === "boundary").length, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("housekeeping: --context-window -5 says it must be positive; joined error messages have no doubled punctuation", () => {
  assert.throws(() => parseArgs(["--context-window", "-5"]), /--context-window needs a positive whole number, got "-5"/);
  assert.throws(() => parseArgs(["--max-turns", "-1"]), /--max-turns needs a positive whole number/);
  const cause = new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:9") });
  const err = Object.assign(new Error("Connection error.", { cause }), { name: "APIConnectionError" });
  const line = errorLine(toModelError(err, { provider: "openai" }));
  assert.doesNotMatch(line, /\.:|\.\.|: :/, line);
  assert.match(line, /connection failed: fetch failed/);
});

test("housekeeping: a run that fails before any reply leaves no empty session folder", async () => {
  const port = await closedPort();
  const ws = makeWorkspace({ retry: { maxAttempts: 1, baseMs: 1, maxMs: 2 } });
  try {
    const r = await runCli(["-p", "hi", "--provider", "anthropic", "--base-url", `http://127.0.0.1:${port}`, "--cwd", ws.dir], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /\.:/);
    const root = join(ws.dir, ".lethe", "sessions");
    assert.deepEqual(existsSync(root) ? readdirSync(root) : [], []);
  } finally {
    ws.cleanup();
  }
});
