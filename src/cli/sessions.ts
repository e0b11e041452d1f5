// `lethe sessions` (the workspace's sessions, one line each) and `lethe export <id> --format md|json`
// (a readable Markdown transcript with the compactions marked, or the transcript as JSON). Both
// read the transcript only; old transcripts (without request lines) show what they have.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { listSessions, resolveSession } from "../session/paths.ts";
import { loadTranscript } from "../session/transcript.ts";
import { exportMarkdown, sessionStats, sessionsTable } from "./session-report.ts";
import { UsageError } from "./errors.ts";

export { exportMarkdown, sessionStats, sessionsTable, type SessionStats } from "./session-report.ts";

/** The flags of `lethe sessions` and `lethe export` (the main command's are in args.ts). */
export const SESSION_COMMAND_FLAGS = ["cwd", "format", "output", "port", "open", "store"] as const;

/**
 * `lethe sessions [--cwd dir] [--store path|url]` and `lethe export <id> [--format md|json] [-o file]
 * [--cwd dir] [--store path|url]`. With a store (or LETHE_STORE), they read its conversations.
 */
export function runSessionCommand(argv: readonly string[], out: (text: string) => void, env: NodeJS.ProcessEnv = process.env): number | Promise<number> {
  const [command, ...rest] = argv;
  let cwd = process.cwd();
  let format = "md";
  let output: string | undefined;
  let store = env.LETHE_STORE?.trim() || undefined;
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const value = () => {
      const v = rest[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      return v;
    };
    if (a === "--cwd") cwd = resolve(value());
    else if (a === "--format") format = value();
    else if (a === "-o" || a === "--output") output = value();
    else if (a === "--store") store = value();
    else if (a.startsWith("-")) throw new UsageError(`unknown option ${a} for lethe ${command}`);
    else positional.push(a);
  }
  if (format !== "md" && format !== "json") throw new UsageError(`--format must be md or json, got ${JSON.stringify(format)}`);
  if (store !== undefined) {
    if (command === "sessions" && positional.length > 0) throw new UsageError(`lethe sessions takes no argument (got ${JSON.stringify(positional[0])})`);
    return import("./store-sessions.ts").then((m) => m.runStoreSessionCommand({ command: command as "sessions" | "export", store: store!, positional, format, cwd, ...(output ? { output } : {}) }, out));
  }
  if (command === "sessions") {
    if (positional.length > 0) throw new UsageError(`lethe sessions takes no argument (got ${JSON.stringify(positional[0])})`);
    out(`${sessionsTable(listSessions(cwd).map((s) => sessionStats(s)))}\n`);
    return 0;
  }
  if (format !== "md" && format !== "json") throw new UsageError(`--format must be md or json, got ${JSON.stringify(format)}`);
  if (positional.length !== 1) throw new UsageError("lethe export needs one session id (lethe sessions lists them)");
  const paths = resolveSession(cwd, positional[0]!);
  const t = loadTranscript(paths.transcript);
  const text = format === "json" ? `${JSON.stringify({ header: t.header, entries: t.entries }, null, 2)}\n` : exportMarkdown(paths.id, t);
  if (output) writeFileSync(resolve(cwd, output), text);
  else out(text);
  return 0;
}
