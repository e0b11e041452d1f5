// What the REPL's parts share: the output (spinner, Markdown writer, event view), the session,
// the readline interface, and the turn that runs now (whose events may print, and which Ctrl-C
// cancels).
import type { Interface } from "node:readline";
import type { RunConfig } from "../config.ts";
import type { PermissionMode } from "../permissions.ts";
import { MarkdownStream, type Render, createRenderer } from "../markdown.ts";
import { COLOR, type Spinner, type Style, createSpinner, styleFor } from "../render.ts";
import { type EventView, createEventView } from "../repl-events.ts";
import type { AgentSession } from "../session.ts";

export interface ReplIO {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

export class Repl {
  readonly cfg: RunConfig;
  readonly io: ReplIO;
  readonly out: NodeJS.WriteStream;
  readonly s: Style;
  readonly spinner: Spinner;
  /** Markdown on a terminal (laid out without colour under NO_COLOR); raw text on a pipe. */
  readonly md: MarkdownStream | undefined;
  /** The same rendering for whole texts (a resumed session's last replies); undefined on a pipe. */
  readonly render: Render | undefined;
  /** The mode the session started in: Shift+Tab's cycle holds bypassPermissions only then. */
  readonly startMode: PermissionMode;
  /** A line question (rl.question) is on screen. */
  asking = false;
  /** The session whose user said no to compacting at the threshold (./prompts.ts askCompact). */
  compactDeclined: string | undefined;
  /** The agent's events; it knows whether streamed text left the cursor mid-line. */
  readonly view: EventView;
  /** Stops the spinner and writes a line. */
  readonly print: (text?: string) => void;
  /** Ends a line streamed text left open (before anything else prints). */
  readonly endLine: () => void;
  /** A turn is running: its events may print. */
  live = false;
  /** The running turn's or compaction's: Ctrl-C aborts it. */
  controller: AbortController | undefined;
  /** Set by runRepl right after this is made, before anything runs. */
  session!: AgentSession;
  /** Set by the input loop, before anything is asked. */
  rl!: Interface;

  constructor(cfg: RunConfig, io: ReplIO) {
    const out = io.stdout;
    const s = styleFor(out);
    const spinner = createSpinner(io.stderr.isTTY ? io.stderr : out, s);
    const print = (text = "") => {
      spinner.stop();
      out.write(`${text}\n`);
    };
    const render = out.isTTY ? createRenderer({ color: s === COLOR, width: Math.min(out.columns || 100, 120) }) : undefined;
    const md = render
      ? new MarkdownStream(render, (t) => {
          spinner.stop();
          out.write(t);
          this.view.atLineStart();
        })
      : undefined;
    this.cfg = cfg;
    this.io = io;
    this.out = out;
    this.s = s;
    this.spinner = spinner;
    this.print = print;
    this.md = md;
    this.render = render;
    this.startMode = cfg.policy.mode;
    // Ctrl+O expands a collapsed output only where keys are read one by one: a terminal.
    this.view = createEventView({ out, spinner, s, cfg, print, md, live: () => this.live, expandKey: !!io.stdin.isTTY && !!out.isTTY });
    this.endLine = () => this.view.endLine();
  }
}
