// Subagents (the task tool): a fresh agent loop with its own engine (its own compaction), its
// own transcript under the parent session's folder (subagents/<id>/transcript.jsonl, with its
// own tool-results/), the same tools minus task, and only its final text going back to the
// parent. Its compactions are reported to the parent with kind "subagent" (and recorded as
// boundary lines in the parent's transcript, as records: they do not change the parent's context).
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import { ModelError, type ModelClient } from "../model/types.ts";
import type { RetryOptions } from "../model/retry.ts";
import { type TranscriptWriter, openTranscript } from "../session/transcript.ts";
import type { ToolContext } from "../tools/types.ts";
import type { AgentEvent, AgentOptions, AgentResult, CompactionRecord, SubagentOptions } from "./types.ts";

export type { SubagentEngineArgs, SubagentOptions } from "./types.ts";

export interface SubagentParent {
  /** The loop that runs the subagent (the parent's own: passed in, so this module does not import it back). */
  run: (history: [], prompt: string, opts: AgentOptions) => Promise<AgentResult>;
  client: ModelClient;
  /** The parent's current model (after a fallback switch, the fallback). */
  model: () => string;
  maxOutputTokens: number;
  retry?: RetryOptions;
  fallbackModel?: string;
  askPermission?: ToolContext["askPermission"];
  /** The parent's read rules and credential pass-through: a subagent is held to the same. */
  readDenied?: ToolContext["readDenied"];
  passEnv?: ToolContext["passEnv"];
  workspace: string;
  parentTranscript?: TranscriptWriter;
  onEvent: (e: AgentEvent) => void;
  onCompaction: (r: CompactionRecord) => void;
}

/** A runner for the task tool: each call runs one subagent. Ids count from 1 per runner (plus a random part). */
export function createSubagentRunner(opts: SubagentOptions, parent: SubagentParent): NonNullable<ToolContext["runSubagent"]> {
  const toolset = opts.toolset.filter((t) => t.name !== "task");
  let counter = 0;
  return async (prompt, { description, signal }) => {
    const id = `agent-${++counter}-${randomBytes(3).toString("hex")}`;
    let dir: string | undefined;
    let transcript: TranscriptWriter | undefined;
    if (opts.sessionDir) {
      dir = join(opts.sessionDir, "subagents", id);
      mkdirSync(join(dir, "tool-results"), { recursive: true });
      transcript = openTranscript(join(dir, "transcript.jsonl"), {
        header: { id, cwd: parent.workspace, model: parent.model(), parent: basename(opts.sessionDir), ...(description ? { description } : {}) },
      });
    }
    parent.onEvent({ type: "subagent", id, phase: "start", ...(description ? { description } : {}), ...(transcript ? { transcript: transcript.path } : {}) });
    const engine = opts.createEngine({ sessionDir: dir, transcript });
    const relay = (e: AgentEvent) => {
      if (e.type === "compaction" && e.record) {
        const record: CompactionRecord = { kind: "subagent", tokens_before: e.record.tokens_before, tokens_after: e.record.tokens_after, subagent_kind: e.record.kind };
        parent.onCompaction(record);
        parent.parentTranscript?.appendBoundary({
          kind: "subagent",
          tokens_before: record.tokens_before,
          tokens_after: record.tokens_after,
          details: { subagent: id, subagent_kind: e.record.kind, ...(transcript ? { transcript: transcript.path } : {}) },
        });
        parent.onEvent({ type: "compaction", event: e.event, record });
        return;
      }
      parent.onEvent({ type: "subagent_event", id, event: e });
    };
    try {
      const r = await parent.run([], prompt, {
        engine,
        client: parent.client,
        model: parent.model(),
        system: opts.system,
        toolset,
        toolContext: {
          workspace: parent.workspace,
          sessionDir: dir,
          readState: new Map(),
          todos: [],
          askPermission: parent.askPermission,
          ...(parent.readDenied ? { readDenied: parent.readDenied } : {}),
          ...(parent.passEnv ? { passEnv: parent.passEnv } : {}),
        },
        transcript,
        maxTurns: opts.maxTurns ?? 50,
        maxOutputTokens: parent.maxOutputTokens,
        signal,
        retry: parent.retry,
        fallbackModel: parent.fallbackModel,
        onEvent: relay,
      });
      if (r.stop === "aborted") throw new ModelError("aborted", "the subagent was interrupted");
      const text = r.text.trim() || "(the subagent finished without a final message)";
      if (r.stop === "max_turns") return `${text}\n\n[lethe] The subagent stopped after ${r.turns} turns (its turn limit) before finishing.`;
      if (r.stop === "max_tokens") return `${text}\n\n[lethe] The subagent's final reply was cut off by the output token limit.`;
      return text;
    } finally {
      transcript?.close();
      parent.onEvent({ type: "subagent", id, phase: "end", ...(description ? { description } : {}) });
    }
  };
}
