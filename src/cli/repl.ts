// The interactive REPL (node:readline; works in a real terminal and on a pipe).
//
// Keys: Enter sends; Ctrl-C during a turn cancels that turn (the session goes on); Ctrl-C on
// an empty prompt twice, or Ctrl-D, exits. Lines typed while a turn runs are queued.
// Commands: /compact [instructions], /context, /cost, /clear, /resume [id], /help, /exit.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { initPrompt } from "../agent/instructions.ts";
import { type InputFront, appendHistory, attachInput, completeCommand, fromHistoryLine, historyPath, loadHistory, toHistoryLine } from "./input.ts";
import type { ModelClient } from "../model/types.ts";
import { listSessions } from "../session/paths.ts";
import type { CliArgs } from "./args.ts";
import type { RunConfig } from "./config.ts";
import { errorLine, oneLine, redact } from "./errors.ts";
import { priceOf, formatUsd } from "./pricing.ts";
import { COLOR, coloredDiff, contextChart, displayPath, memoryReport, costReport, createSpinner, fmt, recentExchanges, sessionList, statusLine, styleFor } from "./render.ts";
import { MarkdownStream, createRenderer } from "./markdown.ts";
import { AgentSession, createClient } from "./session.ts";
import { type EventView, createEventView } from "./repl-events.ts";

export interface ReplIO {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

export const HELP = `Commands:
  /compact [instructions]  summarise the conversation now; instructions say what to keep
  /context                 where the context's tokens go, and how far auto-compact is
  /cost                    tokens and $ of this session (prompt-cache pricing)
  /clear                   start a new, empty session
  /resume [id]             list this workspace's sessions, or switch to one
  /memory                  the project instructions (AGENTS.md, CLAUDE.md) in the system prompt
  /init                    let the model write (or improve) AGENTS.md for this repository
  /help                    this help
  /exit                    quit (also Ctrl-D, or Ctrl-C twice)
Ctrl-C while the agent works cancels the current turn; the session goes on.`;

export async function runRepl(cfg: RunConfig, args: CliArgs, version: string, io: ReplIO, client?: ModelClient): Promise<number> {
  const out = io.stdout;
  const s = styleFor(out);
  const spinner = createSpinner(io.stderr.isTTY ? io.stderr : out, s);
  const print = (text = "") => {
    spinner.stop();
    out.write(`${text}\n`);
  };

  let rl!: Interface;
  /** A turn is running: its events may print. */
  let live = false;
  // Markdown on a terminal (laid out without colour under NO_COLOR); raw text on a pipe.
  const md = out.isTTY ? new MarkdownStream(createRenderer({ color: s === COLOR, width: Math.min(out.columns || 100, 120) }), (t) => {
    spinner.stop();
    out.write(t);
    view.atLineStart();
  }) : undefined;
  // The event view (below) knows whether streamed text left the cursor mid-line.
  const endLine = () => view.endLine();
  let front: InputFront | undefined;
  let pending: string[] = [];
  const PROMPT = s.bold("> ");
  const CONTINUE = s.dim("… ");
  let busy = false;
  let controller: AbortController | undefined;
  let lastSigint = 0;
  const queue: string[] = [];

  /** A y/n question during a turn; resolves false when the turn is cancelled. */
  const ask = (question: string, signal?: AbortSignal): Promise<string> =>
    new Promise((resolve) => {
      spinner.stop();
      endLine();
      if (signal?.aborted) return resolve("");
      const onAbort = () => resolve("");
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        rl.question(question, signal ? { signal } : {}, (answer) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(answer.trim().toLowerCase());
        });
      } catch {
        resolve(""); // the input is closed (end of piped input): no answer means no
      }
    });

  /**
   * A single-key answer (y / n / a) on a terminal: readline's own key handling steps aside for that
   * key, so nothing lands in the input line. "\x03" for Ctrl-C; Esc and Enter mean no. On a pipe,
   * a line is read instead.
   */
  const askKey = (question: string, signal?: AbortSignal): Promise<string> =>
    new Promise((resolve) => {
      spinner.stop();
      endLine();
      if (signal?.aborted) return resolve("\x03");
      if (!(rl as unknown as { terminal: boolean }).terminal) {
        void ask(question, signal).then((a) => resolve(signal?.aborted ? "\x03" : (a[0] ?? "n")));
        return;
      }
      const input = io.stdin;
      out.write(question);
      const saved = input.listeners("keypress") as ((...a: unknown[]) => void)[];
      input.removeAllListeners("keypress");
      const finish = (k: string) => {
        input.off("keypress", onKey);
        signal?.removeEventListener("abort", onAbort);
        for (const l of saved) input.on("keypress", l);
        resolve(k);
      };
      const onKey = (str: string | undefined, key: { name?: string; ctrl?: boolean } | undefined) => {
        if (key?.ctrl && key.name === "c") return finish("\x03");
        const c = (str ?? "").toLowerCase();
        if (c === "y" || c === "n" || c === "a") return finish(c);
        if (key?.name === "escape" || key?.name === "return" || key?.name === "enter") return finish("n");
      };
      const onAbort = () => finish("\x03");
      signal?.addEventListener("abort", onAbort, { once: true });
      input.on("keypress", onKey);
    });

  const view: EventView = createEventView({ out, spinner, s, cfg, print, md, live: () => live });
  const onEvent = view.onEvent;

  const session = new AgentSession(
    cfg,
    {
      onEvent,
      onWarning: (m) => print(s.yellow(`warning: ${redact(m)}`)),
      // Only what the permission policy answers "ask" reaches this question.
      askPermission: async ({ tool, summary, detail, input, reason }) => {
        if (detail) print(tool === "edit_file" ? coloredDiff(detail, s) : s.dim(detail.split("\n").slice(0, 40).join("\n")));
        if (reason) print(s.yellow(`asking because ${reason}`));
        const always = session.alwaysRules(tool, input).join(" ");
        const k = await askKey(`${s.bold(`Allow ${tool}?`)} ${oneLine(summary, 200)}  ${s.dim(`[y] yes  [n] no${always ? `  [a] always: ${always}` : ""}`)} `, controller?.signal);
        if (k === "\x03") {
          out.write(s.yellow("interrupted\n"));
          controller?.abort();
          return "Not run: the user interrupted (Ctrl-C) at the permission prompt; the command was not run.";
        }
        const yes = k === "y" || (k === "a" && always !== "");
        out.write(`${k === "y" ? "yes" : yes ? "always" : "no"}\n`);
        if (k === "a" && yes) print(s.dim(`allowed for this session: ${session.allowAlways(tool, input)}`));
        return yes;
      },
      onCompactSuggested: async ({ tokens, threshold, full }) => {
        const a = await ask(
          `${s.yellow(full ? `The context (${fmt(tokens)} tokens) no longer fits.` : `The context (${fmt(tokens)} tokens) is over the auto-compact threshold (${fmt(threshold)}).`)} Compact now? [Y/n] `,
          controller?.signal,
        );
        return a === "" ? !controller?.signal.aborted : a === "y" || a === "yes";
      },
    },
    client ?? (await createClient(cfg)),
  );

  session.start({ ...(args.resume !== undefined ? { resume: args.resume } : {}), continueLatest: args.continue });

  const banner = () => {
    const b = session.breakdown();
    print(`${s.bold(`lethe ${version}`)} · ${cfg.model} (${cfg.provider}${cfg.baseUrl ? ` at ${redact(cfg.baseUrl)}` : ""}) · window ${fmt(cfg.contextWindow)} · auto-compact ${cfg.autoCompact}${cfg.autoCompact !== "off" ? ` at ${fmt(b.threshold)}` : ""}${cfg.policy.mode !== "default" ? ` · permissions ${cfg.policy.mode}` : ""}`);
    print(s.dim(`session ${session.id}${session.history.length ? ` (resumed: ${session.history.length} messages)` : ""} · ${cfg.workspace} · /help for commands`));
    const files = session.instructions.files;
    if (files.length) print(s.dim(`project instructions: ${files.map((f) => displayPath(f.path, cfg.workspace)).join(", ")} (${fmt(session.instructionTokens)} tokens; /memory shows them)`));
    for (const w of [...session.instructions.warnings, ...session.loadWarnings]) print(s.yellow(`warning: ${w}`));
    if (session.history.length) {
      const recent = recentExchanges(session.history, 3, s);
      if (recent) print(recent);
    }
  };

  const runTurn = async (prompt: string) => {
    controller = new AbortController();
    live = true;
    try {
      const r = await session.run(prompt, controller.signal);
      md?.flush();
      endLine();
      spinner.stop();
      if (r.stop === "aborted") print(s.yellow("Interrupted. The turn was cancelled; the session goes on."));
      else if (r.stop === "max_turns") print(s.yellow(`Stopped after ${r.turns} turns (--max-turns).`));
      else if (r.stop === "max_tokens") print(s.yellow("The reply was cut off by the output token limit."));
      else if (r.stop === "refusal") print(s.yellow("The model declined this request (refusal). It was taken out of the context; the session goes on."));
      print(statusLine(session.breakdown(), session.cost(), s));
    } catch (e) {
      md?.flush();
      endLine();
      spinner.stop();
      print(s.red(errorLine(e)));
    } finally {
      // Anything the cancelled turn still emits from now on is dropped: it would land on the prompt line.
      live = false;
      controller = undefined;
    }
  };

  const command = async (line: string): Promise<boolean> => {
    const [cmd = "", ...rest] = line.slice(1).split(/\s+/);
    const argText = line.slice(1 + cmd.length).trim();
    switch (cmd.toLowerCase()) {
      case "exit":
      case "quit":
        return false;
      case "help":
        print(HELP);
        break;
      case "clear":
        if (out.isTTY) out.write("\x1b[2J\x1b[3J\x1b[H");
        session.clear();
        view.resetNearWarning();
        print(`New session ${session.id}.`);
        break;
      case "memory":
        print(memoryReport(session.instructions, session.instructionTokens, cfg.workspace, s));
        break;
      case "init": {
        const exists = existsSync(join(cfg.workspace, "AGENTS.md"));
        print(s.dim(exists ? "AGENTS.md exists: asking the model to improve it…" : "Asking the model to explore the repository and write AGENTS.md…"));
        await runTurn(initPrompt(exists));
        const loaded = session.reloadInstructions();
        print(s.dim(`project instructions reloaded: ${loaded.files.length} file(s), ${fmt(session.instructionTokens)} tokens, in the system prompt from the next request on.`));
        break;
      }
      case "context":
        print(contextChart(session.breakdown(), s));
        break;
      case "cost":
        print(costReport(session.usageByModel, (m) => priceOf(m, cfg.pricing), s));
        break;
      case "resume":
        if (rest.length === 0 || !argText) {
          print(sessionList(listSessions(cfg.workspace), session.id, s));
        } else {
          try {
            session.switchTo(argText);
            view.resetNearWarning();
            print(`Resumed session ${session.id} (${session.history.length} messages in context).`);
            const recent = recentExchanges(session.history, 3, s);
            if (recent) print(recent);
            for (const w of session.loadWarnings) print(s.yellow(`warning: ${w}`));
          } catch (e) {
            print(s.red(errorLine(e)));
          }
        }
        break;
      case "compact": {
        if (session.history.length === 0) {
          print("Nothing to compact yet.");
          break;
        }
        controller = new AbortController();
        spinner.start(`compacting (manual)${argText ? `: ${oneLine(argText, 60)}` : ""}…`);
        try {
          const records = await session.compact(argText || undefined, controller.signal);
          if (records.length === 0 && !session.lastCompactSkipped) print("Nothing was compacted.");
        } catch (e) {
          print(controller.signal.aborted ? s.yellow("Compaction cancelled.") : s.red(errorLine(e)));
        } finally {
          spinner.stop();
          controller = undefined;
        }
        break;
      }
      default:
        print(s.red(`unknown command /${cmd}; /help lists the commands`));
    }
    return true;
  };

  return new Promise<number>((resolveExit) => {
    let closed = false;
    const finish = (code: number) => {
      if (closed) return;
      closed = true;
      spinner.stop();
      front?.detach();
      session.close();
      rl.close();
      resolveExit(code);
    };

    const terminal = !!io.stdin.isTTY && !!out.isTTY;
    const histFile = historyPath(cfg.home ?? homedir(), cfg.workspace);
    rl = createInterface({
      input: io.stdin,
      output: out,
      terminal,
      prompt: PROMPT,
      historySize: 1000,
      removeHistoryDuplicates: true,
      history: loadHistory(histFile).map(toHistoryLine),
      completer: (line: string) => completeCommand(line),
    });
    front = terminal ? attachInput(rl, io.stdin, out) : undefined;

    const handle = async (raw: string) => {
      const line = raw.trim();
      // A slash command is one line; a message may span several.
      if (line === "") return true;
      if (line.startsWith("/")) return command(line);
      await runTurn(line);
      return true;
    };

    const drain = async () => {
      while (queue.length > 0 && !closed) {
        const next = queue.shift()!;
        busy = true;
        const goOn = await handle(next);
        busy = false;
        if (!goOn) return finish(0);
      }
      if (!closed) rl.prompt();
    };

    rl.on("line", (raw) => {
      // A line ending in "\" goes on (multi-line input; Alt/Shift+Enter end a line so too).
      if (raw.endsWith("\\")) {
        pending.push(raw.slice(0, -1));
        rl.setPrompt(CONTINUE);
        rl.prompt();
        return;
      }
      const parts = [...pending, raw];
      pending = [];
      rl.setPrompt(PROMPT);
      const text = fromHistoryLine(front ? front.expand(parts.join("\n")) : parts.join("\n"));
      if (text.trim()) {
        // One history entry per message (readline added one per physical line).
        const h = (rl as unknown as { history: string[] }).history;
        if (Array.isArray(h)) {
          const drop = new Set(parts);
          for (let i = h.length - 1; i >= 0; i--) if (drop.has(h[i]!) || drop.has(`${h[i]}\\`)) h.splice(i, 1);
          h.unshift(toHistoryLine(text));
        }
        appendHistory(histFile, text);
      }
      queue.push(text);
      if (!busy) void drain();
    });

    rl.on("SIGINT", () => {
      if (busy && controller) {
        if (!controller.signal.aborted) {
          spinner.stop();
          endLine();
          out.write(s.yellow("^C cancelling…\n"));
          controller.abort();
        }
        queue.length = 0;
        return;
      }
      const now = Date.now();
      if (rl.line.length > 0) {
        // Clear what was typed, like a shell.
        (rl as unknown as { line: string }).line = "";
        out.write("^C\n");
        rl.prompt();
        lastSigint = 0;
        return;
      }
      if (now - lastSigint < 3000) {
        out.write("\n");
        return finish(0);
      }
      lastSigint = now;
      out.write(s.dim("\n(press Ctrl-C again to exit, or type /exit)\n"));
      rl.prompt();
    });

    rl.on("close", () => {
      if (closed) return;
      // Ctrl-D in a terminal: cancel a running turn, then leave. The end of piped input: finish
      // what was queued first.
      const tty = !!io.stdin.isTTY;
      if (tty) {
        if (busy && controller) controller.abort();
        queue.length = 0;
        out.write("\n");
      }
      const wait = () => (busy || queue.length > 0 ? setTimeout(wait, 20) : finish(0));
      wait();
    });

    banner();
    const first = args.positional.join(" ").trim();
    if (first) queue.push(first);
    if (queue.length > 0) void drain();
    else rl.prompt();
  });
}
