// The contract every agent tool follows. Inputs are validated with zod before `run`;
// a validation error goes back to the model as an error result, never a crash.
import type { z } from "zod";
import type { ToolResultBlock } from "../messages/types.ts";

export interface ToolOutcome {
  content: ToolResultBlock["content"];
  isError?: boolean;
  /** The compact tool asks the loop to compact after this batch of tool results. */
  compact?: { focus?: string };
}

export interface TodoItem {
  content: string;
  status: "pending" | "in_progress" | "completed";
}

export interface PermissionRequest {
  tool: string;
  summary: string;
  /** Optional longer text to show with the question: the diff of an edit, the start of written content. */
  detail?: string;
  /** The call's validated input and id (set by runToolCall), for rules and for reporting denials. */
  input?: unknown;
  /** The real path the tool resolved and will write: what path rules are checked against. */
  path?: string;
  /** Why the host asks although the mode would allow (a deny rule could not be checked). */
  reason?: string;
  toolUseId?: string;
}

export interface ToolContext {
  /** Absolute, symlinks resolved: file tools never leave it. */
  workspace: string;
  signal?: AbortSignal;
  /** The session folder (transcript.jsonl, tool-results/), for recall. */
  sessionDir?: string;
  /** What read_file last returned per absolute path (mtime + size), for the "unchanged" stub. */
  readState: Map<string, { mtimeMs: number; size: number; offset?: number; limit?: number }>;
  todos: TodoItem[];
  /**
   * Asks the host before a write or a shell command; absent means allowed. Resolves true (run it),
   * false (the user said no), or a string: not run, and this is what the model is told (a policy
   * refusal, an interrupted prompt).
   */
  askPermission?: (request: PermissionRequest) => Promise<boolean | string>;
  /**
   * The host's read rules (`Read(.env)`): given a real path, what the model is told when it may not
   * read it, else undefined. read_file and edit_file refuse such a file; grep and glob leave it out.
   */
  readDenied?: (abs: string) => string | undefined;
  /** Runs a subagent with its own context and compaction; resolves with its final text. */
  runSubagent?: (prompt: string, opts: { description?: string; signal?: AbortSignal }) => Promise<string>;
  /** Credential variables (normally withheld from commands) the user lets through to bash. */
  passEnv?: readonly string[];
  /** Streams partial output of a long-running tool (bash), for the UI. */
  onOutput?: (chunk: string) => void;
  /** How full the context is now (the run's engine): for the context tool. */
  contextUsage?: () => { tokens: number; threshold: number; contextWindow: number };
}

export interface Tool<I = unknown> {
  name: string;
  description: string;
  schema: z.ZodType<I>;
  /** Safe to run in parallel with other read-only calls (no side effects). */
  readOnly: boolean;
  run(input: I, ctx: ToolContext): Promise<ToolOutcome>;
}
