// The REPL's questions during a turn: a line answer (y/n) and a single-key answer, and the two
// questions the session asks through them — the permission prompt (y / n / a) and the "ask"
// auto-compact prompt. A cancelled turn answers them as no.
import { oneLine } from "../errors.ts";
import { coloredDiff, fmt } from "../render.ts";
import type { SessionUI } from "../session.ts";
import type { Repl } from "./state.ts";

/**
 * A y/n question during a turn; resolves "" (no) when the turn is cancelled or the input is closed.
 * What was typed ahead for the next prompt (not sent yet) is not the answer: it is set aside while
 * the question shows and put back in the input line after it.
 */
export function ask(repl: Repl, question: string, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve) => {
    repl.spinner.stop();
    repl.endLine();
    if (signal?.aborted) return resolve("");
    const rl = repl.rl as unknown as { line: unknown; cursor: number };
    const typed = typeof rl.line === "string" ? rl.line : "";
    const setLine = (text: string) => {
      rl.line = text;
      rl.cursor = text.length;
    };
    if (typed) setLine("");
    const done = (answer: string) => {
      repl.asking = false;
      signal?.removeEventListener("abort", onAbort);
      // Synchronous, in readline's Enter: keys after the answer in the same burst go on from here.
      if (typed) setLine(typed);
      resolve(answer);
    };
    const onAbort = () => done("");
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      repl.asking = true;
      repl.rl.question(question, signal ? { signal } : {}, (answer) => done(answer.trim().toLowerCase()));
    } catch {
      done(""); // the input is closed (end of piped input): no answer means no
    }
  });
}

/**
 * A single-key answer (y / n / a) on a terminal: readline's own key handling steps aside for that
 * key, so nothing lands in the input line. "\x03" for Ctrl-C; Esc and Enter mean no. On a pipe,
 * a line is read instead. `echo` writes what the key meant before the keys after it (type-ahead,
 * maybe in the same burst) reach the input line again.
 */
export function askKey(repl: Repl, question: string, signal?: AbortSignal, echo: (k: string) => string = () => ""): Promise<string> {
  return new Promise((resolve) => {
    repl.spinner.stop();
    repl.endLine();
    if (signal?.aborted) {
      repl.out.write(echo("\x03"));
      return resolve("\x03");
    }
    if (!(repl.rl as unknown as { terminal: boolean }).terminal) {
      void ask(repl, question, signal).then((a) => {
        const k = signal?.aborted ? "\x03" : (a[0] ?? "n");
        repl.out.write(echo(k));
        resolve(k);
      });
      return;
    }
    const input = repl.io.stdin;
    repl.out.write(question);
    const saved = input.listeners("keypress") as ((...a: unknown[]) => void)[];
    input.removeAllListeners("keypress");
    const finish = (k: string) => {
      input.off("keypress", onKey);
      signal?.removeEventListener("abort", onAbort);
      repl.out.write(echo(k));
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
}

type PermissionQuestion = Parameters<NonNullable<SessionUI["askPermission"]>>[0];
type CompactQuestion = Parameters<NonNullable<SessionUI["onCompactSuggested"]>>[0];

/**
 * The permission prompt: only what the permission policy answers "ask" reaches it. [a] allows the
 * call's rule for the rest of the session; Ctrl-C cancels the turn.
 */
export async function askPermission(repl: Repl, { tool, summary, detail, input, reason }: PermissionQuestion): Promise<boolean | string> {
  const { s, session } = repl;
  if (detail) repl.print(tool === "edit_file" ? coloredDiff(detail, s) : s.dim(detail.split("\n").slice(0, 40).join("\n")));
  if (reason) repl.print(s.yellow(`asking because ${reason}`));
  const always = session.alwaysRules(tool, input).join(" ");
  const word = (k: string) => (k === "\x03" ? s.yellow("interrupted") : k === "y" ? "yes" : k === "a" && always !== "" ? "always" : "no");
  const k = await askKey(repl, `${s.bold(`Allow ${tool}?`)} ${oneLine(summary, 200)}  ${s.dim(`[y] yes  [n] no${always ? `  [a] always: ${always}` : ""}`)} `, repl.controller?.signal, (k) => `${word(k)}\n`);
  if (k === "\x03") {
    repl.controller?.abort();
    return "Not run: the user interrupted (Ctrl-C) at the permission prompt; the command was not run.";
  }
  const yes = k === "y" || (k === "a" && always !== "");
  if (k === "a" && yes) repl.print(s.dim(`allowed for this session: ${session.allowAlways(tool, input)}`));
  return yes;
}

/**
 * The "ask" auto-compact question (Enter means yes, unless the turn was cancelled). A "no" at the
 * threshold holds for the session until it is compacted or back under the threshold: the next
 * turn (say, a line typed right after the answer) is not stopped by the same question. A context
 * that no longer fits is asked about every time.
 */
export async function askCompact(repl: Repl, { tokens, threshold, full }: CompactQuestion): Promise<boolean> {
  const { s } = repl;
  if (!full && repl.compactDeclined === repl.session.id) return false;
  const a = await ask(
    repl,
    `${s.yellow(full ? `The context (${fmt(tokens)} tokens) no longer fits.` : `The context (${fmt(tokens)} tokens) is over the auto-compact threshold (${fmt(threshold)}).`)} Compact now? [Y/n] `,
    repl.controller?.signal,
  );
  const yes = a === "" ? !repl.controller?.signal.aborted : a === "y" || a === "yes";
  if (!full) repl.compactDeclined = yes ? undefined : repl.session.id;
  return yes;
}
