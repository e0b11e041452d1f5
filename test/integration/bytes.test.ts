// A byte limit is not a token limit: screenshots weigh a few thousand tokens and hundreds of KB of
// base64. Against a server (or a proxy in front of it) that refuses bodies over 1 MB with a 413,
// the reactive path must take attachments out by bytes — a retry at the same size fails again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runAgent } from "../../src/agent/loop.ts";
import type { CompactionEvent, SummarizeEvent } from "../../src/compaction/types.ts";
import { validate } from "../../src/messages/invariants.ts";
import type { ToolUseBlock } from "../../src/messages/types.ts";
import { fromHttpError } from "../../src/model/errors.ts";
import { loadTranscript, messageEntries } from "../../src/session/transcript.ts";
import { setupE2E, toolScript, TOOLS } from "../support/e2e.ts";
import { png } from "../support/media.ts";

const LIMIT = 1_000_000;

/** Each call: a 1280×800 screenshot of ~300 KB (400 KB of base64). */
const screenshot = async (use: ToolUseBlock) => ({
  content: [
    { type: "text" as const, text: `screenshot after ${String((use.input as { command: string }).command)}` },
    { type: "image" as const, source: { type: "base64" as const, media_type: "image/png", data: png(1280, 800, 300_000).toString("base64") } },
  ],
});

for (const provider of ["anthropic", "openai"] as const) {
  test(`${provider}: a 413 over a 1 MB body limit takes the oldest screenshots out by bytes, names each, and the run finishes`, async () => {
    const events: CompactionEvent[] = [];
    const e = await setupE2E({
      provider,
      fake: { script: toolScript(8), maxBodyBytes: LIMIT },
      engine: { contextWindow: 200_000, maxOutputTokens: 4_000, onEvent: (x) => events.push(x) },
    });
    try {
      const r = await runAgent([], "Take a screenshot after each step.", {
        engine: e.engine,
        client: e.client,
        model: provider === "anthropic" ? "claude-sonnet-4-6" : "gpt-4o",
        tools: TOOLS,
        runTool: screenshot,
        transcript: e.transcript,
        maxOutputTokens: 4_000,
      });
      assert.match(r.text, /done after 8 calls/);
      const refused = e.fake.log.filter((l) => l.path.endsWith("/messages") || l.path.endsWith("/chat/completions")).length - e.fake.requests.length;
      assert.ok(refused >= 1 && refused <= 3, `413s: ${refused} (each followed by one shrink and a retry that passed)`);
      const reactive = events.filter((x): x is SummarizeEvent => x.kind === "reactive");
      assert.ok(reactive.length >= 1 && reactive.every((x) => (x.attachmentsRemoved ?? 0) > 0 && x.bytesAfter! <= x.bytesBefore! / 2), JSON.stringify(reactive));
      // Every request the server accepted was under its limit, and the newest screenshot was in it.
      for (const body of e.fake.requests) {
        assert.ok(Buffer.byteLength(JSON.stringify(body)) <= LIMIT);
      }
      const last = JSON.stringify(e.fake.requests.at(-1));
      assert.ok(last.includes(png(1280, 800, 300_000).toString("base64").slice(0, 200)), "the latest screenshot is still sent");
      assert.match(last, /image image\/png 1280×800, \d+ KB: taken out of the request, which was over the server's size limit/);
      assert.deepEqual(validate(r.history), []);
      // The transcript keeps every screenshot, as it came.
      const kept = messageEntries(loadTranscript(e.transcriptPath).entries).map((x) => x.message).flatMap((m) => (typeof m.content === "string" ? [] : m.content)).filter((b) => b.type === "tool_result");
      assert.equal(kept.filter((b) => JSON.stringify(b).includes('"type":"image"')).length, 8);
    } finally {
      await e.close();
    }
  });
}

test("413 bodies: Anthropic's request_too_large, nginx's HTML page and a stated size are byte limits, with a one-line message", () => {
  const a = fromHttpError(413, { type: "error", error: { type: "request_too_large", message: "Request exceeds the maximum allowed number of bytes." } }, undefined, { provider: "anthropic" });
  assert.equal(a.kind, "prompt_too_long");
  assert.equal(a.overBytes, true);
  const n = fromHttpError(413, "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n", undefined, { provider: "openai" });
  assert.equal(n.kind, "prompt_too_long");
  assert.equal(n.overBytes, true);
  assert.equal(n.message, "openai HTTP 413: 413 Request Entity Too Large");
  const s = fromHttpError(413, { error: { message: "Request body too large: the maximum request size is 32 MB" } });
  assert.equal(s.limitBytes, 32 * 1024 * 1024);
  // A token overflow is not a byte limit.
  const t = fromHttpError(400, { type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" } });
  assert.equal(t.overBytes, undefined);
});
