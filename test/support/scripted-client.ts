// An in-process ModelClient that plays scripted replies: for unit tests of the compaction
// logic only. Tests of the real wire protocols use the SDKs against the fake servers.
import type { Message } from "../../src/messages/types.ts";
import { type ModelClient, ModelError, type ModelRequest, type ModelResponse } from "../../src/model/types.ts";

export type Scripted = string | ModelError | ((req: ModelRequest) => string | ModelError | Promise<string | ModelError>);

export function scriptedClient(script: Scripted[], opts: { delayMs?: number } = {}): ModelClient & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    provider: "anthropic",
    requests,
    async stream(req) {
      requests.push(req);
      if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
      const step = script.length > 1 ? script.shift()! : script[0]!;
      const out = typeof step === "function" ? await step(req) : step;
      if (out instanceof ModelError) throw out;
      const message: Message = { role: "assistant", content: [{ type: "text", text: out }] };
      const r: ModelResponse = { message, usage: { input_tokens: 100, output_tokens: 50 }, stopReason: "end_turn", model: req.model };
      return r;
    },
  };
}

export const SUMMARY_REPLY = "<analysis>thinking it through</analysis>\n<summary>\n1. Goal — fix the failing build in src/app.ts.\n8. Current work — editing src/app.ts.\n</summary>";
