// Anthropic's server-side compaction blocks in lethe's history: carried verbatim, counted and
// compacted as the server keeps them (from the last block on), never edited by any layer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createEngine } from "../../src/engine/index.ts";
import { fromServerStart, leadingCompaction } from "../../src/messages/compaction.ts";
import { repair, validate } from "../../src/messages/invariants.ts";
import { fromOpenAI, toOpenAI } from "../../src/messages/openai.ts";
import type { ContentBlock, Message } from "../../src/messages/types.ts";
import { shrinkBytes } from "../../src/compaction/layers/reactive.ts";
import { AnthropicAssembler, mapAnthropicStopReason, toAnthropicMessages } from "../../src/model/anthropic.ts";

const block = (n: number): ContentBlock => ({ type: "compaction", content: `Server summary ${n}: the user asked for a report; files 1-${n} were read.`, encrypted_content: "E".repeat(30_000) + n, signature: `sig_${n}`, cache_control: { type: "ephemeral" } });
const big = (tag: string) => `${tag} `.repeat(3_000);

/** A session the server compacted once: its reply starts with the block, then a tool call. */
function session(): Message[] {
  return [
    { role: "user", content: "Read every file and report." },
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: { command: "cat a" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: big("old") }] },
    { role: "assistant", content: [block(1), { type: "tool_use", id: "t2", name: "bash", input: { command: "cat b" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: big("new") }] },
  ];
}

test("validate and repair take a history that starts with the server's compaction block as it is", () => {
  const h = fromServerStart(session());
  assert.equal(h.length, 2);
  assert.deepEqual(validate(h), []);
  assert.equal(repair(h).history, h, "valid: returned as is");
  // A failed compaction (null content) is a no-op on the server: nothing before it is dropped.
  const failed = session();
  failed[3] = { role: "assistant", content: [{ type: "compaction", content: null, encrypted_content: null }, ...(failed[3]!.content as ContentBlock[]).slice(1)] };
  assert.equal(fromServerStart(failed), failed);
  // An assistant message first without a compaction block is still repaired as before.
  assert.equal(repair([{ role: "assistant", content: "hi" }]).fixes[0]?.kind, "prepended_user_message");
});

test("engine: the request starts with the block, byte for byte; only what the server keeps is counted", () => {
  const engine = createEngine({ contextWindow: 100_000, maxOutputTokens: 4_000, summarizerMode: "digest" });
  const h = session();
  const p = engine.prepare(h);
  assert.equal(p.history.length, 2);
  assert.equal(p.history[0]!.content[0], (h[3]!.content as ContentBlock[])[0], "the block object itself, unedited");
  const all = createEngine({ contextWindow: 100_000, maxOutputTokens: 4_000, summarizerMode: "digest" }).prepare(h.slice(0, 3));
  assert.ok(p.tokens < all.tokens + engine.counter.messages(h.slice(3)), "the summarised part is not counted");
  // The SDK shape sends it back with its breakpoint and every field as it came.
  const wire = toAnthropicMessages(p.history, true);
  assert.deepEqual((wire[0]!.content as unknown[])[0], block(1));
});

test("a lethe summary over a server-compacted history keeps the block first, verbatim (never summarised over)", async () => {
  const engine = createEngine({ contextWindow: 100_000, maxOutputTokens: 4_000, summarizerMode: "digest" });
  const h: Message[] = [...session(), { role: "assistant", content: [{ type: "tool_use", id: "t3", name: "bash", input: { command: "cat c" } }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: "t3", content: big("c") }] }];
  const r = await engine.compact(h);
  assert.deepEqual(r.history[0], { role: "assistant", content: [block(1)] });
  assert.equal(leadingCompaction(r.history), (h[3]!.content as ContentBlock[])[0]);
  assert.equal(r.history[1]!.role, "user");
  // lethe's summary covers what came after the block (before it, the server's summary stands).
  assert.match(JSON.stringify(r.history[1]), /2 messages summarised/);
  assert.match(JSON.stringify(r.history[1]), /cat b/);
  assert.deepEqual(validate(r.history), []);
  // And the next request starts from it again.
  assert.equal(engine.prepare(r.history).history[0]!.content[0], (h[3]!.content as ContentBlock[])[0]);
});

test("a byte-limit recovery takes attachments out, never the compaction block (30 KB of encrypted content)", () => {
  const h = fromServerStart(session()) as Message[];
  const withImage: Message[] = [h[0]!, { role: "user", content: [h[1]!.content[0] as ContentBlock, { type: "image", source: { type: "base64", media_type: "image/png", data: "A".repeat(200_000) } }] }];
  const r = shrinkBytes(withImage, 50_000);
  assert.equal(r.removed.length, 1);
  assert.match(r.removed[0]!, /image/);
  assert.equal(r.history[0], withImage[0]);
});

test("conversions: strict OpenAI sends the server's summary as text; lethe's own format round-trips the block", () => {
  const h = fromServerStart(session()) as Message[];
  const strict = toOpenAI(h, { strict: true });
  assert.match(JSON.stringify(strict[0]), /summary of the earlier conversation.*Server summary 1/);
  assert.doesNotMatch(JSON.stringify(strict), /EEEE/, "no encrypted content on a server that cannot read it");
  assert.deepEqual(fromOpenAI(toOpenAI(h)).messages, h);
});

test("the Anthropic stream: a compaction block assembled verbatim (nulls kept), stop reason compaction goes on, cleared tokens reported", () => {
  const acc = new AnthropicAssembler();
  const ev = (e: unknown) => acc.add(e as never);
  ev({ type: "message_start", message: { model: "claude-sonnet-4-6", content: [], usage: { input_tokens: 900, output_tokens: 1 } } });
  ev({ type: "content_block_start", index: 0, content_block: { type: "compaction", content: null, encrypted_content: null, signature: "sig_x" } });
  ev({ type: "content_block_delta", index: 0, delta: { type: "compaction_delta", content: "The summary.", encrypted_content: "enc==" } });
  ev({ type: "content_block_stop", index: 0 });
  ev({ type: "message_delta", delta: { stop_reason: "compaction" }, usage: { output_tokens: 50 }, context_management: { applied_edits: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: 3, cleared_input_tokens: 4_000 }, { type: "clear_thinking_20251015", cleared_thinking_turns: 2, cleared_input_tokens: 500 }] } });
  ev({ type: "message_stop" });
  const r = acc.finish("m");
  assert.deepEqual(r.message.content, [{ type: "compaction", content: "The summary.", encrypted_content: "enc==", signature: "sig_x" }]);
  assert.equal(r.stopReason, "pause_turn");
  assert.equal(r.usage.cleared_input_tokens, 4_500);
  assert.equal(mapAnthropicStopReason("compaction"), "pause_turn");
});

test("summarizerMode server needs a client that compacts on the server: one line otherwise", () => {
  const client = { provider: "openai" as const, stream: async () => { throw new Error("unused"); } };
  assert.throws(() => createEngine({ contextWindow: 100_000, maxOutputTokens: 4_000, summarizerMode: "server", summarizer: { client, model: "gpt-4o" } }), /summarizerMode "server" needs a summarizer whose client compacts on the server/);
});

test("engine.observe reads a raw SDK reply's context_management: growth the server cleared is not taken for truncation", () => {
  const run = (withEdits: boolean) => {
    const events: string[] = [];
    const engine = createEngine({ contextWindow: 100_000, maxOutputTokens: 4_000, summarizerMode: "digest", onEvent: (e) => events.push(e.kind) });
    let h: Message[] = [{ role: "user", content: "go" }];
    for (let i = 0; i < 8; i++) {
      const sent = engine.prepare(h).history;
      const estimate = engine.counter.messages(sent);
      // The server clears old results: what it counts stays flat while lethe's history grows.
      const reported = Math.min(estimate, 3_000);
      const reply = { role: "assistant" as const, content: [{ type: "tool_use" as const, id: `t${i}`, name: "bash", input: {} }], ...(withEdits ? { context_management: { applied_edits: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: i, cleared_input_tokens: estimate - reported }] } } : {}) };
      engine.observe(sent, reply, { input_tokens: reported, output_tokens: 20 });
      h = [...sent, reply, { role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: big(`r${i}`) }] }];
    }
    return events;
  };
  assert.ok(run(false).includes("window_learned"), "without the edits reported, a flat count looks like truncation");
  assert.ok(!run(true).includes("window_learned"));
});
