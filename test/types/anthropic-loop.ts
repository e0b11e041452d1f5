// docs/library.md's loop on @anthropic-ai/sdk, as strict TypeScript against the SDK's own types:
// compiled by `npm run typecheck` (and from the packed tarball by test/package/pack.test.ts).
import Anthropic from "@anthropic-ai/sdk";
import { createEngine, toModelError } from "../../src/index.ts";

export async function anthropicLoop(client: Anthropic, history: Anthropic.MessageParam[], tools: Anthropic.Tool[]): Promise<Anthropic.MessageParam[]> {
  const model = "claude-sonnet-4-6";
  const max_tokens = 8_000;
  const system = "You are a careful agent.";
  const fixedTokens = 2_000;
  const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: max_tokens });
  // ---- docs/library.md: A loop on @anthropic-ai/sdk
  const ready = await engine.beforeRequest(history, { system, tools, fixedTokens });
  let reply;
  try {
    reply = await client.messages.create({ model, max_tokens, system, tools, messages: ready.history });
  } catch (e) {
    const error = toModelError(e);                 // from "lethe"
    if (error.kind !== "prompt_too_long") throw e;
    const again = await engine.recover(ready.history, error);
    reply = await client.messages.create({ model, max_tokens, system, tools, messages: again.history });
  }
  engine.observe(ready.history, reply, reply.usage, { fixedTokens });
  history = [...ready.history, { role: "assistant", content: reply.content }];
  // ----
  return history;
}

/** Every block kind of the SDK's MessageParam, for the run-time test beside this file. */
export const everyBlock: Anthropic.MessageParam[] = [
  {
    role: "user",
    content: [
      { type: "text", text: "Read these.", cache_control: { type: "ephemeral" } },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "a plain document" }, title: "notes" },
      { type: "search_result", source: "https://example.test/a", title: "A", content: [{ type: "text", text: "a search result" }] },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "let me look", signature: "sig" },
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "lethe" } },
      { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://example.test/b", title: "B", encrypted_content: "enc" }] },
      { type: "tool_use", id: "toolu_1", name: "lookup", input: { path: "a" } },
    ],
  },
  {
    role: "user",
    content: [
      {
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: [
          { type: "text", text: "found" },
          { type: "search_result", source: "https://example.test/c", title: "C", content: [{ type: "text", text: "inside a result" }] },
          { type: "document", source: { type: "text", media_type: "text/plain", data: "a document result" } },
        ],
      },
      { type: "text", text: "What did you find?" },
    ],
  },
];
