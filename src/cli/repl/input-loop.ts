// The REPL's input loop (node:readline; works in a real terminal and on a pipe). Enter sends; a
// line ending in "\" goes on. Lines typed while a turn runs are queued. Ctrl-C during a turn
// cancels it; on a line it clears the line; on an empty prompt twice (or Ctrl-D) it exits.
import { homedir } from "node:os";
import { createInterface } from "node:readline";
import { type InputFront, appendHistory, attachInput, completeCommand, fromHistoryLine, historyPath, loadHistory, toHistoryLine } from "../input.ts";
import { runCommand } from "./commands.ts";
import { handleShortcut } from "./shortcuts.ts";
import type { Repl } from "./state.ts";
import { runTurn } from "./turn.ts";
import { errorLine } from "../errors.ts";
import { releaseStartupInput } from "../startup-input.ts";

/** A line waiting for its turn; `echo`: it was typed while a turn ran, so no prompt line shows it yet. */
interface Queued {
  text: string;
  echo: boolean;
}

/** The loop's own state, beside the REPL's. */
interface Loop {
  repl: Repl;
  front: InputFront | undefined;
  histFile: string;
  /** Lines waiting for the running turn to end. */
  queue: Queued[];
  /** The lines so far of a message continued with "\". */
  pending: string[];
  busy: boolean;
  closed: boolean;
  /** When Ctrl-C was last pressed on an empty prompt. */
  lastSigint: number;
  prompt: string;
  continuePrompt: string;
  finish(code: number): void;
}

/**
 * Reads input until the session ends (/exit, Ctrl-C twice, Ctrl-D, the end of piped input);
 * resolves with the exit code. `ready` runs once the input is set up, before `first` (the prompt
 * from the command line, if any) runs or the prompt shows.
 */
export function runInputLoop(repl: Repl, first: string, ready: () => void): Promise<number> {
  return new Promise<number>((resolveExit) => {
    const { cfg, io, out, s } = repl;
    const terminal = !!io.stdin.isTTY && !!out.isTTY;
    const loop: Loop = {
      repl,
      front: undefined,
      histFile: historyPath(cfg.home ?? homedir(), cfg.workspace),
      queue: [],
      pending: [],
      busy: false,
      closed: false,
      lastSigint: 0,
      prompt: s.bold("> "),
      continuePrompt: s.dim("… "),
      finish: (code) => {
        if (loop.closed) return;
        loop.closed = true;
        repl.spinner.stop();
        loop.front?.detach();
        // On a store, what is still queued is written before the REPL exits.
        void repl.session
          .end()
          .catch((e) => out.write(`${errorLine(e)}\n`))
          .finally(() => {
            repl.rl.close();
            resolveExit(code);
          });
      },
    };
    // The keys typed while lethe started (held back, unechoed) go to readline now.
    releaseStartupInput();
    const rl = (repl.rl = createInterface({
      input: io.stdin,
      output: out,
      terminal,
      prompt: loop.prompt,
      historySize: 1000,
      removeHistoryDuplicates: true,
      history: loadHistory(loop.histFile).map(toHistoryLine),
      completer: (line: string) => completeCommand(line),
    }));
    // The prompt (or a question) is on screen unless a turn runs: what a key prints goes above it.
    loop.front = terminal ? attachInput(rl, io.stdin, out, (key) => handleShortcut(repl, key, !loop.busy || repl.asking)) : undefined;
    rl.on("line", (raw) => onLine(loop, raw));
    rl.on("SIGINT", () => onSigint(loop));
    rl.on("close", () => onClose(loop));
    ready();
    if (first) loop.queue.push({ text: first, echo: false });
    if (loop.queue.length > 0) void drain(loop);
    else rl.prompt();
  });
}

/** A slash command is one line; a message may span several. Resolves false when the session should end. */
async function handle(repl: Repl, raw: string): Promise<boolean> {
  const line = raw.trim();
  if (line === "") return true;
  if (line.startsWith("/")) return runCommand(repl, line);
  await runTurn(repl, line);
  return true;
}

/** Runs the queued lines one after the other, then shows the prompt. */
async function drain(loop: Loop): Promise<void> {
  while (loop.queue.length > 0 && !loop.closed) {
    const next = loop.queue.shift()!;
    loop.busy = true;
    // A line typed ahead (during a turn, or right after answering a question) shows as a prompt when its turn comes.
    if (next.echo && next.text.trim()) loop.repl.print(`${loop.prompt}${next.text.split("\n").join(`\n${loop.continuePrompt}`)}`);
    const goOn = await handle(loop.repl, next.text);
    loop.busy = false;
    if (!goOn) return loop.finish(0);
  }
  // The cursor stays at the end of what was typed ahead (if anything) during the turn.
  if (!loop.closed) loop.repl.rl.prompt(true);
}

function onLine(loop: Loop, raw: string): void {
  const { rl } = loop.repl;
  // A line ending in "\" goes on (multi-line input; Alt/Shift+Enter end a line so too).
  if (raw.endsWith("\\")) {
    loop.pending.push(raw.slice(0, -1));
    rl.setPrompt(loop.continuePrompt);
    rl.prompt();
    return;
  }
  const parts = [...loop.pending, raw];
  loop.pending = [];
  rl.setPrompt(loop.prompt);
  const text = fromHistoryLine(loop.front ? loop.front.expand(parts.join("\n")) : parts.join("\n"));
  if (text.trim()) {
    // One history entry per message (readline added one per physical line).
    const h = (rl as unknown as { history: string[] }).history;
    if (Array.isArray(h)) {
      const drop = new Set(parts);
      for (let i = h.length - 1; i >= 0; i--) if (drop.has(h[i]!) || drop.has(`${h[i]}\\`)) h.splice(i, 1);
      h.unshift(toHistoryLine(text));
    }
    appendHistory(loop.histFile, text);
  }
  // On a terminal only: a pipe's lines are never shown (nor is the first one).
  loop.queue.push({ text, echo: loop.busy && loop.front !== undefined });
  if (!loop.busy) void drain(loop);
}

function onSigint(loop: Loop): void {
  const { rl, out, s, spinner, controller } = loop.repl;
  if (loop.busy && controller) {
    if (!controller.signal.aborted) {
      spinner.stop();
      loop.repl.endLine();
      out.write(s.yellow("^C cancelling…\n"));
      controller.abort();
    }
    loop.queue.length = 0;
    return;
  }
  const now = Date.now();
  if (rl.line.length > 0) {
    // Clear what was typed, like a shell.
    (rl as unknown as { line: string }).line = "";
    out.write("^C\n");
    rl.prompt();
    loop.lastSigint = 0;
    return;
  }
  if (now - loop.lastSigint < 3000) {
    out.write("\n");
    return loop.finish(0);
  }
  loop.lastSigint = now;
  out.write(s.dim("\n(press Ctrl-C again to exit, or type /exit)\n"));
  rl.prompt();
}

function onClose(loop: Loop): void {
  if (loop.closed) return;
  // Ctrl-D in a terminal: cancel a running turn, then leave. The end of piped input: finish
  // what was queued first.
  if (loop.repl.io.stdin.isTTY) {
    if (loop.busy && loop.repl.controller) loop.repl.controller.abort();
    loop.queue.length = 0;
    loop.repl.out.write("\n");
  }
  const wait = () => (loop.busy || loop.queue.length > 0 ? setTimeout(wait, 20) : loop.finish(0));
  wait();
}
