// What arrives is read once, when it arrives: each new message's tool calls are parsed for the
// file ledger, each shell command's outcome is read from its result, and the lines they will be
// in the ledger and the work record are counted (with a counter that counts those records line
// by line). A snip then renders and counts records made of
// lines already counted: its cost no longer grows with what it removes, and a request that snips
// is not the slowest of a session for work every request could have done a little of.
import { toolResultsOf, toolUsesOf } from "../../messages/blocks.ts";
import type { Message, ToolResultBlock } from "../../messages/types.ts";
import type { TokenCounter } from "../../tokens/count.ts";
import { callFiles } from "./ledger.ts";
import { pathLineTokens } from "./ledger-record.ts";
import { outcomeOf, shellCommandOf } from "./work.ts";
import { commandLineTokens } from "./work-record.ts";

/** Results longer than this are not read as they arrive (budget's smallest per-tool cap is 20k). */
const PRIME_MAX_CHARS = 20_000;

const resultChars = (r: ToolResultBlock): number =>
  typeof r.content === "string" ? r.content.length : Array.isArray(r.content) ? r.content.reduce((n, b) => n + (b.type === "text" ? b.text.length : 0), 0) : 0;

/**
 * Indexes the messages of `history` not in `seen` (newest first, up to the first one seen) and
 * adds them to it; with a counter that counts records line by line (TokenCounter.recordLine),
 * counts their record lines ahead.
 */
export function indexNewMessages(history: readonly Message[], seen: WeakSet<Message>, counter?: TokenCounter): void {
  const line = counter?.recordLine;
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (seen.has(m)) break;
    seen.add(m);
    if (m.role === "assistant") {
      for (const use of toolUsesOf(m)) {
        const f = callFiles(use);
        if (!line) continue;
        for (const p of f.read) pathLineTokens(p, "read", line);
        for (const p of f.modified) pathLineTokens(p, "modified", line);
      }
    } else if (line && i > 0 && history[i - 1]!.role === "assistant") {
      // A result answers a call of the message before it.
      const commands = new Map<string, string>();
      for (const use of toolUsesOf(history[i - 1]!)) {
        const c = shellCommandOf(use);
        if (c !== undefined) commands.set(use.id, c);
      }
      if (commands.size === 0) continue;
      for (const r of toolResultsOf(m)) {
        const c = commands.get(r.tool_use_id);
        // A result this long is budget's to move to disk first; a snip reads the marker left in its place.
        if (c === undefined || resultChars(r) > PRIME_MAX_CHARS) continue;
        const o = outcomeOf(c, r);
        if (o) commandLineTokens(o, line);
      }
    }
  }
}
