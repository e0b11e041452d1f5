// The REPL's slash commands, one small handler each. A handler returns false to end the session.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { initPrompt } from "../../agent/instructions.ts";
import { errorLine, oneLine } from "../errors.ts";
import { priceOf } from "../pricing.ts";
import { contextChart, costReport, fmt, memoryReport, recentExchanges, sessionList } from "../render.ts";
import type { Repl } from "./state.ts";
import { runTurn } from "./turn.ts";
import { ask } from "./prompts.ts";
import { compactSession, previewReport, previewSession, switchLine, switchModel, uncompactSession, windowFor } from "../steer.ts";

export const HELP = `Commands:
  /compact [instructions]  summarise the conversation now; instructions say what to keep
  /compact --preview [instructions]
                           show what a compaction would remove, keep and write; apply it on yes
  /uncompact               undo the last compaction (when the history before it fits the window)
  /model [name]            show the model, or switch to another (a smaller window compacts first)
  /context                 where the context's tokens go, and how far auto-compact is
  /cost                    tokens and $ of this session (prompt-cache pricing)
  /clear                   start a new, empty session
  /resume [id]             list this workspace's sessions, or switch to one
  /memory                  the project instructions (AGENTS.md, CLAUDE.md) in the system prompt
  /init                    let the model write (or improve) AGENTS.md for this repository
  /help                    this help
  /exit                    quit (also Ctrl-D, or Ctrl-C twice)
Ctrl-C while the agent works cancels the current turn; the session goes on.
Shift+Tab cycles the permission mode (default → acceptEdits → plan); Ctrl+O shows the last
collapsed tool output in full.`;

/** A command's handler: `arg` is the text after the command's name, trimmed. Returns false to quit. */
type Command = (repl: Repl, arg: string) => void | boolean | Promise<void>;

const exit: Command = () => false;

const clear: Command = async ({ out, session, view, print }) => {
  if (out.isTTY) out.write("\x1b[2J\x1b[3J\x1b[H");
  await session.clear();
  view.resetNearWarning();
  print(`New session ${session.id}.`);
};

const init: Command = async (repl) => {
  const { cfg, s, session, print } = repl;
  const exists = existsSync(join(cfg.workspace, "AGENTS.md"));
  print(s.dim(exists ? "AGENTS.md exists: asking the model to improve it…" : "Asking the model to explore the repository and write AGENTS.md…"));
  await runTurn(repl, initPrompt(exists));
  const loaded = session.reloadInstructions();
  print(s.dim(`project instructions reloaded: ${loaded.files.length} file(s), ${fmt(session.instructionTokens)} tokens, in the system prompt from the next request on.`));
};

/** Without an id: this workspace's sessions. With one: switch to that session. */
const resume: Command = async ({ s, session, view, print, render }, arg) => {
  try {
    if (!arg) return print(sessionList(await session.sessions(), session.id, s));
    await session.switchTo(arg);
    view.resetNearWarning();
    print(`Resumed session ${session.id} (${session.history.length} messages in context).`);
    const recent = recentExchanges(session.history, 3, s, render);
    if (recent) print(recent);
    for (const w of session.loadWarnings) print(s.yellow(`warning: ${w}`));
  } catch (e) {
    print(s.red(errorLine(e)));
  }
};

/**
 * Compacts now; the text after /compact says what the summary must keep. `--preview` first shows
 * what it would do and applies that very summary on yes. Ctrl-C cancels it.
 */
const compact: Command = async (repl, arg) => {
  const { s, session, spinner, print } = repl;
  if (session.history.length === 0) return print("Nothing to compact yet.");
  const previewing = /^--preview(?:\s|$)/.test(arg);
  const focus = previewing ? arg.slice("--preview".length).trim() : arg;
  const controller = (repl.controller = new AbortController());
  try {
    let preview;
    if (previewing) {
      spinner.start(`previewing a compaction${focus ? `: ${oneLine(focus, 60)}` : ""}…`);
      preview = await previewSession(session, focus || undefined);
      spinner.stop();
      print(previewReport(preview));
      if (preview.skipped) return;
      const answer = await ask(repl, "Apply this compaction? [y/N] ", controller.signal);
      if (answer !== "y" && answer !== "yes") return print("Not applied: the context is as it was.");
    }
    spinner.start(`compacting (manual)${focus ? `: ${oneLine(focus, 60)}` : ""}…`);
    const records = await compactSession(session, focus || undefined, controller.signal, preview);
    if (records.length === 0 && !session.lastCompactSkipped) print("Nothing was compacted.");
  } catch (e) {
    print(controller.signal.aborted ? s.yellow("Compaction cancelled.") : s.red(errorLine(e)));
  } finally {
    spinner.stop();
    repl.controller = undefined;
  }
};

/** /uncompact: the history from before the last compaction, when it fits the window. */
const uncompact: Command = async ({ s, session, print }) => {
  try {
    print(await uncompactSession(session));
  } catch (e) {
    print(s.red(errorLine(e)));
  }
};

/**
 * /model [name]: without a name, the model and its window; with one, switch to it. A smaller
 * window: the current model compacts the history to fit it first, and says so.
 */
const model: Command = async (repl, arg) => {
  const { cfg, s, session, spinner, print } = repl;
  const window = (w: number) => `${fmt(w)}-token window`;
  if (!arg) return print(`Model: ${session.model} (${window(session.engine.contextWindow)}; auto-compact at ${fmt(session.engine.threshold)}).`);
  const to = arg.split(/\s+/)[0]!;
  const next = windowFor(cfg, to);
  // A typo would switch to a model the server does not have, and the window would be a guess: say so.
  if (next.guessed) print(s.yellow(`${to} is not in lethe's model table: assuming a ${window(next.contextWindow)} (start with --context-window to set it)`));
  const controller = (repl.controller = new AbortController());
  const shrinking = next.contextWindow < session.engine.contextWindow;
  if (shrinking) spinner.start(`${to} has a ${window(next.contextWindow)}, smaller than ${session.model}'s ${fmt(session.engine.contextWindow)}: compacting with ${session.model} first…`);
  try {
    const r = await switchModel(session, to, next, session.model, controller.signal);
    spinner.stop();
    print(`${switchLine(r)[0]!.toUpperCase()}${switchLine(r).slice(1)}`);
  } catch (e) {
    print(controller.signal.aborted ? s.yellow(`Switch cancelled: still ${session.model}.`) : s.red(`${errorLine(e)} (still ${session.model})`));
  } finally {
    spinner.stop();
    repl.controller = undefined;
  }
};

const COMMANDS: Record<string, Command> = {
  exit,
  quit: exit,
  help: ({ print }) => print(HELP),
  clear,
  memory: ({ cfg, s, session, print }) => print(memoryReport(session.instructions, session.instructionTokens, cfg.workspace, s)),
  init,
  context: ({ s, session, print }) => print(contextChart(session.breakdown(), s)),
  cost: ({ cfg, s, session, print }) => print(costReport(session.usageByModel, (m) => priceOf(m, cfg.pricing), s)),
  resume,
  compact,
  uncompact,
  model,
};

/** Runs a slash command line ("/name arguments…"); resolves false when the session should end. */
export async function runCommand(repl: Repl, line: string): Promise<boolean> {
  const [cmd = ""] = line.slice(1).split(/\s+/);
  const arg = line.slice(1 + cmd.length).trim();
  const handler = Object.hasOwn(COMMANDS, cmd.toLowerCase()) ? COMMANDS[cmd.toLowerCase()]! : undefined;
  if (!handler) {
    repl.print(repl.s.red(`unknown command /${cmd}; /help lists the commands`));
    return true;
  }
  return (await handler(repl, arg)) !== false;
}
