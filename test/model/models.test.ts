import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_MODEL_INFO, lookupModel, normalizeModelName, resolveModelInfo } from "../../src/model/models.ts";

test("current Anthropic models: exact, dated snapshots and platform decorations", () => {
  assert.deepEqual(
    { ...resolveModelInfo("claude-haiku-4-5") },
    { contextWindow: 200_000, maxOutputTokens: 64_000, source: "exact", matched: "claude-haiku-4-5", overridden: false },
  );
  const cases: [string, number, number, string][] = [
    ["claude-haiku-4-5-20251001", 200_000, 64_000, "claude-haiku-4-5"],
    ["claude-sonnet-4-5-20250929", 200_000, 64_000, "claude-sonnet-4-5"],
    ["claude-sonnet-4-20250514", 200_000, 64_000, "claude-sonnet-4-20250514"],
    ["claude-opus-4-1-20250805", 200_000, 32_000, "claude-opus-4-1"],
    ["claude-opus-4-5-20251101", 200_000, 64_000, "claude-opus-4-5"],
    ["claude-opus-4-6", 1_000_000, 128_000, "claude-opus-4-6"],
    ["claude-sonnet-4-6", 1_000_000, 128_000, "claude-sonnet-4-6"],
    ["claude-sonnet-5-5", 1_000_000, 128_000, "claude-sonnet-5"],
    ["anthropic.claude-sonnet-4-5-20250929-v1:0", 200_000, 64_000, "claude-sonnet-4-5"],
    ["us.anthropic.claude-opus-4-1-20250805-v1:0", 200_000, 32_000, "claude-opus-4-1"],
    ["claude-opus-4-1@20250805", 200_000, 32_000, "claude-opus-4-1"],
    ["anthropic/claude-haiku-4-5", 200_000, 64_000, "claude-haiku-4-5"],
    ["claude-something-new", 200_000, 32_000, "claude-"],
  ];
  for (const [name, window, out, key] of cases) {
    const r = resolveModelInfo(name);
    assert.equal(r.contextWindow, window, name);
    assert.equal(r.maxOutputTokens, out, name);
    assert.equal(r.matched, key, name);
  }
});

test("OpenAI and local families by prefix", () => {
  const cases: [string, number][] = [
    ["gpt-4o", 128_000],
    ["gpt-4o-2024-08-06", 128_000],
    ["gpt-4o-mini", 128_000],
    ["gpt-4.1-mini", 1_047_576],
    ["gpt-4-0613", 8_192],
    ["o3-mini", 200_000],
    ["o4-mini-2025-04-16", 200_000],
    ["gpt-5-mini", 272_000],
    ["qwen2.5-coder:32b-instruct-q4_K_M", 32_768],
    ["Qwen/Qwen2.5-Coder-32B-Instruct", 32_768],
    ["qwen3-coder:30b", 262_144],
    ["llama3.1:8b", 131_072],
    ["meta-llama/Llama-3.1-70B-Instruct", 131_072],
    ["llama3:8b", 8_192],
    ["deepseek-chat", 131_072],
    ["deepseek-ai/DeepSeek-V3", 131_072],
    ["deepseek-coder-v2:16b", 163_840],
    ["mistral:7b", 32_768],
    ["mistralai/Mistral-7B-Instruct-v0.3", 32_768],
    ["codestral-latest", 262_144],
    ["openrouter/qwen/qwen3-32b", 32_768],
  ];
  for (const [name, window] of cases) assert.equal(resolveModelInfo(name).contextWindow, window, name);
  assert.equal(lookupModel("o10-preview"), undefined, "a prefix must end at a separator");
  assert.equal(lookupModel("gpt-4x"), undefined);
});

test("unknown models get the conservative default", () => {
  const r = resolveModelInfo("my-finetune");
  assert.equal(r.source, "default");
  assert.equal(r.contextWindow, DEFAULT_MODEL_INFO.contextWindow);
  assert.equal(r.maxOutputTokens, DEFAULT_MODEL_INFO.maxOutputTokens);
  assert.equal(r.matched, undefined);
});

test("configuration overrides win; max output stays within half a configured window", () => {
  const r = resolveModelInfo("qwen2.5-coder:7b", { contextWindow: 8192 });
  assert.equal(r.contextWindow, 8192);
  assert.equal(r.maxOutputTokens, 4096);
  assert.equal(r.overridden, true);
  assert.equal(r.source, "prefix");
  const both = resolveModelInfo("qwen2.5-coder:7b", { contextWindow: 8192, maxOutputTokens: 6000 });
  assert.equal(both.maxOutputTokens, 6000, "an explicit max output is taken as given");
  const out = resolveModelInfo("claude-sonnet-4-5", { maxOutputTokens: 8192 });
  assert.deepEqual([out.contextWindow, out.maxOutputTokens], [200_000, 8192]);
  const ignored = resolveModelInfo("claude-sonnet-4-5", { contextWindow: 0, maxOutputTokens: Number.NaN });
  assert.deepEqual([ignored.contextWindow, ignored.maxOutputTokens, ignored.overridden], [200_000, 64_000, false]);
  assert.equal(resolveModelInfo("unknown", { contextWindow: 4096 }).maxOutputTokens, 2048);
});

test("normalizeModelName", () => {
  assert.equal(normalizeModelName(" Claude-Opus-4-6[1m] "), "claude-opus-4-6");
  assert.equal(normalizeModelName("models/gemma-3-27b-it"), "gemma-3-27b-it");
  assert.equal(normalizeModelName("eu.anthropic.claude-haiku-4-5-20251001-v1:0"), "claude-haiku-4-5-20251001");
});
