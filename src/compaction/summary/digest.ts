// digest: a summary built without a model, from the history itself. Used when no model
// is available for summaries, when the circuit breaker is open, and as --summarizer digest.
// It is plain facts the history states: requests, files, commands and exit codes,
// errors still open, the model's latest words. The rebuild adds the user's messages,
// the file ledger and todos verbatim, so the digest does not repeat them.
import { blocksOf, resultPlainText, toolResultsOf, toolUsesOf } from "../../messages/blocks.ts";
import type { Message, ToolUseBlock } from "../../messages/types.ts";
import type { TokenCounter } from "../../tokens/count.ts";
import { describeCall } from "../layers/markers.ts";
import { previousSummaryOf } from "../state/retain.ts";

interface Outcome {
  use: ToolUseBlock;
  exit: string;
  error: boolean;
  firstLine: string;
}

/** Exit status of a tool result, from the usual conventions of agent harnesses. */
export function exitStatus(text: string, isError: boolean | undefined): { exit: string; error: boolean } {
  const rc = /<returncode>(-?\d+)<\/returncode>/.exec(text) ?? /\b(?:exit code|exit status|exited with code|returncode)[:= ]+(-?\d+)/i.exec(text);
  if (rc) return { exit: rc[1]!, error: rc[1] !== "0" || isError === true };
  if (isError) return { exit: "error", error: true };
  return { exit: "ok", error: /^(?:error|traceback|fatal|exception)\b/im.test(text.slice(0, 2_000)) };
}

function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

function outcomes(history: readonly Message[]): Outcome[] {
  const uses = new Map<string, ToolUseBlock>();
  const out: Outcome[] = [];
  for (const m of history) {
    for (const u of toolUsesOf(m)) uses.set(u.id, u);
    for (const r of toolResultsOf(m)) {
      const use = uses.get(r.tool_use_id);
      if (!use) continue;
      const text = resultPlainText(r.content);
      const { exit, error } = exitStatus(text, r.is_error);
      const body = text.replace(/<\/?(returncode|output)>/g, "").trim();
      const firstLine = (error ? body.split("\n").find((l) => /error|exception|fail|traceback/i.test(l)) : undefined) ?? body.split("\n")[0] ?? "";
      out.push({ use, exit, error, firstLine });
    }
  }
  return out;
}

export interface DigestOptions {
  counter: TokenCounter;
  /** Cap on the digest's size, in tokens. */
  maxTokens: number;
}

/** A summary built without a model: requests, files, commands with exit codes, open errors (the fallback when summaries fail). */
export function digest(history: readonly Message[], opts: DigestOptions): string {
  const sections: string[] = [];
  const previous = previousSummaryOf(history);
  const all = outcomes(history);

  // The model's own latest words say what it was doing.
  const said: string[] = [];
  for (let i = history.length - 1; i >= 0 && said.length < 3; i--) {
    const m = history[i]!;
    if (m.role !== "assistant") continue;
    const text = blocksOf(m).filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join(" ");
    if (text.trim()) said.unshift(clip(text, 600));
  }
  if (said.length) sections.push(`## Current work (the assistant's latest words)\n${said.map((s) => `- ${s}`).join("\n")}`);

  // Errors not followed by a success of the same call are still open.
  const open: Outcome[] = [];
  const fixed = new Set<string>();
  for (let i = all.length - 1; i >= 0; i--) {
    const o = all[i]!;
    const key = describeCall(o.use);
    if (!o.error) fixed.add(key);
    else if (!fixed.has(key) && open.length < 8) open.unshift(o);
  }
  if (open.length) sections.push(`## Errors not yet resolved\n${open.map((o) => `- ${clip(describeCall(o.use), 160)} → exit ${o.exit}: ${clip(o.firstLine, 240)}`).join("\n")}`);

  const recent = all.slice(-30);
  if (recent.length) {
    sections.push(
      `## Tool calls (${all.length} in all; the latest ${recent.length}, with exit status)\n` +
        recent.map((o) => `- ${clip(describeCall(o.use), 160)} → ${o.exit}${o.error ? `: ${clip(o.firstLine, 160)}` : ""}`).join("\n"),
    );
  }
  if (previous) sections.push(`## Earlier summary (folded in)\n${previous}`);

  const head = "Summary built from the history without a model (digest).";
  let text = [head, ...sections].join("\n\n");
  // Cut to the budget from the end: the earlier summary goes first, then the oldest tool calls listed.
  while (opts.counter.text(text) > opts.maxTokens && text.length > 200) {
    text = `${text.slice(0, Math.floor(text.length * 0.8))}\n[… digest cut to fit its budget …]`;
  }
  return text;
}
