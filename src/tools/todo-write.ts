// todo_write: replaces the session's todo list (ctx.todos) and shows it.
import { z } from "zod";
import type { TodoItem, Tool, ToolOutcome } from "./types.ts";
import { fail } from "./util.ts";

const schema = z.strictObject({
  todos: z
    .array(
      z.strictObject({
        content: z.string().min(1).describe("What to do, imperative and short."),
        status: z.enum(["pending", "in_progress", "completed"]),
      }),
    )
    .describe("The whole list, in order; it replaces the previous one."),
});

export type TodoWriteInput = z.infer<typeof schema>;

const MARK: Record<TodoItem["status"], string> = { completed: "[x]", in_progress: "[>]", pending: "[ ]" };

export function renderTodos(todos: readonly TodoItem[]): string {
  if (todos.length === 0) return "(the todo list is empty)";
  return todos.map((t, i) => `${i + 1}. ${MARK[t.status]} ${t.content}`).join("\n");
}

export const todoWriteTool: Tool<TodoWriteInput> = {
  name: "todo_write",
  description:
    "Keep a todo list for multi-step work: send the whole list each time (it replaces the previous one). Status is pending, in_progress or completed; " +
    "at most one item may be in_progress. Mark items completed as soon as they are done.",
  schema,
  readOnly: false,
  async run(input, ctx): Promise<ToolOutcome> {
    const active = input.todos.filter((t) => t.status === "in_progress");
    if (active.length > 1) {
      return fail(`${active.length} items are in_progress (${active.map((t) => JSON.stringify(t.content)).join(", ")}); at most one may be in_progress at a time. The list was not changed.`);
    }
    const next: TodoItem[] = input.todos.map((t) => ({ content: t.content, status: t.status }));
    // In place, so a host holding the array sees the change.
    ctx.todos.splice(0, ctx.todos.length, ...next);
    const done = next.filter((t) => t.status === "completed").length;
    return { content: `Todo list updated (${done}/${next.length} completed):\n${renderTodos(next)}` };
  },
};
