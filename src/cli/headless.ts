// Headless mode (`lethe -p "<prompt>"`). The contract (SPEC.md, "The agent (CLI)"):
// - stdout: the final assistant text (text), ONE JSON object at the end (json), or one JSON
//   event per line (stream-json); nothing else ever goes to stdout;
// - exit 0 when the model finished; on failure a one-line error on stderr and a non-zero exit.
// Without --yes, bash and file writes are denied (the model gets a clear error result, and a
// one-line note goes to stderr once); "ask" auto-compact is treated as "on".
import type { AgentEvent } from "../agent/loop.ts";
import type { CliArgs } from "./args.ts";
import type { RunConfig } from "./config.ts";
import { errorLine } from "./errors.ts";
import { compactionNotice, createSpinner, PLAIN } from "./render.ts";
import { AgentSession, createClient } from "./session.ts";
import type { ModelClient } from "../model/types.ts";

export interface HeadlessIO {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

export const HEADLESS_DENIAL_NOTE =
  "[lethe] This session runs headless without --yes: shell commands (bash) and file changes (write_file, edit_file) are not allowed and will be denied every time. " +
  "Do not try them again. Carry on with the read-only tools (read_file, glob, grep, recall) and, in your final answer, say what you could not do and the exact commands or edits that remain.";

const line = (stream: NodeJS.WritableStream, obj: unknown) => stream.write(`${JSON.stringify(obj)}\n`);

export async function runHeadless(cfg: RunConfig, args: CliArgs, prompt: string, io: HeadlessIO, client?: ModelClient): Promise<number> {
  const started = Date.now();
  const format = args.outputFormat;
  const stream = format === "stream-json";
  const ttyErr = !!io.stderr.isTTY;
  const spinner = createSpinner(io.stderr, PLAIN);
  let deniedNoted = false;
  const notes: string[] = [];

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
          if (stream) line(io.stdout, { type: "compaction", ...e.record });
          else if (ttyErr) {
            spinner.stop();
            io.stderr.write(`${compactionNotice(e.record)}\n`);
          }
        }
        break;
      case "message":
        if (stream) line(io.stdout, { type: e.message.role, message: e.message });
        break;
      case "retry":
        if (stream) line(io.stdout, { type: "retry", attempt: e.attempt, delay_ms: e.delayMs, error: e.error.message });
        break;
      case "fallback":
        if (stream) line(io.stdout, { type: "fallback", from: e.from, to: e.to, error: e.error.message });
        else if (ttyErr) io.stderr.write(`switched to the fallback model ${e.to} (${e.from}: ${e.error.message})\n`);
        break;
      case "subagent":
        if (stream) line(io.stdout, { type: "subagent", id: e.id, phase: e.phase, ...(e.description ? { description: e.description } : {}) });
        break;
      default:
        break;
    }
  };

  const session = new AgentSession(
    cfg,
    {
      onEvent,
      onWarning: (m) => io.stderr.write(`lethe: ${m}\n`),
      ...(cfg.yes
        ? {}
        : {
            askPermission: async ({ tool, summary }) => {
              if (!deniedNoted) {
                deniedNoted = true;
                io.stderr.write(`lethe: denied ${tool} (${summary.replace(/\s+/g, " ").slice(0, 120)}): headless mode asks no questions; pass --yes to allow commands and file writes\n`);
                notes.push(HEADLESS_DENIAL_NOTE);
              }
              return false;
            },
            takeNotes: () => notes.splice(0),
          }),
    },
    client ?? (await createClient(cfg)),
  );
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigint);
  try {
    session.start({ ...(args.resume !== undefined ? { resume: args.resume } : {}), continueLatest: args.continue });
    for (const w of [...session.instructions.warnings, ...session.loadWarnings]) io.stderr.write(`lethe: ${w}\n`);
    if (stream) {
      line(io.stdout, {
        type: "system",
        subtype: "init",
        session_id: session.id,
        cwd: cfg.workspace,
        provider: cfg.provider,
        model: cfg.model,
        tools: session.tools.map((t) => t.name),
        context_window: cfg.contextWindow,
        max_output_tokens: cfg.maxOutputTokens,
        auto_compact_threshold: session.engine.threshold,
        resumed_messages: session.history.length,
      });
    }
    const r = await session.run(prompt, controller.signal);
    spinner.stop();
    if (r.stop === "aborted") {
      if (stream) line(io.stdout, { type: "error", session_id: session.id, error: "interrupted" });
      io.stderr.write("lethe: interrupted\n");
      return 130;
    }
    const subtype = r.stop === "max_turns" ? "error_max_turns" : "success";
    const result = {
      type: "result",
      subtype,
      is_error: r.stop === "max_turns",
      session_id: session.id,
      result: r.text,
      stop_reason: r.stop,
      usage: r.runUsage,
      total_cost_usd: r.costUsd ?? null,
      compactions: r.compactions,
      num_turns: r.turns,
      model: r.model,
      duration_ms: Date.now() - started,
    };
    if (format === "text") io.stdout.write(r.text.endsWith("\n") || r.text === "" ? r.text : `${r.text}\n`);
    else line(io.stdout, result);
    if (r.stop === "max_turns") {
      io.stderr.write(`lethe: stopped after ${r.turns} turns (--max-turns) before the model finished; continue with --resume ${session.id}\n`);
      return 1;
    }
    return 0;
  } catch (e) {
    spinner.stop();
    if (controller.signal.aborted) {
      io.stderr.write("lethe: interrupted\n");
      return 130;
    }
    if (stream) line(io.stdout, { type: "error", session_id: session.paths?.id ?? null, error: errorLine(e).replace(/^lethe: /, "") });
    throw e;
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
    session.close();
  }
}
