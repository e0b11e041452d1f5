// docs/library.md's LangChain loop, as strict TypeScript against @langchain/core's own types.
import { type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent } from "langchain";
import { createEngine } from "../../src/index.ts";
import { createLangChainAdapter, createLetheMiddleware } from "../../src/adapters/langchain.ts";

export async function langchainLoop(lookupTool: Parameters<ChatOpenAI["bindTools"]>[0][number], run: (call: ToolCall) => Promise<string>): Promise<void> {
  // ---- docs/library.md: LangChain, your own loop
  const engine = createEngine({ contextWindow: 16_000, maxOutputTokens: 2_000, sessionDir: "session" });
  const lethe = createLangChainAdapter({ engine });
  const model = new ChatOpenAI({ model: "gpt-4o" }).bindTools([lookupTool]);

  const messages: BaseMessage[] = [new SystemMessage("You are a careful agent."), new HumanMessage("Read every data file.")];
  for (;;) {
    const reply = await lethe.invoke(model, messages); // compact → invoke → usage; reactive retry once
    messages.push(reply);
    if (!reply.tool_calls?.length) break;
    for (const call of reply.tool_calls) messages.push(new ToolMessage({ content: await run(call), tool_call_id: call.id! }));
  }
  // ----
  // langchain v1: the middleware where summarizationMiddleware goes, type-checked by createAgent itself.
  createAgent({ model: new ChatOpenAI({ model: "gpt-4o" }), tools: [], middleware: [createLetheMiddleware({ contextWindow: 16_000, maxOutputTokens: 2_000 })] });
}
