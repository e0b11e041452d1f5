// What the framework-adapter tests share: the scripted model, the summary-request check, and an
// engine wired to the fake OpenAI server for its summaries.
import type { CompactionEvent } from "../../src/compaction/types.ts";
import { createEngine } from "../../src/engine/index.ts";
import { createOpenAIClient } from "../../src/model/openai.ts";
import type { TranscriptWriter } from "../../src/session/transcript.ts";
import type { FakeServer } from "./fakes/common.ts";
import { isSummaryRequest, SUMMARY_TEXT } from "./e2e.ts";

/** Tool steps the scripted model takes before it answers `done after STEPS steps`. */
export const STEPS = 62;

/** lethe's summary request (adapters send it without the framework's tools, so tool_choice may be absent). */
export const isSummary = (body: any): boolean => isSummaryRequest(body) || /is about to be compacted/.test(JSON.stringify(body?.messages?.at(-1) ?? ""));

/** The model: STEPS calls of `tool` ("lookup" is not one micro may clear), then the answer. */
export function stepScript(tool = "lookup") {
  let n = 0;
  return (body: any) => {
    if (isSummary(body)) return { text: SUMMARY_TEXT };
    n++;
    if (n > STEPS) return { text: `done after ${STEPS} steps` };
    return { toolUses: [{ name: tool, input: { command: `cat data/file${n}.txt` } }] };
  };
}

/** An engine at `window` whose summaries come from the fake server; events land in `events`. */
export function adapterEngine(fake: FakeServer, o: { window: number; events: CompactionEvent[]; dir?: string; transcript?: TranscriptWriter }) {
  return createEngine({
    contextWindow: o.window,
    maxOutputTokens: 2_000,
    ...(o.dir ? { sessionDir: o.dir } : {}),
    ...(o.transcript ? { transcript: o.transcript, transcriptHoldsHistory: true } : {}),
    summarizer: { client: createOpenAIClient({ baseURL: fake.url, apiKey: "k" }), model: "gpt-4o" },
    onEvent: (e) => o.events.push(e),
  });
}
