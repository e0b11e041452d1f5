// The `lethe` command: the REPL, or headless with -p. Every failure is one line on stderr
// with a non-zero exit (2 for a bad command line); never a stack trace.
import { readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, usageText } from "./args.ts";
import { UsageError, errorLine, exitCodeOf } from "./errors.ts";
import { holdStartupInput, releaseStartupInput } from "./startup-input.ts";
import { sealCredentials } from "../tools/credentials.ts";

export function version(): string {
  // src/cli/main.ts and dist/cli/main.js both sit two levels below package.json.
  for (const rel of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), rel), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "lethe" && pkg.version) return pkg.version;
    } catch {
      // try the next one
    }
  }
  return "0.0.0";
}

/** The credential variables lethe was started with, sealed away from process.env by run(). */
let credentials: Record<string, string> = {};
/** process.env as it was for configuration: with the sealed credentials. */
const configEnv = (): NodeJS.ProcessEnv => ({ ...process.env, ...credentials });

/** Piped input beyond this is refused: it would not fit a context window anyway. */
const MAX_STDIN = 4_000_000;

/**
 * Reads piped input, at most MAX_STDIN + 1 characters. With a prompt given (`-p "…"`), a pipe
 * that stays silent for `patienceMs` (a CI runner's inherited stdin that never closes) is left
 * alone: lethe goes on with the prompt and says so, rather than hang.
 */
async function readStdin(patienceMs?: number): Promise<string> {
  const stdin = process.stdin;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const done = (text: string) => {
      if (timer) clearTimeout(timer);
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      stdin.off("error", onError);
      stdin.pause();
      resolve(text);
    };
    const onData = (c: Buffer) => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      chunks.push(c);
      size += c.length;
      if (size > MAX_STDIN * 4) done(Buffer.concat(chunks).toString("utf8"));
    };
    const onEnd = () => done(Buffer.concat(chunks).toString("utf8"));
    const onError = (e: Error) => reject(e);
    if (patienceMs !== undefined) {
      timer = setTimeout(() => {
        process.stderr.write(`lethe: nothing arrived on stdin in ${patienceMs / 1000}s; going on with the prompt alone (redirect </dev/null to skip the wait)\n`);
        done("");
      }, patienceMs);
      timer.unref();
    }
    stdin.on("data", onData);
    stdin.on("end", onEnd);
    stdin.on("error", onError);
  });
}

type Untrusted = { path: string; keys: string[]; what: string[] };

function untrustedNotice(u: Untrusted): string {
  return `lethe: ignoring ${u.keys.join(", ")} in ${u.path}: this folder is not trusted (run lethe here interactively once to trust it, or pass --trust-workspace)`;
}

/** Claude Code's question, once per folder: the answer is remembered in the user's settings. */
async function askTrust(workspace: string, u: Untrusted): Promise<boolean> {
  const { readKey, keyAnswer } = await import("./keys.ts");
  const out = process.stdout;
  out.write(`\n${u.path} asks to:\n${u.what.map((w) => `  - ${w}\n`).join("")}`);
  out.write(`Do you trust the files in this folder (${workspace})? Only say yes for a repository you know.  [y] yes, remember  [n] no, ignore those settings `);
  const key = await readKey(process.stdin);
  if (key === "\x03") {
    out.write("\n");
    process.exit(130);
  }
  const yes = keyAnswer(key) === "y";
  out.write(`${yes ? "yes" : "no"}\n`);
  return yes;
}

export async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === "view") {
    const { runView } = await import("./view/command.ts");
    return runView(argv.slice(1), (t) => process.stdout.write(t));
  }
  if (argv[0] === "sessions" || argv[0] === "export") {
    const { runSessionCommand } = await import("./sessions.ts");
    return runSessionCommand(argv, (t) => process.stdout.write(t));
  }
  const args = parseArgs(argv);
  if (args.help) {
    process.stdout.write(`${usageText(version())}\n`);
    return 0;
  }
  if (args.version) {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const headless = args.print !== undefined;
  if (headless) {
    let prompt = args.print!;
    if (prompt === "" && args.positional.length > 0) prompt = args.positional.join(" ");
    else if (args.positional.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(args.positional[0])} (quote the whole prompt after -p)`);
    // Piped input goes with the prompt (`git diff | lethe -p "review this"`), as with `claude -p`.
    if (!process.stdin.isTTY) {
      const piped = await readStdin(prompt.trim() === "" ? undefined : 3_000);
      if (piped.length > MAX_STDIN) throw new UsageError(`the input piped to -p is ${piped.length.toLocaleString("en-US")} characters; at most ${MAX_STDIN.toLocaleString("en-US")} (save it to a file in the workspace and ask the model to read it)`);
      if (piped.trim() !== "") prompt = prompt.trim() === "" ? piped : `${prompt}\n\n<stdin>\n${piped.replace(/\n$/, "")}\n</stdin>`;
    }
    if (prompt.trim() === "") throw new UsageError('-p needs a prompt: lethe -p "<prompt>" (or pipe it on stdin)');
    // Loaded only now: --help, --version and usage errors stay fast.
    const { resolveRunConfig, discoverWindow } = await import("./config.ts");
    const cfg = await discoverWindow(resolveRunConfig(args, configEnv(), { headless: true }));
    if (cfg.untrusted) process.stderr.write(`${untrustedNotice(cfg.untrusted)}\n`);
    for (const w of cfg.warnings) process.stderr.write(`lethe: ${w}\n`);
    const { runHeadless } = await import("./headless.ts");
    return runHeadless(cfg, args, prompt, { stdout: process.stdout, stderr: process.stderr });
  }
  // Before anything slow: keys typed while the REPL starts are not echoed (./startup-input.ts).
  holdStartupInput(process.stdin, process.stdout);
  const { resolveRunConfig } = await import("./config.ts");
  let cfg = resolveRunConfig(args, configEnv(), { headless: false });
  if (cfg.untrusted) {
    // What was typed before the question is not its answer.
    releaseStartupInput({ discard: true });
    const trusted = process.stdin.isTTY && process.stdout.isTTY && (await askTrust(cfg.workspace, cfg.untrusted));
    holdStartupInput(process.stdin, process.stdout);
    if (trusted) {
      const { rememberTrust } = await import("./trust.ts");
      rememberTrust(cfg.workspace, cfg.userSettingsPath);
      cfg = resolveRunConfig(args, configEnv(), { headless: false, trusted: true });
      process.stdout.write(`Trusted ${cfg.workspace} (remembered in ${cfg.userSettingsPath}).\n`);
    } else process.stdout.write(`${untrustedNotice(cfg.untrusted)}\n`);
  }
  cfg = await (await import("./config.ts")).discoverWindow(cfg);
  for (const w of cfg.warnings) process.stdout.write(`warning: ${w}\n`);
  const { runRepl } = await import("./repl.ts");
  return runRepl(cfg, args, version(), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
}

function fail(e: unknown): never {
  const code = exitCodeOf(e);
  process.stderr.write(`${errorLine(e)}${code === 2 ? " (lethe --help lists the options)" : ""}\n`);
  process.exit(code);
}

/** Runs the CLI as a program: exits the process with the right code. */
export async function run(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  // First of all, before any child process exists: the keys leave the environment (and, on Linux,
  // /proc/<pid>/environ), so no command the model runs can read them from lethe.
  credentials = sealCredentials(process.env).values;
  process.on("uncaughtException", fail);
  process.on("unhandledRejection", fail);
  // A closed pipe on stdout (lethe -p … | head) is not an error worth a trace.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
    fail(e);
  });
  let code: number;
  try {
    code = await main(argv);
  } catch (e) {
    fail(e);
  }
  // Let stdout drain before exiting (a pipe may still hold the answer).
  process.exitCode = code;
  const done = () => process.exit(code);
  if (process.stdout.writableLength > 0) process.stdout.once("drain", done);
  else setImmediate(done);
}

function invokedDirectly(): boolean {
  try {
    return !!process.argv[1] && realpathSync(fileURLToPath(import.meta.url)) === realpathSync(process.argv[1]);
  } catch {
    return false;
  }
}
if (invokedDirectly()) await run();
