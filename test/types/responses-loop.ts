// docs/library.md's loop on the `openai` package's Responses API, as strict TypeScript against its own types.
import OpenAI from "openai";
import { createEngine } from "../../src/index.ts";
import { createResponsesAdapter } from "../../src/adapters/openai.ts";

export async function responsesLoop(tools: OpenAI.Responses.FunctionTool[], run: (call: OpenAI.Responses.ResponseFunctionToolCall) => Promise<string>): Promise<void> {
  // ---- docs/library.md: OpenAI's Responses API
  const client = new OpenAI();
  const lethe = createResponsesAdapter({ engine: createEngine({ contextWindow: 272_000, maxOutputTokens: 32_000 }) });
  const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Read every data file." }];
  for (;;) {
    const response = await lethe.create(client, { model: "gpt-5", instructions: "You are a careful agent.", input, tools });
    input.push(...response.output); // reasoning items included: lethe sends them back as they came
    const calls = response.output.filter((item) => item.type === "function_call");
    if (calls.length === 0) break;
    for (const call of calls) input.push({ type: "function_call_output", call_id: call.call_id, output: await run(call) });
  }
  // ----
}
