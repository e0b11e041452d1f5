// docs/library.md's loop on the `openai` package, as strict TypeScript against its own types.
import OpenAI from "openai";
import { createEngine, withErrorBodies } from "../../src/index.ts";
import { createOpenAIAdapter } from "../../src/adapters/openai.ts";

export async function openaiLoop(tools: OpenAI.Chat.ChatCompletionTool[], run: (call: OpenAI.Chat.ChatCompletionMessageToolCall) => Promise<string>): Promise<void> {
  // ---- docs/library.md: A loop on the openai package
  const client = new OpenAI({ fetch: withErrorBodies() }); // vLLM/SGLang/Mistral error bodies, see below
  const lethe = createOpenAIAdapter({ engine: createEngine({ contextWindow: 128_000, maxOutputTokens: 8_000 }) });
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "system", content: "You are a careful agent." }, { role: "user", content: "Read every data file." }];
  for (;;) {
    const completion = await lethe.create(client, { model: "gpt-4o", messages, tools });
    const reply = completion.choices[0]!.message;
    messages.push(reply);
    if (!reply.tool_calls?.length) break;
    for (const call of reply.tool_calls) messages.push({ role: "tool", tool_call_id: call.id, content: await run(call) });
  }
  // ----
}
