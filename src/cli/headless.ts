// Headless mode (`lethe -p "<prompt>"`). The contract (SPEC.md, "The agent (CLI)"):
// - stdout: the final assistant text (text), ONE JSON object at the end (json), or one JSON
//   event per line (stream-json); nothing else ever goes to stdout;
// - exit 0 when the model finished; on failure a one-line error on stderr and a non-zero exit.
// Headless asks no questions: what the permission policy does not allow is refused (the model
// is told by which rule or mode, and stderr gets one line, once); "ask" auto-compact is "on".
// The JSON shapes follow Claude Code's `claude -p` (docs/cli.md, "Claude Code compatibility").
import type { AgentEvent } from "../agent/loop.ts";
import type { CliArgs } from "./args.ts";
import type { RunConfig } from "./config.ts";
import { randomUUID } from "node:crypto";
import { errorLine, oneLine, redact } from "./errors.ts";
import { costOf, priceOf } from "./pricing.ts";
import { compactionNotice, createSpinner, PLAIN, windowNotice } from "./render.ts";
import { suggestedRules } from "./permissions.ts";
import { rulePaths } from "./rule-paths.ts";
import { AgentSession, type RunOutcome, createClient } from "./session.ts";
import type { ModelClient } from "../model/types.ts";

export interface HeadlessIO {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

export const HEADLESS_DENIAL_NOTE =
  "[lethe] This session runs headless: no one can answer permission questions, so calls the permission policy does not allow (by default shell commands and file changes) are refused every time. " +
  "Do not try them again. Carry on with the read-only tools (read_file, glob, grep, recall) and, in your final answer, say what you could not do and the exact commands or edits that remain.";

/**
 * What the model and stderr are told when the policy would ask and no one can answer. The rules it
 * suggests are ones that can match (one per command of a compound line); a call that asks because
 * a deny rule could not be checked says so, since no allow rule or mode lets it through.
 */
export function headlessRefusal(mode: string, tool: string, input: unknown, reason?: string, workspace?: string): string {
  if (reason !== undefined) return `Not run: ${reason}; headless, so no one can be asked. Write the command so that what it runs and touches is plain (no variables or substitutions in the command name or file arguments).`;
  const rules = suggestedRules(tool, input, workspace !== undefined ? { paths: rulePaths(workspace) } : {}).map((r) => r.text);
  const how = rules.length > 0 ? `--allowedTools '${rules.join(" ")}', ` : "";
  return `Not run: denied by the permission policy (mode ${mode}; headless, so no one can be asked). Allow it with ${how}--permission-mode acceptEdits (file edits) or bypassPermissions (everything).`;
}

const line = (stream: NodeJS.WritableStream, obj: unknown) => stream.write(`${redact(JSON.stringify(obj))}\n`);

/** Claude Code's apiKeySource, as far as lethe knows it. */
function apiKeySource(cfg: RunConfig): string {
  if (!cfg.apiKey || cfg.apiKey === "no-key") return "none";
  return cfg.provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
}

export async function runHeadless(cfg: RunConfig, args: CliArgs, prompt: string, io: HeadlessIO, client?: ModelClient): Promise<number> {
  const started = Date.now();
  const format = args.outputFormat;
  const stream = format === "stream-json";
  // Progress notices go to a terminal, or anywhere with --verbose.
  const notices = !!io.stderr.isTTY || cfg.verbose;
  const spinner = createSpinner(io.stderr, PLAIN);
  let deniedNoted = false;
  const notes: string[] = [];
  let sessionId: string | null = null;

  const onEvent = (e: AgentEvent) => {
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
          if (stream) line(io.stdout, { type: "compaction", session_id: sessionId, ...e.record });
          if (notices) {
            spinner.stop();
            io.stderr.write(`${compactionNotice(e.record)}\n`);
          }
        } else if (e.event.kind === "window_learned") {
          spinner.stop();
          io.stderr.write(`lethe: ${windowNotice(e.event)}\n`);
        }
        break;
      case "message":
        if (stream) line(io.stdout, { type: e.message.role, message: e.message, session_id: sessionId, parent_tool_use_id: null, uuid: randomUUID() });
        break;
      case "retry":
        if (stream) line(io.stdout, { type: "retry", session_id: sessionId, attempt: e.attempt, delay_ms: e.delayMs, error: e.error.message });
        if (cfg.verbose) io.stderr.write(`lethe: ${redact(oneLine(e.error.message, 200))}; retry ${e.attempt} in ${(e.delayMs / 1000).toFixed(1)}s\n`);
        break;
      case "fallback":
        if (stream) line(io.stdout, { type: "fallback", session_id: sessionId, from: e.from, to: e.to, error: e.error.message });
        if (notices) io.stderr.write(`switched to the fallback model ${e.to} (${e.from}: ${e.error.message})\n`);
        break;
      case "subagent":
        if (stream) line(io.stdout, { type: "subagent", session_id: sessionId, id: e.id, phase: e.phase, ...(e.description ? { description: e.description } : {}) });
        break;
      default:
        break;
    }
  };

  const session = new AgentSession(
    cfg,
    {
      onEvent,
      onWarning: (m) => io.stderr.write(`lethe: ${redact(m)}\n`),
      // The policy answered "ask", and headless has no one to ask.
      askPermission: async ({ tool, summary, input, reason }) => {
        const refusal = headlessRefusal(cfg.policy.mode, tool, input, reason, cfg.workspace);
        if (!deniedNoted) {
          deniedNoted = true;
          io.stderr.write(`lethe: refused ${tool} (${oneLine(summary, 120)}): ${refusal.replace(/^Not run: /, "")}\n`);
          notes.push(HEADLESS_DENIAL_NOTE);
        }
        return refusal;
      },
      takeNotes: () => notes.splice(0),
    },
    client ?? (await createClient(cfg)),
  );

  /** Claude Code's result object (SDKResultMessage), plus lethe's own fields. */
  const result = (r: RunOutcome | undefined, error?: string) => {
    const cost = session.cost();
    const usage: Record<string, unknown> = { ...(r?.runUsage ?? session.usage) };
    if (cost === undefined) usage.cost_note = `no price known for ${[...session.usageByModel.keys()].join(", ") || cfg.model}; total_cost_usd counts 0 for it (add it under "pricing" in settings)`;
    const modelUsage: Record<string, unknown> = {};
    for (const [model, u] of session.usageByModel) {
      const p = priceOf(model, cfg.pricing);
      modelUsage[model] = { inputTokens: u.input_tokens, outputTokens: u.output_tokens, cacheReadInputTokens: u.cache_read_input_tokens, cacheCreationInputTokens: u.cache_creation_input_tokens, costUSD: p ? costOf(u, p.pricing) : 0 };
    }
    const subtype = error !== undefined ? "error_during_execution" : r?.stop === "max_turns" ? "error_max_turns" : "success";
    const known = [...session.usageByModel].reduce((a, [m, u]) => a + (priceOf(m, cfg.pricing) ? costOf(u, priceOf(m, cfg.pricing)!.pricing) : 0), 0);
    return {
      type: "result",
      subtype,
      is_error: subtype !== "success",
      duration_ms: Date.now() - started,
      duration_api_ms: session.apiMs,
      num_turns: r?.turns ?? 0,
      ...(subtype === "success" ? { result: r!.text } : { result: r?.text ?? "", errors: [error ?? `stopped after ${r?.turns} turns (--max-turns)`] }),
      session_id: sessionId,
      total_cost_usd: r?.costUsd ?? known,
      usage,
      modelUsage,
      permission_denials: session.permissionDenials,
      uuid: randomUUID(),
      // lethe's own:
      stop_reason: r?.stop ?? "error",
      compactions: r?.compactions ?? session.compactions,
      model: r?.model ?? session.model,
    };
  };

  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigint);
  try {
    session.start({ ...(args.resume !== undefined ? { resume: args.resume } : {}), continueLatest: args.continue });
    sessionId = session.id;
    for (const w of [...session.instructions.warnings, ...session.loadWarnings]) io.stderr.write(`lethe: ${w}\n`);
    if (stream) {
      line(io.stdout, {
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
      });
    }
    const r = await session.run(prompt, controller.signal);
    spinner.stop();
    if (r.stop === "aborted") {
      if (format !== "text") line(io.stdout, result(r, "interrupted"));
      io.stderr.write("lethe: interrupted\n");
      return 130;
    }
    if (r.stop === "refusal") {
      const msg = "the model declined this request (stop_reason refusal); it was taken out of the session's context, so the session can go on with another request";
      if (format !== "text") line(io.stdout, result(r, msg));
      io.stderr.write(`lethe: ${msg}\n`);
      return 1;
    }
    if (format === "text") io.stdout.write(r.text.endsWith("\n") || r.text === "" ? r.text : `${r.text}\n`);
    else line(io.stdout, result(r));
    if (r.stop === "max_turns") {
      io.stderr.write(`lethe: stopped after ${r.turns} turns (--max-turns) before the model finished; continue with --resume ${session.id}\n`);
      return 1;
    }
    return 0;
  } catch (e) {
    spinner.stop();
    const aborted = controller.signal.aborted;
    // A script reading stdout still gets one result object, marked as an error.
    if (format !== "text") line(io.stdout, result(undefined, aborted ? "interrupted" : errorLine(e).replace(/^lethe: /, "")));
    if (aborted) {
      io.stderr.write("lethe: interrupted\n");
      return 130;
    }
    throw e;
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
    session.close();
  }
}
