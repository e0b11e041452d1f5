// The `lethe` command: the REPL, or headless with -p. Every failure is one line on stderr
// with a non-zero exit (2 for a bad command line); never a stack trace.
import { readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, usageText } from "./args.ts";
import { UsageError, errorLine, exitCodeOf } from "./errors.ts";

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

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
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
    if (prompt.trim() === "" && !process.stdin.isTTY) prompt = await readStdin();
    if (prompt.trim() === "") throw new UsageError('-p needs a prompt: lethe -p "<prompt>" (or pipe it on stdin)');
    // Loaded only now: --help, --version and usage errors stay fast.
    const { resolveRunConfig } = await import("./config.ts");
    const cfg = resolveRunConfig(args, process.env, { headless: true });
    if (cfg.untrusted) process.stderr.write(`${untrustedNotice(cfg.untrusted)}\n`);
    for (const w of cfg.warnings) process.stderr.write(`lethe: ${w}\n`);
    const { runHeadless } = await import("./headless.ts");
    return runHeadless(cfg, args, prompt, { stdout: process.stdout, stderr: process.stderr });
  }
  const { resolveRunConfig } = await import("./config.ts");
  let cfg = resolveRunConfig(args, process.env, { headless: false });
  if (cfg.untrusted) {
    if (process.stdin.isTTY && process.stdout.isTTY && (await askTrust(cfg.workspace, cfg.untrusted))) {
      const { rememberTrust } = await import("./trust.ts");
      rememberTrust(cfg.workspace, cfg.userSettingsPath);
      cfg = resolveRunConfig(args, process.env, { headless: false, trusted: true });
      process.stdout.write(`Trusted ${cfg.workspace} (remembered in ${cfg.userSettingsPath}).\n`);
    } else process.stdout.write(`${untrustedNotice(cfg.untrusted)}\n`);
  }
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
