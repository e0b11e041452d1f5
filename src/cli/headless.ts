// Headless mode (`lethe -p "<prompt>"`). The contract (SPEC.md, "The agent (CLI)"):
// - stdout: the final assistant text (text), ONE JSON object at the end (json), or one JSON
//   event per line (stream-json); nothing else ever goes to stdout;
// - exit 0 when the model finished; on failure a one-line error on stderr and a non-zero exit.
// Headless asks no questions: what the permission policy does not allow is refused (the model
// is told by which rule or mode, and stderr gets one line, once); "ask" auto-compact is "on".
// The JSON shapes follow Claude Code's `claude -p` (docs/cli.md, "Claude Code compatibility").
// The output formats are in headless/output.ts, the permission refusal in headless/refusal.ts.
import type { CliArgs, OutputFormat } from "./args.ts";
import type { RunConfig } from "./config.ts";
import { errorLine, redact } from "./errors.ts";
import { createSpinner, PLAIN } from "./render.ts";
import { AgentSession, type RunOutcome, createClient } from "./session.ts";
import type { ModelClient } from "../model/types.ts";
import { fitResumed, switchLine } from "./steer.ts";
import { headlessEvents, initMessage, jsonLine, resultMessage } from "./headless/output.ts";
import { headlessRefuser } from "./headless/refusal.ts";

export { HEADLESS_DENIAL_NOTE, headlessRefusal } from "./headless/refusal.ts";

export interface HeadlessIO {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

/** Where the run's end goes: the output format, the streams, and the result object's maker (json's line, stream-json's last). */
interface RunEnd {
  format: OutputFormat;
  io: HeadlessIO;
  result: (r: RunOutcome | undefined, error?: string) => unknown;
}

/** Runs one prompt without asking anything; resolves with the exit code (0 done, 1 error, 130 interrupted). */
export async function runHeadless(cfg: RunConfig, args: CliArgs, prompt: string, io: HeadlessIO, client?: ModelClient): Promise<number> {
  const started = Date.now();
  const format = args.outputFormat;
  const spinner = createSpinner(io.stderr, PLAIN);
  let sessionId: string | null = null;
  const onEvent = headlessEvents({ cfg, stdout: io.stdout, stderr: io.stderr, spinner, format, sessionId: () => sessionId });
  const session = new AgentSession(
    cfg,
    {
      onEvent,
      onWarning: (m) => io.stderr.write(`lethe: ${redact(m)}\n`),
      // The policy answered "ask", and headless has no one to ask.
      ...headlessRefuser(cfg, io.stderr),
    },
    client ?? (await createClient(cfg)),
  );
  const end: RunEnd = { format, io, result: (r, error) => resultMessage(cfg, session, { started, sessionId }, r, error) };

  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigint);
  try {
    await session.start({ ...(args.resume !== undefined ? { resume: args.resume } : {}), continueLatest: args.continue });
    sessionId = session.id;
    for (const w of [...session.instructions.warnings, ...session.loadWarnings]) io.stderr.write(`lethe: ${w}\n`);
    // Resumed with a model whose window is smaller than the session's last: compacted first by that model.
    const fitted = await fitResumed(session, controller.signal);
    if (fitted) io.stderr.write(`lethe: ${switchLine(fitted)}\n`);
    if (format === "stream-json") jsonLine(io.stdout, initMessage(cfg, session));
    const r = await session.run(prompt, controller.signal);
    spinner.stop();
    return finishRun(r, session.id, end);
  } catch (e) {
    spinner.stop();
    return failRun(e, controller.signal.aborted, end);
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
    // On a store, what is still queued is written before the process exits.
    await session.end().catch((e) => io.stderr.write(`${errorLine(e)}\n`));
  }
}

/** The run ended: its output in the chosen format, a line on stderr unless the model finished, and the exit code. */
function finishRun(r: RunOutcome, sessionId: string, { format, io, result }: RunEnd): number {
  if (r.stop === "aborted") {
    if (format !== "text") jsonLine(io.stdout, result(r, "interrupted"));
    io.stderr.write("lethe: interrupted\n");
    return 130;
  }
  if (r.stop === "refusal") {
    const msg = "the model declined this request (stop_reason refusal); it was taken out of the session's context, so the session can go on with another request";
    if (format !== "text") jsonLine(io.stdout, result(r, msg));
    io.stderr.write(`lethe: ${msg}\n`);
    return 1;
  }
  if (r.stop === "max_budget") {
    const spent = r.costUsd === undefined ? "" : ` after spending $${r.costUsd.toFixed(4)}`;
    const msg = `stopped${spent}, before the request that would take this run past its budget (--max-budget-usd); continue with --resume ${sessionId}`;
    if (format !== "text") jsonLine(io.stdout, result(r, msg));
    io.stderr.write(`lethe: ${msg}\n`);
    return 1;
  }
  if (format === "text") io.stdout.write(r.text.endsWith("\n") || r.text === "" ? r.text : `${r.text}\n`);
  else jsonLine(io.stdout, result(r));
  if (r.stop === "max_turns") {
    io.stderr.write(`lethe: stopped after ${r.turns} turn${r.turns === 1 ? "" : "s"} (--max-turns) before the model finished; continue with --resume ${sessionId}\n`);
    return 1;
  }
  return 0;
}

/** The run failed: a script reading stdout still gets one result object, marked as an error; an interrupt exits 130, anything else is thrown on. */
function failRun(e: unknown, aborted: boolean, { format, io, result }: RunEnd): number {
  if (format !== "text") jsonLine(io.stdout, result(undefined, aborted ? "interrupted" : errorLine(e).replace(/^lethe: /, "")));
  if (aborted) {
    io.stderr.write("lethe: interrupted\n");
    return 130;
  }
  throw e;
}
