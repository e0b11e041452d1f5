// A chat route of the Vercel AI SDK (ai@6), stateless as a Next.js route handler or a serverless
// function is: the client (useChat) POSTs the whole conversation as UI messages with its chat id
// on every request; the handler converts them, hands them to lethe with a store and the chat id,
// and streams the answer. A fresh engine per request picks up the conversation's compacted state
// from the store, so nothing is summarised twice and the request fits the window.
//   LETHE_BASE_URL=http://localhost:8000/v1 LETHE_STORE=.lethe/chats node examples/ai-sdk-route.mjs
//   (LETHE_STORE may be a postgres:// URL shared by every instance; then `npm install pg`.)
import { createServer } from "node:http";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertToModelMessages, stepCountIs, streamText, tool } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { z } from "zod";
import { connectStore, createEngine } from "lethe";
import { createOpenAIClient } from "lethe/clients";
import { createAISDKAdapter } from "lethe/ai-sdk";

const baseURL = process.env.LETHE_BASE_URL ?? "http://localhost:8000/v1";
const apiKey = process.env.OPENAI_API_KEY ?? "none";
// Once per process (a server instance), never per request.
const store = await connectStore(process.env.LETHE_STORE ?? join(mkdtempSync(join(tmpdir(), "lethe-chats-")), "store"));
const provider = createOpenAICompatible({ name: "local", baseURL, apiKey, includeUsage: true });
const summarizer = { client: createOpenAIClient({ baseURL, apiKey }), model: "gpt-4o" };

const tools = {
  lookup: tool({
    description: "Look a file up.",
    inputSchema: z.object({ command: z.string() }),
    execute: async ({ command }) => Array.from({ length: 80 }, (_, i) => `${command} row ${i}: value=${(i * 7919) % 10007}`).join("\n"),
  }),
};

/** What app/api/chat/route.ts exports in a Next.js app. */
export async function POST(req) {
  const { id, messages } = await req.json();
  const engine = createEngine({
    contextWindow: 16_000,
    maxOutputTokens: 2_000,
    store,
    conversationId: id,
    summarizer,
    onEvent: (e) => {
      if (e.kind === "summarize") console.log(`compacted ${id}: ${e.tokensBefore} → ${e.tokensAfter} tokens`);
    },
  });
  const lethe = createAISDKAdapter({ engine });
  const options = {
    model: provider.chatModel("gpt-4o"),
    system: "You are a careful agent.",
    messages: await convertToModelMessages(messages),
    tools,
    stopWhen: stepCountIs(5),
    // What the replies taught lethe (the provider's token counts, when the last reply came) is
    // stored for the next request's engine; on serverless, hand this to waitUntil instead.
    onFinish: () => engine.flush(),
  };
  // lethe's prepareStep and onStepFinish (composed with any of your own), sized to this system prompt and these tools.
  const result = streamText({ ...options, ...lethe.hooks(options) });
  return result.toUIMessageStreamResponse();
}

// What Next.js does around the route: node:http in, a web Request to POST, its Response out.
const server = createServer(async (req, res) => {
  if (req.method !== "POST" || req.url !== "/api/chat") {
    res.writeHead(404).end();
    return;
  }
  try {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const response = await POST(new Request(`http://127.0.0.1${req.url}`, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    for await (const chunk of response.body) res.write(chunk);
    res.end();
  } catch (e) {
    console.error(`route: ${e instanceof Error ? e.message.split("\n")[0] : e}`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});
server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}/api/chat`));
