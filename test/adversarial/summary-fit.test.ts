// Issue 9, data: the summary request ignored the never-over-the-window rule when dropping rounds
// could not help — a 6.4 MB prompt at a 200k window sent a ~1.8M-token summary request.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createEngine } from "../../src/engine/index.ts";
import type { Message } from "../../src/messages/types.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { SUMMARY_REPLY, scriptedClient } from "../support/scripted-client.ts";

test("a 6.4 MB message at a 200k window: the summary request is cut to fit (head and tail kept), never sent over", async () => {
  const client = scriptedClient([SUMMARY_REPLY]);
  const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, summarizer: { client, model: "m" } });
  const huge = Array.from({ length: 90_000 }, (_, i) => `log line ${i}: value=${(i * 7919) % 10007} status=ok`).join("\n");
  assert.ok(huge.length * 2 > 6_000_000, `${huge.length * 2} characters`);
  const history: Message[] = [
    { role: "user", content: [{ type: "text", text: "here is the whole log, find the failure" }] },
    { role: "assistant", content: [{ type: "text", text: "send it" }] },
    { role: "user", content: [{ type: "text", text: `${huge}\n${huge}` }] },
  ];
  await engine.compact(history, { kind: "manual" });
  assert.equal(client.requests.length, 1);
  const counter = createTokenCounter();
  const sent = counter.messages(client.requests[0]!.messages) + client.requests[0]!.maxTokens;
  assert.ok(sent <= 200_000, `the summary request is ${sent} tokens`);
  const text = JSON.stringify(client.requests[0]!.messages);
  assert.match(text, /characters cut from this block for the summary request to fit the window/);
  assert.match(text, /log line 0: /, "the head is kept");
  assert.match(text, /log line 89999: /, "the tail is kept");
});
