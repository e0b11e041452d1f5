// `lethe view [session-id] [--port N] [--open] [--cwd dir] [--store path|url]`: serve one session
// (default: the workspace's latest, or the store's newest conversation) on 127.0.0.1 until Ctrl-C.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { latestSession, resolveSession } from "../../session/paths.ts";
import { UsageError } from "../errors.ts";
import { startViewer } from "./server.ts";

/** The flags of `lethe view`. */
export const VIEW_FLAGS = ["port", "open", "cwd", "store"] as const;

export async function runView(argv: readonly string[], out: (text: string) => void, stop: Promise<unknown> = onInterrupt(), env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let cwd = process.cwd();
  let port = 0;
  let open = false;
  let store = env.LETHE_STORE?.trim() || undefined;
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--open") open = true;
    else if (a === "--port" || a === "--cwd" || a === "--store") {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      if (a === "--cwd") cwd = resolve(v);
      else if (a === "--store") store = v;
      else if (!/^\d+$/.test(v) || Number(v) > 65_535) throw new UsageError(`--port must be a port number, got ${JSON.stringify(v)}`);
      else port = Number(v);
    } else if (a.startsWith("-")) throw new UsageError(`unknown option ${a} for lethe view`);
    else positional.push(a);
  }
  if (positional.length > 1) throw new UsageError("lethe view takes at most one session id");
  let release = async () => {};
  let session;
  if (store !== undefined) {
    const { storedSessionFolder } = await import("./stored.ts");
    const folder = await storedSessionFolder(store, positional[0]);
    session = folder.paths;
    release = folder.release;
    if (folder.note) out(`lethe view: ${folder.note}\n`);
  } else {
    session = positional[0] !== undefined ? resolveSession(cwd, positional[0]) : latestSession(cwd);
    if (!session) throw new UsageError(`no session to view in ${cwd} (lethe sessions lists them)`);
  }
  let viewer;
  try {
    viewer = await startViewer(session, { port });
  } catch (e) {
    await release();
    throw e;
  }
  out(`lethe view: ${viewer.url} (session ${session.id}; Ctrl-C to stop)\n`);
  if (open) {
    const opener = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
    spawn(opener, [viewer.url], { stdio: "ignore", detached: true }).on("error", () => out(`lethe view: could not start ${opener}; open the address yourself\n`)).unref();
  }
  await stop;
  await viewer.close();
  await release();
  return 0;
}

function onInterrupt(): Promise<void> {
  return new Promise((done) => {
    process.once("SIGINT", () => done());
    process.once("SIGTERM", () => done());
  });
}
