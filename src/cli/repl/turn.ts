// One turn of the REPL: the prompt goes to the session; Ctrl-C cancels it (the session goes on).
// Afterwards, why it stopped early (if it did) and the status line.
import { errorLine } from "../errors.ts";
import { statusLine } from "../render.ts";
import type { Repl } from "./state.ts";

export async function runTurn(repl: Repl, prompt: string): Promise<void> {
  const { s, session, md, print } = repl;
  const controller = (repl.controller = new AbortController());
  repl.live = true;
  try {
    const r = await session.run(prompt, controller.signal);
    md?.flush();
    repl.endLine();
    repl.spinner.stop();
    if (r.stop === "aborted") print(s.yellow("Interrupted. The turn was cancelled; the session goes on."));
    else if (r.stop === "max_turns") print(s.yellow(`Stopped after ${r.turns} turn${r.turns === 1 ? "" : "s"} (--max-turns).`));
    else if (r.stop === "max_tokens") print(s.yellow("The reply was cut off by the output token limit."));
    else if (r.stop === "refusal") print(s.yellow("The model declined this request (refusal). It was taken out of the context; the session goes on."));
    else if (r.stop === "max_budget") print(s.yellow(`Stopped before the next request: it would take this turn past its budget (--max-budget-usd)${r.costUsd !== undefined ? `; the turn spent $${r.costUsd.toFixed(4)}` : ""}.`));
    print(statusLine(session.breakdown(), session.cost(), s));
  } catch (e) {
    md?.flush();
    repl.endLine();
    repl.spinner.stop();
    print(s.red(errorLine(e)));
  } finally {
    // Anything the cancelled turn still emits from now on is dropped: it would land on the prompt line.
    repl.live = false;
    repl.controller = undefined;
  }
}
