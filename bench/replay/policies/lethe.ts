// `lethe`: the product. One engine per session with a real file store (tool results are written
// to <dir>/tool-results/, as in production), engine.beforeRequest before each request with the
// exact tokens of the system prompt as fixedTokens (and the system prompt, which a summary request
// reuses), engine.observe with the reported usage after it.
//
// The summary model. Offline, the digest (src/compaction/digest.ts) stands in for the model: the
// engine gets a ModelClient whose stream() returns digest(history, {maxTokens: the engine's own
// summary budget}) through the harness's SummaryModel, i.e. exactly the text summarizerMode
// "digest" would produce, while the engine builds and "sends" its real summary request (the
// conversation as sent + the instruction), which the harness prices with prompt-cache reuse, and
// while the time inside the model call is measured and excluded from prepare_ms. Background
// pre-summary is off (presummaryShare 0), as it is in digest mode: a replay has no model latency
// to hide (bench:stall measures that).
import { join } from "node:path";
import { InvariantError, OverWindowError, createEngine } from "../../../src/engine/index.ts";
import { openTranscript } from "../../../src/session/transcript.ts";
import { ThrashError } from "../../../src/compaction/summary/compactor.ts";
import type { Message } from "../../../src/messages/types.ts";
import type { ModelClient, ModelRequest, ModelResponse } from "../../../src/model/types.ts";
import type { Policy, PolicySession, SummaryModel } from "../types.ts";

export { InvariantError, OverWindowError, ThrashError };

/** The conversation of a summary request: its messages without the instruction summaryRequest appended last. */
export function withoutInstruction(messages: readonly Message[]): Message[] {
  const out = messages.slice();
  const last = out[out.length - 1];
  if (!last || typeof last.content === "string") return out;
  if (last.content.length <= 1) out.pop();
  else out[out.length - 1] = { ...last, content: last.content.slice(0, -1) };
  return out;
}

/** A ModelClient whose every call is a summary written by the replay's SummaryModel (the digest). */
export function digestClient(model: SummaryModel): ModelClient {
  return {
    provider: "anthropic",
    async stream(request: ModelRequest): Promise<ModelResponse> {
      const summary = model.summarize({
        history: withoutInstruction(request.messages),
        maxTokens: request.maxTokens,
        request: { kind: "prefix", messages: request.messages },
      });
      return {
        message: { role: "assistant", content: [{ type: "text", text: `<summary>\n${summary}\n</summary>` }] },
        usage: { input_tokens: 0, output_tokens: 0 },
        stopReason: "end_turn",
        model: request.model,
      };
    },
  };
}

const extraConfig = JSON.parse(process.env.LETHE_REPLAY_CONFIG ?? "{}");

export const lethePolicy: Policy = {
  name: "lethe",
  describe:
    "createEngine({contextWindow, maxOutputTokens, sessionDir, readFile: the replay's file stand-in, summarizer: the digest behind a ModelClient, presummaryShare 0}) per session; " +
    "engine.beforeRequest(history, {system, fixedTokens: exact system tokens}) timed, minus the time inside the summary model call; engine.observe(sent, reply, usage) untimed; " +
    "summary calls counted from its events (summarize/reactive)",
  start({ session, window, dir, clock, systemTokens, model, readFile }): PolicySession {
    // As the agent does: every message is written to the transcript before it is sent, so
    // micro need not save what it clears a second time.
    const transcript = openTranscript(join(dir, "transcript.jsonl"), { header: { id: session.id, cwd: dir } });
    const engine = createEngine({
      transcript,
      transcriptHoldsHistory: true,
      contextWindow: window.contextWindow,
      maxOutputTokens: window.maxOutputTokens,
      sessionDir: dir,
      workspace: dir,
      now: clock,
      readFile,
      summarizer: { client: digestClient(model), model: "replay-digest" },
      summarizerMode: "model",
      // LETHE_REPLAY_CONFIG (JSON) overlays engine settings, to try variants.
      config: { ...extraConfig, summary: { ...(extraConfig.summary ?? {}), presummaryShare: 0 } },
    });
    const call = { fixedTokens: systemTokens, system: session.system };
    return {
      threshold: engine.threshold,
      async prepare(live) {
        const r = await engine.beforeRequest(live, call);
        // A summary compaction; a reactive one that only shrank results (summarizer "none") made no call.
        const summaries = r.events.filter((e) => (e.kind === "summarize" || e.kind === "reactive") && e.summarizer !== "none").length;
        const acted = r.events.map((e) => e.kind);
        const compaction = summaries > 0 ? "summary" : acted.includes("snip") ? "snip" : acted.includes("reactive") ? "reactive" : null;
        return { history: r.history, summaries, compaction, acted };
      },
      arrive(messages) {
        for (const m of messages) transcript.appendMessage(m);
      },
      observe(sent, reply, usage) {
        transcript.appendMessage(reply);
        engine.observe(sent, reply, usage, call);
      },
    };
  },
};
