// The interactive REPL (node:readline; works in a real terminal and on a pipe).
//
// Keys: Enter sends; Ctrl-C during a turn cancels that turn (the session goes on); Ctrl-C on
// an empty prompt twice, or Ctrl-D, exits. Lines typed while a turn runs are queued. Shift+Tab
// cycles the permission mode, Ctrl+O expands the last collapsed tool output (repl/shortcuts.ts).
// Commands: /compact [instructions], /context, /cost, /clear, /resume [id], /help, /exit.
//
// Its parts live in repl/: the shared state (state.ts), the questions during a turn (prompts.ts),
// one turn (turn.ts), the slash commands (commands.ts) and the input loop (input-loop.ts).
import type { ModelClient } from "../model/types.ts";
import { fitResumed, switchLine } from "./steer.ts";
import type { CliArgs } from "./args.ts";
import type { RunConfig } from "./config.ts";
import { redact } from "./errors.ts";
import { displayPath, fmt, recentExchanges } from "./render.ts";
import { AgentSession, createClient } from "./session.ts";
import { runInputLoop } from "./repl/input-loop.ts";
import { askCompact, askPermission } from "./repl/prompts.ts";
import { Repl, type ReplIO } from "./repl/state.ts";

export { HELP } from "./repl/commands.ts";
export type { ReplIO };

/** Runs the interactive session; resolves with the exit code. */
export async function runRepl(cfg: RunConfig, args: CliArgs, version: string, io: ReplIO, client?: ModelClient): Promise<number> {
  const repl = new Repl(cfg, io);
  const { s, print } = repl;
  repl.session = new AgentSession(
    cfg,
    {
      onEvent: (e) => {
        // A "no" to compacting holds until the context is compacted or back under the threshold.
        if ((e.type === "request" && e.tokens < e.threshold) || (e.type === "compaction" && e.record)) repl.compactDeclined = undefined;
        repl.view.onEvent(e);
      },
      onWarning: (m) => print(s.yellow(`warning: ${redact(m)}`)),
      // Only what the permission policy answers "ask" reaches this question.
      askPermission: (q) => askPermission(repl, q),
      onCompactSuggested: (q) => askCompact(repl, q),
    },
    client ?? (await createClient(cfg)),
  );
  await repl.session.start({ ...(args.resume !== undefined ? { resume: args.resume } : {}), continueLatest: args.continue });
  // Resumed with a model whose window is smaller than the session's last: compacted first by that model.
  const fitted = await fitResumed(repl.session);
  return runInputLoop(repl, args.positional.join(" ").trim(), () => {
    printBanner(repl, version);
    if (fitted) repl.print(repl.s.yellow(switchLine(fitted)));
  });
}

/** The first lines: version, model and window, the session, the project instructions, warnings, and the last exchanges of a resumed session. */
function printBanner({ cfg, s, session, print, render }: Repl, version: string): void {
  const b = session.breakdown();
  print(`${s.bold(`lethe ${version}`)} · ${cfg.model} (${cfg.provider}${cfg.baseUrl ? ` at ${redact(cfg.baseUrl)}` : ""}) · window ${fmt(cfg.contextWindow)} · auto-compact ${cfg.autoCompact}${cfg.autoCompact !== "off" ? ` at ${fmt(b.threshold)}` : ""}${cfg.policy.mode !== "default" ? ` · permissions ${cfg.policy.mode}` : ""}`);
  print(s.dim(`session ${session.id}${session.history.length ? ` (resumed: ${session.history.length} messages)` : ""} · ${cfg.workspace} · /help for commands`));
  const files = session.instructions.files;
  if (files.length) print(s.dim(`project instructions: ${files.map((f) => displayPath(f.path, cfg.workspace)).join(", ")} (${fmt(session.instructionTokens)} tokens; /memory shows them)`));
  for (const w of [...session.instructions.warnings, ...session.loadWarnings]) print(s.yellow(`warning: ${w}`));
  if (session.history.length) {
    const recent = recentExchanges(session.history, 3, s, render);
    if (recent) print(recent);
  }
}
