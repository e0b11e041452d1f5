// Flags, settings files and their precedence (unit level, no subprocess).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs, parseThreshold } from "../../src/cli/args.ts";
import { resolveRunConfig } from "../../src/cli/config.ts";
import { UsageError } from "../../src/cli/errors.ts";
import { loadSettings } from "../../src/cli/settings.ts";
import { priceOf, costOf } from "../../src/cli/pricing.ts";
import { contextChart, compactionNotice } from "../../src/cli/render.ts";
import { makeWorkspace, thresholdOf } from "./support.ts";

test("parseArgs: every flag, short forms, --flag=value, -p without a value", () => {
  const a = parseArgs([
    "-p", "do it", "--provider", "openai", "--model", "qwen2.5-coder", "--base-url=http://localhost:11434/v1", "--context-window", "32_768",
    "--max-output-tokens", "4096", "-y", "--cwd", "/tmp", "--summarizer", "digest", "--max-turns", "9", "--output-format", "stream-json",
    "--auto-compact", "ask", "--compact-threshold", "80%", "--fallback-model", "small",
  ]);
  assert.equal(a.print, "do it");
  assert.equal(a.provider, "openai");
  assert.equal(a.model, "qwen2.5-coder");
  assert.equal(a.baseUrl, "http://localhost:11434/v1");
  assert.equal(a.contextWindow, 32_768);
  assert.equal(a.maxOutputTokens, 4096);
  assert.equal(a.yes, true);
  assert.equal(a.cwd, "/tmp");
  assert.equal(a.summarizer, "digest");
  assert.equal(a.maxTurns, 9);
  assert.equal(a.outputFormat, "stream-json");
  assert.equal(a.autoCompact, "ask");
  assert.equal(a.compactThreshold, 0.8);
  assert.equal(a.fallbackModel, "small");
  assert.equal(parseArgs(["-p"]).print, "");
  assert.deepEqual(parseArgs(["-c", "fix", "the", "bug"]).positional, ["fix", "the", "bug"]);
  assert.equal(parseArgs(["-r", "2025"]).resume, "2025");
  assert.throws(() => parseArgs(["-x"]), UsageError);
  assert.throws(() => parseArgs(["--yes=1"]), /takes no value/);
  assert.throws(() => parseArgs(["--model", "a", "--model", "b"]), /given twice/);
  assert.equal(parseThreshold("t", "150k"), 150_000);
  assert.equal(parseThreshold("t", "0.75"), 0.75);
  assert.throws(() => parseThreshold("t", "1.5"), UsageError);
});

test("precedence: flags > environment > workspace settings > user settings; hooks of both files run", () => {
  const ws = makeWorkspace({ model: "claude-opus-4-1", contextWindow: 50_000, autoCompact: "off", compaction: { micro: { keepRecent: 7 } }, hooks: { PreCompact: [{ command: "echo ws" }] } });
  try {
    const userPath = join(ws.home, ".lethe", "settings.json");
    mkdirSync(join(ws.home, ".lethe"), { recursive: true });
    writeFileSync(userPath, JSON.stringify({ model: "claude-haiku-4-5", maxOutputTokens: 3000, compaction: { micro: { keepRecent: 2, minResultTokens: 500 } }, hooks: { PreCompact: [{ command: "echo user" }] } }));
    const env = { ANTHROPIC_API_KEY: "k" };
    // Untrusted: the workspace's hooks are left out (and reported); the user's own still run.
    let cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir]), env, { headless: true, userSettingsPath: userPath });
    assert.deepEqual(cfg.hooks?.PreCompact?.map((h) => h.command), ["echo user"]);
    assert.deepEqual(cfg.untrusted?.keys, ["hooks"]);
    cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--trust-workspace"]), env, { headless: true, userSettingsPath: userPath });
    assert.equal(cfg.untrusted, undefined);
    assert.equal(cfg.model, "claude-opus-4-1");
    assert.equal(cfg.contextWindow, 50_000);
    assert.equal(cfg.maxOutputTokens, 3000);
    assert.equal(cfg.autoCompact, "off");
    // The workspace's keepRecent over the user's; the user's minResultTokens kept (resolved once, defaults filled in).
    assert.equal(cfg.compaction.micro.keepRecent, 7);
    assert.equal(cfg.compaction.micro.minResultTokens, 500);
    assert.deepEqual(cfg.hooks?.PreCompact?.map((h) => h.command), ["echo user", "echo ws"]);
    assert.deepEqual(cfg.settingsFiles, [userPath, join(ws.dir, ".lethe", "settings.json")]);
    cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir]), { ...env, LETHE_MODEL: "claude-sonnet-4-6" }, { headless: true, userSettingsPath: userPath });
    assert.equal(cfg.model, "claude-sonnet-4-6");
    cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--model", "claude-3-5-haiku", "--context-window", "40000", "--auto-compact", "ask"]), { ...env, LETHE_MODEL: "x" }, { headless: true, userSettingsPath: userPath });
    assert.equal(cfg.model, "claude-3-5-haiku");
    assert.equal(cfg.contextWindow, 40_000);
    assert.equal(cfg.compaction.summary?.auto, "on", "headless treats ask as on");
    cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--auto-compact", "ask"]), env, { headless: false, userSettingsPath: userPath });
    assert.equal(cfg.compaction.summary?.auto, "ask");
  } finally {
    ws.cleanup();
  }
});

test("provider and endpoint: inferred from the model or the environment; keys are required where they must be", () => {
  const ws = makeWorkspace();
  try {
    const opts = { headless: true, userSettingsPath: join(ws.home, "none.json") };
    let cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--model", "gpt-4o-mini"]), { OPENAI_API_KEY: "k" }, opts);
    assert.equal(cfg.provider, "openai");
    cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--model", "qwen3"]), { OPENAI_BASE_URL: "http://localhost:8080/v1" }, opts);
    assert.equal(cfg.provider, "openai");
    assert.equal(cfg.baseUrl, "http://localhost:8080/v1");
    assert.equal(cfg.apiKey, "no-key", "a local server needs no key");
    assert.equal(cfg.contextWindow, 32_768);
    cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir]), { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "http://proxy:1" }, opts);
    assert.equal(cfg.provider, "anthropic");
    assert.equal(cfg.baseUrl, "http://proxy:1");
    assert.equal(cfg.maxOutputTokens, 32_000, "replies capped at 32k unless configured");
    assert.throws(() => resolveRunConfig(parseArgs(["--cwd", ws.dir]), {}, opts), /ANTHROPIC_API_KEY is not set/);
    assert.throws(() => resolveRunConfig(parseArgs(["--cwd", ws.dir, "--provider", "openai"]), {}, opts), /OPENAI_API_KEY is not set/);
    // The threshold flag: tokens or a share of the window, within what the engine allows.
    cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--context-window", "100000", "--max-output-tokens", "8000", "--compact-threshold", "70000"]), { ANTHROPIC_API_KEY: "k" }, opts);
    assert.equal(thresholdOf(cfg), 70_000);
    cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--context-window", "100000", "--max-output-tokens", "8000", "--compact-threshold", "0.9"]), { ANTHROPIC_API_KEY: "k" }, opts);
    assert.equal(thresholdOf(cfg), 90_000);
    // Over the window minus the reply reserve: lowered to it, with a warning (issue 8: any value below the window is accepted).
    cfg = resolveRunConfig(parseArgs(["--cwd", ws.dir, "--context-window", "100000", "--max-output-tokens", "8000", "--compact-threshold", "95000"]), { ANTHROPIC_API_KEY: "k" }, opts);
    assert.equal(thresholdOf(cfg), 92_000);
    assert.match(cfg.warnings.join(), /leaves no room for the reply/);
  } finally {
    ws.cleanup();
  }
});

test("settings errors name the file (and the key)", () => {
  const bad = makeWorkspace('{"model": ');
  const wrong = makeWorkspace({ autoCompact: "sometimes" });
  const extra = makeWorkspace({ modle: "typo" });
  const badHook = makeWorkspace({ hooks: { PreCompact: [{ matcher: "auto" }] } });
  try {
    const none = join(bad.home, "none.json");
    assert.throws(() => loadSettings(bad.dir, none), /settings file .*settings\.json is not valid JSON/);
    assert.throws(() => loadSettings(wrong.dir, none), /settings\.json: autoCompact: /);
    assert.throws(() => loadSettings(extra.dir, none), /settings\.json: .*modle/);
    assert.throws(() => loadSettings(badHook.dir, none), /settings\.json: hooks\.PreCompact has an entry without a "command"/);
  } finally {
    for (const w of [bad, wrong, extra, badHook]) w.cleanup();
  }
});

test("pricing with the prompt cache, the compaction notice, the /context chart", () => {
  const p = priceOf("claude-sonnet-4-6")!;
  assert.equal(p.pricing.input, 3);
  // 1M input at 1×, 1M cache writes at 1.25×, 1M cache reads at 0.1×, 1M output at 5×.
  assert.equal(costOf({ input_tokens: 1e6, cache_creation_input_tokens: 1e6, cache_read_input_tokens: 1e6, output_tokens: 1e6 }, p.pricing).toFixed(2), "22.05");
  // The longest prefix wins: the 5.x families are priced apart from their elders.
  assert.equal(priceOf("claude-sonnet-5-5")!.pricing.input, 2);
  assert.equal(priceOf("claude-sonnet-4-5-20250929")!.pricing.input, 3);
  assert.equal(priceOf("claude-opus-5-5")!.pricing.output, 20);
  assert.equal(priceOf("claude-opus-5")!.pricing.output, 25);
  assert.equal(priceOf("claude-fable-5-1")!.pricing.input, 10);
  assert.equal(priceOf("llama3.1:8b"), undefined);
  assert.equal(priceOf("my-local", { "my-local": { input: 0, output: 0 } })?.pricing.output, 0);
  assert.equal(compactionNotice({ kind: "summarize", tokens_before: 123_456, tokens_after: 23_456 }), "compacted (summarize): 123,456 → 23,456 tokens");
  assert.equal(compactionNotice({ kind: "subagent", tokens_before: 2000, tokens_after: 1000, subagent_kind: "micro" }), "compacted (subagent micro): 2,000 → 1,000 tokens");
  const chart = contextChart({
    categories: [
      { name: "system + tools", tokens: 3_000 },
      { name: "user messages", tokens: 1_000 },
      { name: "assistant", tokens: 2_000 },
      { name: "tool results", tokens: 12_000 },
      { name: "summary", tokens: 0 },
    ],
    estimate: 18_000,
    measured: 18_000,
    window: 24_000,
    threshold: 19_600,
    autoCompact: "on",
    messages: 40,
  });
  assert.match(chart, /Context: 18,000 of 24,000 tokens \(75\.0% of the window\), 40 messages/);
  assert.match(chart, /tool results\s+█{20}\s+12,000/);
  assert.match(chart, /summary\s+0/);
  assert.match(chart, /Auto-compact in 1,600 tokens: 91\.8% of the threshold used\./);
});
