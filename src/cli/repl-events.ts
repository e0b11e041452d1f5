// How the agent's events look in the REPL: the spinner's label, streamed text (Markdown on a
// terminal), one line per tool call and result, compaction and retry notices. It owns whether
// streamed text left the cursor mid-line, which the REPL's questions need to know too.
import type { AgentEvent } from "../agent/loop.ts";
import { resultPlainText } from "../messages/blocks.ts";
import type { ToolResultBlock } from "../messages/types.ts";
import type { RunConfig } from "./config.ts";
import { oneLine, redact } from "./errors.ts";
import type { MarkdownStream } from "./markdown.ts";
import { type Spinner, type Style, coloredDiff, compactionNotice, fmt, nearNotice, windowNotice } from "./render.ts";

/** The near-auto-compact warning shows from this share of the threshold. */
const NEAR_SHARE = 0.8;

/** A tool call on one line: its name and its main argument. */
export function describeUse(name: string, input: unknown): string {
  const i = (input ?? {}) as Record<string, unknown>;
  const main = i.command ?? i.path ?? i.file_path ?? i.pattern ?? i.query ?? i.description ?? i.id ?? i.focus;
  return typeof main === "string" ? `${name}(${oneLine(main, 100)})` : name;
}

export interface EventView {
  onEvent(e: AgentEvent): void;
  /** Ends a line streamed text left open (before anything else prints). */
  endLine(): void;
  /** The cursor is at a line start (the Markdown writer just wrote whole lines). */
  atLineStart(): void;
  /** Warn again on the next approach to the threshold (a new or resumed session). */
  resetNearWarning(): void;
  /** The last tool output shown collapsed (one line of many), for Ctrl+O. */
  lastCollapsed(): CollapsedOutput | undefined;
}

/** A tool output the REPL showed as one line: the call, and all of its text. */
export interface CollapsedOutput {
  title: string;
  text: string;
  lines: number;
}

export function createEventView(o: {
  out: NodeJS.WriteStream;
  spinner: Spinner;
  s: Style;
  cfg: RunConfig;
  print: (text?: string) => void;
  md: MarkdownStream | undefined;
  /** A turn is running: only then do its events print. */
  live: () => boolean;
  /** Ctrl+O can expand a collapsed output (a terminal): the collapsed line says so. */
  expandKey?: boolean;
}): EventView {
  const { out, spinner, s, cfg, print, md } = o;
  let midLine = false;
  let nearWarned = false;
  let collapsed: CollapsedOutput | undefined;
  const endLine = () => {
    if (midLine) {
      out.write("\n");
      midLine = false;
    }
  };
  const onEvent = (e: AgentEvent) => {
    if (!o.live() && (e.type === "stream" || e.type === "tool" || e.type === "tool_result" || e.type === "request" || e.type === "response")) return;
    switch (e.type) {
      case "request": {
        // Warn once per approach: from NEAR_SHARE of the threshold (or past it, when auto-compact is off).
        const share = e.tokens / e.threshold;
        if (share >= NEAR_SHARE && (share < 1 || cfg.autoCompact === "off") && !nearWarned) {
          nearWarned = true;
          endLine();
          print(s.yellow(`⚠ ${nearNotice(e.tokens, e.threshold)}${cfg.autoCompact === "off" ? " (auto-compact is off)" : ""}`));
        } else if (share < NEAR_SHARE) nearWarned = false;
        if (!midLine) spinner.start(`thinking (${fmt(e.tokens)} tokens in context)`);
        break;
      }
      case "stream":
        if (e.event.type === "text") {
          if (md) {
            // Whole blocks only: the spinner keeps turning while a block is still being written.
            md.push(e.event.text);
            if (md.pending) spinner.label("writing…");
          } else {
            spinner.stop();
            out.write(e.event.text);
            midLine = !e.event.text.endsWith("\n");
          }
        } else if (e.event.type === "tool_use") {
          spinner.label(`preparing ${e.event.name}…`);
        }
        break;
      case "response":
        md?.flush();
        endLine();
        break;
      case "tool":
        md?.flush();
        endLine();
        print(s.cyan(`● ${describeUse(e.use.name, e.use.input)}`));
        spinner.start(`running ${e.use.name}…`);
        break;
      case "tool_result": {
        const shown = toolResultLines(e.result, s, o.expandKey ? " (ctrl+o to expand)" : "");
        if (shown.collapsed) collapsed = { title: describeUse(e.use.name, e.use.input), ...shown.collapsed };
        for (const l of shown.lines) print(l);
        break;
      }
      case "compacting":
        endLine();
        spinner.start(e.kind === "summarize" ? "compacting the context…" : `compacting (${e.kind})…`);
        break;
      case "compaction": {
        const notice = compactionLine(e, s);
        if (notice !== undefined) print(notice);
        break;
      }
      case "retry":
        endLine();
        print(s.dim(`(${redact(oneLine(e.error.message, 120))}; retry ${e.attempt} in ${(e.delayMs / 1000).toFixed(1)}s)`));
        break;
      case "fallback":
        print(s.yellow(`switched to the fallback model ${e.to} (${e.from} is overloaded)`));
        break;
      case "continuation":
        // The parts of a reply cut off go on printing; one cut because the window filled up starts on a line of its own.
        if (e.reason === "context_window") endLine();
        spinner.start(e.reason === "context_window" ? "continuing (the context window filled up; compacting)…" : "continuing (reply hit the output limit)…");
        break;
      case "subagent":
        if (e.phase === "start") {
          print(s.dim(`  ↳ subagent ${e.id}${e.description ? `: ${e.description}` : ""}`));
          spinner.start(`subagent ${e.description ?? e.id}…`);
        }
        break;
      case "subagent_event": {
        // Progress of a subagent: which tool it runs now (its messages stay out of this terminal).
        const inner = e.event;
        if (inner.type === "tool") spinner.label(`subagent › ${describeUse(inner.use.name, inner.use.input)}`);
        else if (inner.type === "request") spinner.label(`subagent › thinking (${fmt(inner.tokens)} tokens in its context)`);
        break;
      }
      default:
        break;
    }
  };
  return { onEvent, endLine, atLineStart: () => void (midLine = false), resetNearWarning: () => void (nearWarned = false), lastCollapsed: () => collapsed };
}

/**
 * A tool result: one line (the first of its text, or its error), and an edit's diff under it.
 * `collapsed` is set when lines were left out (`hint` says how to see them).
 */
function toolResultLines(result: ToolResultBlock, s: Style, hint: string): { lines: string[]; collapsed?: { text: string; lines: number } } {
  // A command's output ends with a newline: that is not one more line.
  const text = resultPlainText(result.content).replace(/\n+$/, "");
  const all = text.split("\n");
  const lines = text === "" ? 0 : all.length;
  const first = oneLine(all[0] ?? "", 100);
  const isDiff = !result.is_error && /^Edited /.test(text) && lines > 1;
  const rest = lines > 1 && !isDiff ? ` … ${fmt(lines - 1)} more line${lines === 2 ? "" : "s"}${hint}` : "";
  const out = [s.dim(`  ⎿ ${result.is_error ? s.red(first || "error") : first}${rest}`)];
  if (isDiff) out.push(coloredDiff(all.slice(1).join("\n"), s, DIFF_LINES, hint).replace(/^/gm, "    "));
  const cut = rest !== "" || (isDiff && lines - 1 > DIFF_LINES);
  return { lines: out, ...(cut ? { collapsed: { text, lines } } : {}) };
}

/** An edit's diff shows this many lines; Ctrl+O shows the rest. */
const DIFF_LINES = 40;

/** The notice of a compaction event, or undefined for one the REPL does not show. */
function compactionLine(e: Extract<AgentEvent, { type: "compaction" }>, s: Style): string | undefined {
  if (e.record) return s.yellow(compactionNotice(e.record));
  if (e.event.kind === "summary_failed") return s.red(`summary failed: ${oneLine(e.event.error, 200)}${e.event.breakerOpen ? " (digest from now on)" : ""}`);
  if (e.event.kind === "compact_skipped") return s.yellow(`Not compacted: ${e.event.reason ?? "it would not make the context smaller"}; the history is kept as it is.`);
  if (e.event.kind === "compact_blocked") return s.yellow(`compaction blocked by a hook: ${e.event.reason ?? ""}`);
  if (e.event.kind === "window_learned") return s.yellow(windowNotice(e.event));
  return undefined;
}
