// Shared fixtures for the tool tests: a temporary workspace with a sibling "outside" folder.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type AnyTool, createToolset, runToolCall } from "../../src/tools/index.ts";
import type { ToolContext, ToolOutcome } from "../../src/tools/types.ts";

export interface Fixture {
  /** Holds both folders. */
  top: string;
  /** The workspace (real path). */
  ws: string;
  /** A folder next to the workspace, with secret.txt in it. */
  outside: string;
  secret: string;
  ctx: ToolContext;
  tools: AnyTool[];
  call(name: string, input: unknown, ctx?: Partial<ToolContext>): Promise<ToolOutcome>;
  write(rel: string, content: string | Buffer): string;
  cleanup(): void;
}

export const SECRET = "TOP-SECRET-CONTENT\n";

export function fixture(): Fixture {
  const top = realpathSync(mkdtempSync(join(tmpdir(), "lethe-tools-")));
  const ws = join(top, "ws");
  const outside = join(top, "outside");
  mkdirSync(ws);
  mkdirSync(outside);
  const secret = join(outside, "secret.txt");
  writeFileSync(secret, SECRET);
  const ctx: ToolContext = { workspace: ws, readState: new Map(), todos: [] };
  const tools = createToolset();
  return {
    top,
    ws,
    outside,
    secret,
    ctx,
    tools,
    call: (name, input, extra) => runToolCall(tools, { name, input }, { ...ctx, ...extra }),
    write(rel, content) {
      const p = join(ws, rel);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, content);
      return p;
    },
    cleanup: () => rmSync(top, { recursive: true, force: true }),
  };
}

export function text(o: ToolOutcome): string {
  if (typeof o.content === "string") return o.content;
  return (o.content ?? []).map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("");
}

/** True while the process exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return existsSync(`/proc/${pid}`);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits until `cond` holds (polling); throws after `limitMs` so a broken test cannot hang. */
export async function waitFor(cond: () => boolean, limitMs = 20_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition never held");
    await sleep(20);
  }
}
