// What the CLI shows: notices, the /context bar chart, /cost, /memory, the session list, the spinner.
// Pure string builders except the spinner, which writes to a TTY stream (never to headless stdout).
import { homedir } from "node:os";
import { join, relative } from "node:path";
import type { LoadedInstructions } from "../agent/instructions.ts";
import type { CompactionRecord } from "../agent/loop.ts";
import type { WindowLearnedEvent } from "../compaction/types.ts";
import { isLetheText } from "../compaction/state/tags.ts";
import type { SessionSummary } from "../session/paths.ts";
import type { ContextBreakdown } from "./context-breakdown.ts";
import type { FullUsage } from "./usage.ts";
import { type Pricing } from "./settings.ts";
import { costOf, formatUsd } from "./pricing.ts";

export const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

export interface Style {
  dim(s: string): string;
  bold(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  green(s: string): string;
  cyan(s: string): string;
}

const wrap = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;
export const COLOR: Style = { dim: wrap(2, 22), bold: wrap(1, 22), red: wrap(31, 39), yellow: wrap(33, 39), green: wrap(32, 39), cyan: wrap(36, 39) };
const id = (s: string) => s;
export const PLAIN: Style = { dim: id, bold: id, red: id, yellow: id, green: id, cyan: id };

export function styleFor(stream: NodeJS.WriteStream, env: Record<string, string | undefined> = process.env): Style {
  return stream.isTTY && !env.NO_COLOR && env.TERM !== "dumb" ? COLOR : PLAIN;
}

/** "compacted (summarize): 123,456 → 23,456 tokens" */
export function compactionNotice(r: CompactionRecord): string {
  const kind = r.kind === "subagent" && r.subagent_kind ? `subagent ${r.subagent_kind}` : r.kind;
  return `compacted (${kind}): ${fmt(r.tokens_before)} → ${fmt(r.tokens_after)} tokens`;
}

export function nearNotice(tokens: number, threshold: number): string {
  const pct = Math.floor((tokens / threshold) * 100);
  return `context at ${fmt(tokens)} tokens, ${pct}% of the auto-compact threshold (${fmt(threshold)}); /compact [instructions] to compact now with a focus`;
}

const BAR = 50;

/**
 * The /context chart: the window as one bar (used, free, where auto-compact fires), then one bar
 * per category, scaled to what is used, with tokens and shares of the window.
 */
export function contextChart(b: ContextBreakdown, s: Style = PLAIN): string {
  const lines: string[] = [];
  const pct = (n: number, of: number) => `${((n / Math.max(1, of)) * 100).toFixed(1)}%`;
  lines.push(s.bold(`Context: ${fmt(b.measured)} of ${fmt(b.window)} tokens (${pct(b.measured, b.window)} of the window), ${b.messages} messages`));
  // The window bar: █ used, ░ free, │ the auto-compact threshold.
  const used = b.measured > 0 ? Math.min(BAR, Math.max(1, Math.round((b.measured / b.window) * BAR))) : 0;
  const at = Math.min(BAR - 1, Math.max(0, Math.round((b.threshold / b.window) * BAR)));
  let bar = "";
  for (let i = 0; i < BAR; i++) bar += i === at ? "│" : i < used ? "█" : "░";
  lines.push(`  [${bar}]  │ = auto-compact at ${fmt(b.threshold)}`);
  const width = Math.max(...b.categories.map((c) => c.name.length)) + 2;
  const total = Math.max(1, b.categories.reduce((a, c) => a + c.tokens, 0));
  for (const c of b.categories) {
    const n = c.tokens > 0 ? Math.max(1, Math.round((c.tokens / total) * 30)) : 0;
    const catBar = "█".repeat(n).padEnd(30, " ");
    lines.push(`  ${c.name.padEnd(width)}${catBar} ${fmt(c.tokens).padStart(9)}  ${pct(c.tokens, total).padStart(6)} of used`);
  }
  lines.push(s.dim(`  ${"free".padEnd(width)}${"".padEnd(30)} ${fmt(Math.max(0, b.window - b.measured)).padStart(9)}`));
  const to = b.threshold - b.measured;
  if (b.autoCompact === "off") lines.push(`Auto-compact is off (threshold ${fmt(b.threshold)}): ${to > 0 ? `${fmt(to)} tokens below it` : `${fmt(-to)} tokens over it`}. /compact compacts now.`);
  else if (to > 0) lines.push(`Auto-compact${b.autoCompact === "ask" ? " (ask)" : ""} in ${fmt(to)} tokens: ${pct(b.measured, b.threshold)} of the threshold used.`);
  else if (b.autoCompact === "ask") lines.push(s.yellow(`Over the auto-compact threshold by ${fmt(-to)} tokens: lethe asks before compacting (once when the threshold is crossed, again when the window is full). /compact compacts now.`));
  else lines.push(s.yellow(`Over the auto-compact threshold by ${fmt(-to)} tokens: the next request compacts.`));
  if (Math.abs(b.measured - b.estimate) > 0.01 * b.estimate) lines.push(s.dim(`(the categories are estimates, ${fmt(b.estimate)} in all; the total is anchored on the provider's last reported usage)`));
  return lines.join("\n");
}

export function costReport(byModel: Map<string, FullUsage>, priceOf: (model: string) => { pricing: Pricing; matched: string } | undefined, s: Style = PLAIN): string {
  if (byModel.size === 0) return "No model calls yet in this session.";
  const lines: string[] = [];
  let total = 0;
  let known = true;
  for (const [model, u] of byModel) {
    const p = priceOf(model);
    lines.push(s.bold(model));
    lines.push(`  input ${fmt(u.input_tokens)} · cache write ${fmt(u.cache_creation_input_tokens)} · cache read ${fmt(u.cache_read_input_tokens)} · output ${fmt(u.output_tokens)} tokens`);
    if (p) {
      const c = costOf(u, p.pricing);
      total += c;
      const q = p.pricing;
      const r = (n: number) => Number(n.toFixed(4));
      lines.push(`  ${formatUsd(c)}  ($ per million tokens: input ${r(q.input)}, cache write ${r(q.cacheWrite ?? q.input)}, cache read ${r(q.cacheRead ?? q.input)}, output ${r(q.output)})`);
    } else {
      known = false;
      lines.push(s.dim(`  price unknown for this model (add it under "pricing" in settings)`));
    }
  }
  const input = [...byModel.values()].reduce((a, u) => a + u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens, 0);
  const read = [...byModel.values()].reduce((a, u) => a + u.cache_read_input_tokens, 0);
  lines.push(`Total: ${known ? formatUsd(total) : `${formatUsd(total)} + unknown`}; ${input > 0 ? Math.round((read / input) * 100) : 0}% of input tokens read from the prompt cache.`);
  return lines.join("\n");
}

export function sessionList(sessions: readonly SessionSummary[], current: string | undefined, s: Style = PLAIN): string {
  if (sessions.length === 0) return "No sessions in this workspace yet.";
  const lines = ["Sessions (newest first); /resume <id> switches (a unique prefix of the id is enough):"];
  for (const x of sessions.slice(0, 20)) {
    const when = x.lastModified.toISOString().replace("T", " ").slice(0, 16);
    const mark = x.id === current ? "*" : " ";
    lines.push(`${mark} ${s.cyan(x.id)}  ${when}  ${String(x.messageCount).padStart(4)} msgs  ${x.preview || s.dim("(empty)")}`);
  }
  if (sessions.length > 20) lines.push(s.dim(`… and ${sessions.length - 20} older`));
  return lines.join("\n");
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface Spinner {
  start(label: string): void;
  /** Changes the label; keeps the elapsed time. */
  label(label: string): void;
  stop(): void;
  readonly active: boolean;
}

/** A spinner with elapsed time on a TTY stream; does nothing on anything else. */
export function createSpinner(stream: NodeJS.WriteStream, s: Style = PLAIN): Spinner {
  let timer: NodeJS.Timeout | undefined;
  let text = "";
  let started = 0;
  let frame = 0;
  const tty = !!stream.isTTY;
  const draw = () => {
    const secs = Math.floor((Date.now() - started) / 1000);
    stream.write(`\r\x1b[2K${s.cyan(FRAMES[frame++ % FRAMES.length]!)} ${text} ${s.dim(`${secs}s · Ctrl-C to cancel`)}`);
  };
  return {
    start(label) {
      text = label;
      if (!tty) return;
      started = Date.now();
      if (timer) return draw();
      frame = 0;
      draw();
      timer = setInterval(draw, 100);
      timer.unref();
    },
    label(label) {
      text = label;
    },
    stop() {
      if (!timer) return;
      clearInterval(timer);
      timer = undefined;
      stream.write("\r\x1b[2K");
    },
    get active() {
      return timer !== undefined;
    },
  };
}

/** A unified diff with removed lines red and added lines green (plain +/- without colour); `hint` follows "… N more lines". */
export function coloredDiff(text: string, s: Style = PLAIN, maxLines = 40, hint = ""): string {
  const lines = text.split("\n");
  const shown = lines.slice(0, maxLines).map((l) => (l.startsWith("@@") ? s.cyan(l) : l.startsWith("+") ? s.green(l) : l.startsWith("-") ? s.red(l) : s.dim(l)));
  if (lines.length > maxLines) shown.push(s.dim(`… ${fmt(lines.length - maxLines)} more lines${hint}`));
  return shown.join("\n");
}

/** The line after each turn: context as a share of the auto-compact threshold, and the session's cost. */
export function statusLine(b: { measured: number; threshold: number; window: number; autoCompact: string }, sessionCost: number | undefined, s: Style = PLAIN): string {
  const pct = Math.round((b.measured / Math.max(1, b.threshold)) * 100);
  const auto = b.autoCompact === "off" ? `auto-compact off (threshold ${fmt(b.threshold)})` : `${pct}% of auto-compact at ${fmt(b.threshold)}`;
  const cost = sessionCost === undefined ? "session cost unknown (no price for this model)" : `session ${formatUsd(sessionCost)}`;
  const text = `[${fmt(b.measured)} / ${fmt(b.window)} tokens in context · ${auto} · ${cost}]`;
  return pct >= 80 && b.autoCompact !== "off" ? s.yellow(text) : s.dim(text);
}

/** A resumed session's replies show this many lines (rendered) at most. */
const REPLY_LINES = 12;

/**
 * The last few exchanges of a resumed session: what the user asked, what the model answered last.
 * With `render` (a terminal), a reply is rendered as live replies are (Markdown), cut at
 * REPLY_LINES lines; without it, a reply is one line of its raw text, as a pipe shows replies.
 */
export function recentExchanges(history: readonly { role: string; content: unknown }[], n = 3, s: Style = PLAIN, render?: (markdown: string) => string): string {
  const textOf = (m: { content: unknown }) =>
    typeof m.content === "string"
      ? m.content
      : Array.isArray(m.content)
        ? (m.content as { type: string; text?: string }[]).filter((b) => b.type === "text").map((b) => b.text ?? "").join("\n")
        : "";
  const ex: { user: string; reply: string }[] = [];
  for (const m of history) {
    const t = textOf(m).trim();
    if (!t || isLetheText(t)) continue;
    if (m.role === "user") ex.push({ user: t, reply: "" });
    else if (ex.length) ex[ex.length - 1]!.reply = t;
  }
  if (ex.length === 0) return "";
  const cut = (t: string, max: number) => {
    const one = t.replace(/\s+/g, " ");
    return one.length > max ? `${one.slice(0, max - 1)}…` : one;
  };
  const lines = [s.dim(`── last ${Math.min(n, ex.length)} of ${ex.length} exchange(s) ──`)];
  for (const e of ex.slice(-n)) {
    lines.push(`${s.bold(">")} ${cut(e.user, 200)}`);
    if (e.reply && render) {
      const out = render(e.reply).replace(/\n+$/, "").split("\n");
      lines.push(...out.slice(0, REPLY_LINES).map((l) => (l ? `  ${l}` : l)));
      if (out.length > REPLY_LINES) lines.push(s.dim(`  … ${fmt(out.length - REPLY_LINES)} more lines`));
    } else if (e.reply) lines.push(s.dim(`  ${cut(e.reply, 300)}`));
  }
  return lines.join("\n");
}

/** One line when the engine learns that the server's context is smaller than configured. */
export function windowNotice(e: WindowLearnedEvent): string {
  const hint = e.cause === "truncated" ? `; set "contextWindow" (or --context-window) to the server's real context (Ollama: num_ctx)` : "";
  return `the server's context is smaller than lethe was told: ${e.reason}. Working to ${fmt(e.contextWindow)} tokens from now on (auto-compact at ${fmt(e.threshold)})${hint}.`;
}

/** "AGENTS.md", "../CLAUDE.md", "~/.lethe/AGENTS.md": short, as the user would type them. */
export function displayPath(path: string, workspace: string): string {
  const home = homedir();
  if (path.startsWith(join(home, ".lethe"))) return `~${path.slice(home.length)}`;
  const rel = relative(workspace, path);
  return rel && !rel.startsWith("/") ? rel : path;
}

/** /memory: the instruction files in the system prompt, or how to get some. */
export function memoryReport(instructions: LoadedInstructions, tokens: number, workspace: string, s: Style): string {
  const { files, warnings } = instructions;
  const lines: string[] = [];
  if (files.length === 0) {
    lines.push("No project instructions loaded.");
    lines.push(s.dim(`lethe reads AGENTS.md and CLAUDE.md in ${workspace} and its parents up to the repository root, and ~/.lethe/AGENTS.md. /init writes a starter AGENTS.md.`));
  } else {
    lines.push(s.bold(`Project instructions in the system prompt (${fmt(tokens)} tokens; kept through every compaction):`));
    for (const f of files) lines.push(`  ${displayPath(f.path, workspace)}  ${fmt(f.text.length)} chars${f.truncated ? s.yellow(" (cut)") : ""}`);
  }
  for (const w of warnings) lines.push(s.yellow(`warning: ${w}`));
  return lines.join("\n");
}
