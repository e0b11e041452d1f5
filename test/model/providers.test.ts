// Provider quirks at the unit level: DeepSeek's reasoning_content rule, Ollama's context discovery,
// and the engine learning a smaller window (from a limit error, or a silent truncation).
import { test } from "node:test";
import assert from "node:assert/strict";
import { toOpenAI } from "../../src/messages/openai.ts";
import { defaultReasoningShape, reasoningShapeError } from "../../src/model/openai.ts";
import { discoverOllamaContext, mayBeOllama } from "../../src/model/ollama.ts";
import { startFakeOpenAI } from "../support/fakes/openai.ts";
import { createEngine } from "../../src/engine/index.ts";
import { ModelError } from "../../src/model/types.ts";
import type { Message } from "../../src/messages/types.ts";

const turn: Message[] = [
  { role: "user", content: "list files" },
  { role: "assistant", content: [{ type: "thinking", thinking: "I should run ls." }, { type: "tool_use", id: "c1", name: "bash", input: { command: "ls" } }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "a.txt" }] },
  { role: "assistant", content: [{ type: "thinking", thinking: "Done." }, { type: "text", text: "a.txt" }] },
];

test("strict conversion carries reasoning_content on tool-call turns only with reasoning: tool-turns (DeepSeek), on none by default", () => {
  const none = toOpenAI(turn, { strict: true }) as any[];
  assert.ok(none.every((m) => !("reasoning_content" in m)));
  const tool = toOpenAI(turn, { strict: true, reasoning: "tool-turns" }) as any[];
  assert.equal(tool[1].reasoning_content, "I should run ls.");
  assert.ok(!("reasoning_content" in tool[3]), "a turn without tool calls leaves it out (DeepSeek ignores it there)");
  const noThinking = toOpenAI([turn[0]!, { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "bash", input: {} }] }, turn[2]!], { strict: true, reasoning: "tool-turns" }) as any[];
  assert.equal(noThinking[1].reasoning_content, "", "the field is present even when the thinking is gone (compacted)");
  const all = toOpenAI(turn, { strict: true, reasoning: "all" }) as any[];
  assert.equal(all[3].reasoning_content, "Done.");
});

test("the reasoning shape: DeepSeek by model or host; a 400 naming reasoning_content says which shape the server wants", () => {
  assert.equal(defaultReasoningShape("deepseek-v4-pro", undefined), "tool-turns");
  assert.equal(defaultReasoningShape("my-model", "https://api.deepseek.com/v1"), "tool-turns");
  assert.equal(defaultReasoningShape("gpt-4o", "https://api.openai.com/v1"), "none");
  assert.equal(defaultReasoningShape("deepseek-chat", undefined, "never"), "none");
  assert.equal(reasoningShapeError("400 Missing `reasoning_content` field in the assistant message at message index 2."), "tool-turns");
  assert.equal(reasoningShapeError("400 The `reasoning_content` in the thinking mode must be passed back to the API."), "tool-turns");
  assert.equal(reasoningShapeError("400 messages.1.reasoning_content: Extra inputs are not permitted"), "none");
  assert.equal(reasoningShapeError("400 This model's maximum context length is 8192 tokens"), undefined);
});

test("Ollama's real context: /api/ps for a loaded model, else num_ctx from /api/show; nothing from a server that is not Ollama", async () => {
  assert.ok(mayBeOllama("http://127.0.0.1:11434/v1"));
  assert.ok(mayBeOllama("http://gpu-box.local:8080/v1"));
  assert.ok(!mayBeOllama("https://api.openai.com/v1"));
  const loaded = await startFakeOpenAI({ flavor: "ollama", numCtx: 8192 });
  const param = await startFakeOpenAI({ flavor: "ollama", numCtx: 6000, ollamaLoaded: false, ollamaNumCtxParam: true });
  const silent = await startFakeOpenAI({ flavor: "ollama", ollamaLoaded: false });
  const plain = await startFakeOpenAI({});
  try {
    assert.deepEqual(await discoverOllamaContext(loaded.url, "qwen2.5-coder:7b"), { contextWindow: 8192, source: "ollama /api/ps" });
    assert.deepEqual(await discoverOllamaContext(param.url, "qwen2.5-coder:7b"), { contextWindow: 6000, source: "ollama num_ctx" });
    assert.equal(await discoverOllamaContext(silent.url, "qwen2.5-coder:7b"), undefined);
    assert.equal(await discoverOllamaContext(plain.url, "gpt-4o"), undefined);
  } finally {
    await Promise.all([loaded.close(), param.close(), silent.close(), plain.close()]);
  }
});

/** A bash session of `n` rounds, each result ~`tokens` tokens. */
function rounds(n: number, tokens = 1500): Message[] {
  const h: Message[] = [{ role: "user", content: "go" }];
  for (let i = 0; i < n; i++) {
    h.push({ role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "bash", input: { command: `cat f${i}` } }] });
    h.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: `line ${i} `.repeat(tokens / 3) }] });
  }
  return h;
}

test("engine: a context error naming a smaller limit shrinks the window it works to, once, with an event", async () => {
  const engine = createEngine({ contextWindow: 100_000, maxOutputTokens: 8_000, summarizerMode: "digest" });
  const before = engine.threshold;
  const r = await engine.recover(rounds(20), new ModelError("prompt_too_long", "too long", { actualTokens: 31_000, limitTokens: 24_000 }));
  const learned = r.events.filter((e) => e.kind === "window_learned");
  assert.equal(learned.length, 1);
  assert.equal(engine.contextWindow, 24_000);
  assert.ok(engine.threshold < before && engine.threshold < 24_000);
  // A limit above the window changes nothing.
  await engine.recover(rounds(3), new ModelError("prompt_too_long", "too long", { actualTokens: 200_000, limitTokens: 150_000 }));
  assert.equal(engine.contextWindow, 24_000);
});

test("engine: a reported input that stops growing while the history grows is a silent truncation; steady growth is not", async () => {
  const engine = createEngine({ contextWindow: 64_000, maxOutputTokens: 4_000, summarizerMode: "digest" });
  const reply: Message = { role: "assistant", content: [{ type: "text", text: "ok" }] };
  let h = rounds(1);
  // Honest reports: the input grows with the history (any estimator error is far under the margin).
  for (let n = 2; n <= 8; n++) {
    h = rounds(n);
    const est = engine.counter.messages(h);
    engine.observe(h, reply, { input_tokens: Math.round(est * 1.08), output_tokens: 10 });
  }
  assert.equal(engine.contextWindow, 64_000, "no false alarm");
  // The server now cuts the prompt to ~12k and reports that, however much more is sent.
  for (const n of [9, 10, 11]) engine.observe(rounds(n), reply, { input_tokens: 12_000, output_tokens: 10 });
  assert.equal(engine.contextWindow, 12_010);
  const ready = await engine.beforeRequest(rounds(12));
  assert.ok(ready.events.some((e) => e.kind === "window_learned" && e.cause === "truncated"), "reported with the next request's events");
  assert.ok(ready.tokens <= engine.threshold, `${ready.tokens} ≤ ${engine.threshold}`);
});
