// The agent's tools: the set, their definitions for the model, and running one call.
//
//   createToolset(opts?)                 the tools (all, or a chosen subset)
//   toolDefinitions(tools)               [{ name, description, input_schema }] for the model APIs
//   runToolCall(tools, { name, input }, ctx)
//                                        validates the input with zod and runs the tool; an
//                                        unknown tool, invalid input or a thrown error becomes a
//                                        one-line error result for the model. Never throws.
import { z } from "zod";
import { type BashLimits, createBashTool } from "./bash.ts";
import { compactTool } from "./compact.ts";
import { contextTool } from "./context.ts";
import { editFileTool } from "./edit-file.ts";
import { globTool } from "./glob.ts";
import { grepTool } from "./grep.ts";
import { readFileTool } from "./read-file.ts";
import { recallTool } from "./recall.ts";
import { taskTool } from "./task.ts";
import { todoWriteTool } from "./todo-write.ts";
import type { Tool, ToolContext, ToolOutcome } from "./types.ts";
import { ToolError, oneLine } from "./util.ts";
import { writeFileTool } from "./write-file.ts";

export type { Tool, ToolContext, ToolOutcome, TodoItem } from "./types.ts";
export { createBashTool, BASH_LIMITS, type BashLimits } from "./bash.ts";
export { resolveInWorkspace, ToolError } from "./util.ts";
export { renderTodos } from "./todo-write.ts";

/** A tool of any input type (a toolset mixes them). */
export type AnyTool = Tool<any>;

/** The built-in tools' names. */
export const TOOL_NAMES = ["bash", "read_file", "write_file", "edit_file", "glob", "grep", "todo_write", "task", "compact", "context", "recall"] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** Options of createToolset (which tools, bash limits). */
export interface ToolsetOptions {
  /** Only these tools (e.g. a read-only subagent). */
  only?: readonly string[];
  /** Leave these out (e.g. "task" inside a subagent). */
  exclude?: readonly string[];
  /** Limits of the bash tool (timeouts, output caps). */
  bash?: Partial<BashLimits>;
}

/** lethe's built-in tools (all, or the ones named), for runAgent's `toolset`. */
export function createToolset(opts: ToolsetOptions = {}): AnyTool[] {
  const all: AnyTool[] = [
    createBashTool(opts.bash),
    readFileTool,
    writeFileTool,
    editFileTool,
    globTool,
    grepTool,
    todoWriteTool,
    taskTool,
    compactTool,
    contextTool,
    recallTool,
  ];
  return all.filter((t) => (!opts.only || opts.only.includes(t.name)) && !opts.exclude?.includes(t.name));
}

export interface ToolDefinitionJson {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

const SAFE_MAX = Number.MAX_SAFE_INTEGER;

/** Drops what z.toJSONSchema adds that the model does not need: $schema and the safe-integer bounds of .int(). */
function clean(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(clean);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === "$schema") continue;
    if (k === "maximum" && v === SAFE_MAX) continue;
    if (k === "minimum" && v === -SAFE_MAX) continue;
    out[k] = clean(v);
  }
  return out;
}

/** A tool's input as JSON Schema. */
export function inputSchemaOf(tool: AnyTool): Record<string, unknown> {
  return clean(z.toJSONSchema(tool.schema, { io: "input" })) as Record<string, unknown>;
}

/** The tools as the model sees them. */
export function toolDefinitions(tools: readonly AnyTool[]): ToolDefinitionJson[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: inputSchemaOf(t) }));
}

function issuePath(path: readonly PropertyKey[]): string {
  let s = "";
  for (const p of path) s += typeof p === "number" ? `[${p}]` : s === "" ? String(p) : `.${String(p)}`;
  return s;
}

/** A short signature of a tool's input, e.g. {path: string, offset?: integer}. */
function signature(tool: AnyTool): string {
  const schema = inputSchemaOf(tool);
  const props = (schema.properties ?? {}) as Record<string, { type?: string; enum?: unknown[] }>;
  const required = new Set((schema.required ?? []) as string[]);
  const parts = Object.entries(props).map(([k, v]) => {
    const type = v.enum ? v.enum.map((e) => JSON.stringify(e)).join("|") : (v.type ?? "any");
    return `${k}${required.has(k) ? "" : "?"}: ${type}`;
  });
  return `{${parts.join(", ")}}`;
}

export function formatIssues(tool: AnyTool, error: z.ZodError): string {
  const issues = error.issues.map((i) => {
    const msg = i.message.replace(/^Invalid input: /, "");
    const where = issuePath(i.path);
    return where ? `${where}: ${msg}` : msg;
  });
  return oneLine(`Invalid input for ${tool.name}: ${issues.join("; ")}. Expected ${signature(tool)}.`);
}

/** Runs one tool call for the model. Never throws: mistakes and failures become error results. */
export async function runToolCall(tools: readonly AnyTool[], use: { name: string; input: unknown; id?: string }, ctx: ToolContext): Promise<ToolOutcome> {
  const tool = tools.find((t) => t.name === use.name);
  if (!tool) {
    return { content: `Unknown tool ${JSON.stringify(use.name)}. Available tools: ${tools.map((t) => t.name).join(", ")}.`, isError: true };
  }
  // Arguments that were not a JSON object (or nested absurdly deep) arrive as {_raw}: say that,
  // not "Unrecognized key _raw".
  const raw = use.input as { _raw?: unknown; _error?: unknown } | null | undefined;
  if (raw && typeof raw === "object" && typeof raw._raw === "string" && Object.keys(raw).every((k) => k === "_raw" || k === "_error")) {
    const why = typeof raw._error === "string" ? raw._error : "they are not a valid JSON object";
    return { content: oneLine(`Your arguments for ${tool.name} could not be used: ${why} (received: ${JSON.stringify(raw._raw.slice(0, 200))}${raw._raw.length > 200 ? "…" : ""}). Call ${tool.name} again with a JSON object: ${signature(tool)}.`), isError: true };
  }
  const parsed = tool.schema.safeParse(use.input ?? {});
  if (!parsed.success) return { content: formatIssues(tool, parsed.error), isError: true };
  if (ctx.signal?.aborted) return { content: `${tool.name}: cancelled before it ran.`, isError: true };
  // The host's permission check sees which call asks (its input and id), for rules and reports.
  const ask = ctx.askPermission;
  const callCtx: ToolContext = ask ? { ...ctx, askPermission: (req) => ask({ ...req, input: parsed.data, ...(use.id ? { toolUseId: use.id } : {}) }) } : ctx;
  try {
    return await tool.run(parsed.data, callCtx);
  } catch (err) {
    if (err instanceof ToolError) return { content: oneLine(`${tool.name}: ${err.message}`), isError: true };
    const e = err as NodeJS.ErrnoException;
    const msg = e instanceof Error ? e.message : String(err);
    return { content: oneLine(`${tool.name} failed: ${msg}`), isError: true };
  }
}
