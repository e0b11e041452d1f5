// What headless mode writes: progress on stderr, and on stdout the output format's shapes — for
// stream-json one JSON event per line (the init line first, the result line last), for json one
// result object at the end, for text the final answer alone. The JSON shapes follow Claude Code's
// `claude -p` (docs/cli.md, "Claude Code compatibility"), plus lethe's own fields.
import { randomUUID } from "node:crypto";
import type { AgentEvent } from "../../agent/loop.ts";
import type { OutputFormat } from "../args.ts";
import type { RunConfig } from "../config.ts";
import { oneLine, redact } from "../errors.ts";
import { costOf, priceOf } from "../pricing.ts";
import { type Spinner, compactionNotice, windowNotice } from "../render.ts";
import type { AgentSession, RunOutcome } from "../session.ts";

/** One JSON object on one line, secrets redacted. */
export const jsonLine = (stream: NodeJS.WritableStream, obj: unknown) => stream.write(`${redact(JSON.stringify(obj))}\n`);

/** Claude Code's apiKeySource, as far as lethe knows it. */
function apiKeySource(cfg: RunConfig): string {
  if (!cfg.apiKey || cfg.apiKey === "no-key") return "none";
  return cfg.provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
}

/**
 * The agent's events in headless mode: the spinner (on stderr), stream-json's event lines on
 * stdout, and notices on stderr (on a terminal, or with --verbose).
 */
export function headlessEvents(o: {
  cfg: RunConfig;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream;
  spinner: Spinner;
  format: OutputFormat;
  /** The session's id once it started (null before). */
  sessionId: () => string | null;
}): (e: AgentEvent) => void {
  const { cfg, stdout, stderr, spinner } = o;
  const stream = o.format === "stream-json";
  // Progress notices go to a terminal, or anywhere with --verbose.
  const notices = !!stderr.isTTY || cfg.verbose;
  return (e) => {
    switch (e.type) {
      case "request":
        spinner.start(`${e.model}: ${e.tokens.toLocaleString("en-US")} tokens`);
        break;
      case "compacting":
        spinner.start(`compacting (${e.kind})…`);
        break;
      case "tool":
        spinner.start(`${e.use.name}…`);
        break;
      case "response":
        spinner.stop();
        break;
      case "compaction":
        if (e.record) {
          if (stream) jsonLine(stdout, { type: "compaction", session_id: o.sessionId(), ...e.record });
          if (notices) {
            spinner.stop();
            stderr.write(`${compactionNotice(e.record)}\n`);
          }
        } else if (e.event.kind === "window_learned") {
          spinner.stop();
          stderr.write(`lethe: ${windowNotice(e.event)}\n`);
        }
        break;
      case "message":
        if (stream) jsonLine(stdout, { type: e.message.role, message: e.message, session_id: o.sessionId(), parent_tool_use_id: null, uuid: randomUUID() });
        break;
      case "retry":
        if (stream) jsonLine(stdout, { type: "retry", session_id: o.sessionId(), attempt: e.attempt, delay_ms: e.delayMs, error: e.error.message });
        if (cfg.verbose) stderr.write(`lethe: ${redact(oneLine(e.error.message, 200))}; retry ${e.attempt} in ${(e.delayMs / 1000).toFixed(1)}s\n`);
        break;
      case "fallback":
        if (stream) jsonLine(stdout, { type: "fallback", session_id: o.sessionId(), from: e.from, to: e.to, error: e.error.message });
        if (notices) stderr.write(`switched to the fallback model ${e.to} (${e.from}: ${e.error.message})\n`);
        break;
      case "subagent":
        if (stream) jsonLine(stdout, { type: "subagent", session_id: o.sessionId(), id: e.id, phase: e.phase, ...(e.description ? { description: e.description } : {}) });
        break;
      default:
        break;
    }
  };
}

/** stream-json's first line: Claude Code's system/init message, plus lethe's own fields. */
export function initMessage(cfg: RunConfig, session: AgentSession): Record<string, unknown> {
  return {
    type: "system",
    subtype: "init",
    uuid: randomUUID(),
    session_id: session.id,
    cwd: cfg.workspace,
    tools: session.tools.map((t) => t.name),
    mcp_servers: [],
    model: cfg.model,
    permissionMode: cfg.policy.mode,
    apiKeySource: apiKeySource(cfg),
    slash_commands: [],
    // lethe's own:
    provider: cfg.provider,
    context_window: cfg.contextWindow,
    max_output_tokens: cfg.maxOutputTokens,
    auto_compact_threshold: session.engine.threshold,
    resumed_messages: session.history.length,
    instruction_files: session.instructions.files.map((f) => f.path),
  };
}

/**
 * Claude Code's result object (SDKResultMessage), plus lethe's own fields: json's only line and
 * stream-json's last. Without an outcome (the run failed), or with an error, it is an error result.
 */
export function resultMessage(cfg: RunConfig, session: AgentSession, run: { started: number; sessionId: string | null }, outcome: RunOutcome | undefined, error?: string): Record<string, unknown> {
  const cost = session.cost();
  // A run that failed still did what it did: its turns, compactions and cost are reported.
  const r = outcome ?? session.failedRun;
  const usage: Record<string, unknown> = { ...(r?.runUsage ?? session.usage) };
  if (cost === undefined) usage.cost_note = `no price known for ${[...session.usageByModel.keys()].join(", ") || cfg.model}; total_cost_usd counts 0 for it (add it under "pricing" in settings)`;
  const modelUsage: Record<string, unknown> = {};
  for (const [model, u] of session.usageByModel) {
    const p = priceOf(model, cfg.pricing);
    modelUsage[model] = { inputTokens: u.input_tokens, outputTokens: u.output_tokens, cacheReadInputTokens: u.cache_read_input_tokens, cacheCreationInputTokens: u.cache_creation_input_tokens, costUSD: p ? costOf(u, p.pricing) : 0 };
  }
  const stop = outcome?.stop;
  const subtype = stop === "max_budget" ? "error_max_budget_usd" : error !== undefined ? "error_during_execution" : stop === "max_turns" ? "error_max_turns" : "success";
  const known = [...session.usageByModel].reduce((a, [m, u]) => a + (priceOf(m, cfg.pricing) ? costOf(u, priceOf(m, cfg.pricing)!.pricing) : 0), 0);
  return {
    type: "result",
    subtype,
    is_error: subtype !== "success",
    duration_ms: Date.now() - run.started,
    duration_api_ms: session.apiMs,
    num_turns: r?.turns ?? 0,
    ...(subtype === "success" ? { result: outcome!.text } : { result: outcome?.text ?? "", errors: [error ?? `stopped after ${r?.turns} turn${r?.turns === 1 ? "" : "s"} (--max-turns)`] }),
    session_id: run.sessionId,
    total_cost_usd: r?.costUsd ?? known,
    usage,
    modelUsage,
    permission_denials: session.permissionDenials,
    uuid: randomUUID(),
    // lethe's own:
    stop_reason: stop ?? "error",
    compactions: r?.compactions ?? [],
    model: outcome?.model ?? session.model,
  };
}
