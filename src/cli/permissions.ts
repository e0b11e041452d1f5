// The permission policy: (tool, input, mode, rules) → allow | deny (with the reason the model is
// told) | ask. Pure: the REPL asks when the answer is "ask", headless mode has no one to ask.
//
// Rules use Claude Code's spelling: `Bash`, `Bash(npm test:*)` (a command starting with
// "npm test"), `Bash(git status)` (exactly that command), `Edit`, `Edit(src/**)` (a path glob),
// `Write`, `Read`, … ; lethe's own tool names work too. Deny beats allow. A compound shell command
// matches an allow rule only when every part of it does, and never when it hides a command
// (`$(…)`, backticks, process substitution), so `npm test && rm -rf /` is not "npm test".
import { globToRegExp } from "../tools/glob-match.ts";
export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "bypassPermissions"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export const CLAUDE_TOOL_NAMES: Record<string, string> = {
  bash: "bash",
  edit: "edit_file",
  multiedit: "edit_file",
  write: "write_file",
  read: "read_file",
  glob: "glob",
  grep: "grep",
  task: "task",
  todowrite: "todo_write",
  ls: "glob",
};

/** Tools that change something: what the modes govern. */
export const EDIT_TOOLS = new Set(["write_file", "edit_file"]);
export const SIDE_EFFECT_TOOLS = new Set(["bash", "write_file", "edit_file"]);

export interface Rule {
  tool: string;
  /** What is inside the parentheses, if anything. */
  spec?: string;
  text: string;
}

export type Decision = { kind: "allow"; rule?: string } | { kind: "deny"; reason: string } | { kind: "ask" };

export class RuleError extends Error {}

/** "Bash(npm test:*)" → { tool: "bash", spec: "npm test:*" }. Throws RuleError on nonsense. */
export function parseRule(text: string): Rule {
  const t = text.trim();
  const m = /^([A-Za-z_][\w-]*)(?:\((.*)\))?$/s.exec(t);
  if (!m) throw new RuleError(`permission rule ${JSON.stringify(text)} is not Tool or Tool(pattern)`);
  const name = m[1]!;
  const tool = CLAUDE_TOOL_NAMES[name.toLowerCase()] ?? name.toLowerCase();
  const spec = m[2]?.trim();
  if (m[2] !== undefined && !spec) throw new RuleError(`permission rule ${JSON.stringify(text)} has an empty pattern`);
  return { tool, ...(spec ? { spec } : {}), text: t };
}

/** A list from flags: commas or spaces separate rules, but not inside parentheses. */
export function splitRules(value: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of value) {
    if (ch === "(") depth++;
    if (ch === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (ch === "," || /\s/.test(ch))) {
      if (cur.trim()) out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/**
 * The simple commands of a shell line, or undefined when it cannot be split safely (command or
 * process substitution, an unclosed quote). Quotes are respected: `echo "a && b"` is one command.
 */
export function shellParts(command: string): string[] | undefined {
  if (/\$\(|`|<\(|>\(/.test(command)) return undefined;
  const parts: string[] = [];
  let cur = "";
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!;
    if (quote) {
      cur += ch;
      if (ch === "\\" && quote === '"' && i + 1 < command.length) cur += command[++i]!;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      cur += ch;
      continue;
    }
    if (ch === "\\" && i + 1 < command.length) {
      cur += ch + command[++i]!;
      continue;
    }
    // Separators: ; & | newline (&& and || are two of them in a row).
    if (ch === ";" || ch === "&" || ch === "|" || ch === "\n" || ch === "\r") {
      if (cur.trim()) parts.push(cur.trim());
      cur = "";
      continue;
    }
    cur += ch;
  }
  if (quote) return undefined;
  if (cur.trim()) parts.push(cur.trim());
  return parts;
}

/** One simple command against a Bash spec: "npm test:*" (prefix at a word boundary) or an exact command. */
function commandMatches(part: string, spec: string): boolean {
  const norm = part.replace(/\s+/g, " ").trim();
  if (spec.endsWith(":*")) {
    const prefix = spec.slice(0, -2).replace(/\s+/g, " ").trim();
    return norm === prefix || norm.startsWith(`${prefix} `);
  }
  if (spec.endsWith("*")) return norm.startsWith(spec.slice(0, -1).replace(/\s+/g, " "));
  return norm === spec.replace(/\s+/g, " ").trim();
}

function pathOf(input: unknown): string | undefined {
  const i = (input ?? {}) as Record<string, unknown>;
  const p = i.path ?? i.file_path;
  return typeof p === "string" ? p.replace(/^\.\//, "") : undefined;
}

/** Does an allow rule cover this call? (Every part of a compound command must be covered.) */
function allowMatches(rule: Rule, tool: string, input: unknown, allRules: readonly Rule[]): boolean {
  if (rule.tool !== tool) return false;
  if (!rule.spec) return true;
  if (tool === "bash") {
    const command = String((input as { command?: unknown })?.command ?? "");
    const parts = shellParts(command);
    if (!parts || parts.length === 0) return false;
    const bashRules = allRules.filter((r) => r.tool === "bash");
    return parts.every((p) => bashRules.some((r) => !r.spec || commandMatches(p, r.spec)));
  }
  const path = pathOf(input);
  return path !== undefined && globToRegExp(rule.spec).test(path);
}

/** Does a deny rule hit this call? (Any part of a compound command; an unsplittable line is checked whole.) */
function denyMatches(rule: Rule, tool: string, input: unknown): boolean {
  if (rule.tool !== tool) return false;
  if (!rule.spec) return true;
  if (tool === "bash") {
    const command = String((input as { command?: unknown })?.command ?? "");
    const parts = shellParts(command) ?? [command];
    const spec = rule.spec.endsWith(":*") ? rule.spec.slice(0, -2) : rule.spec.replace(/\*$/, "");
    // Hidden commands cannot be split: a denied word anywhere in the line is enough.
    if (!shellParts(command) && command.includes(spec.trim())) return true;
    return parts.some((p) => commandMatches(p, rule.spec!));
  }
  const path = pathOf(input);
  return path !== undefined && globToRegExp(rule.spec).test(path);
}

export interface Policy {
  mode: PermissionMode;
  allow: Rule[];
  deny: Rule[];
}

export function decide(policy: Policy, tool: string, input: unknown): Decision {
  const deny = policy.deny.find((r) => denyMatches(r, tool, input));
  if (deny) return { kind: "deny", reason: `denied by the permission rule ${deny.text}` };
  const allowed = policy.allow.filter((r) => r.tool === tool);
  if (allowed.some((r) => allowMatches(r, tool, input, allowed))) return { kind: "allow", rule: allowed[0]!.text };
  if (!SIDE_EFFECT_TOOLS.has(tool)) return { kind: "allow" };
  switch (policy.mode) {
    case "bypassPermissions":
      return { kind: "allow" };
    case "acceptEdits":
      return EDIT_TOOLS.has(tool) ? { kind: "allow" } : { kind: "ask" };
    case "plan":
      return { kind: "deny", reason: "plan mode: nothing may be changed or run. Read and plan only, then present the plan; the user switches modes to carry it out" };
    default:
      return { kind: "ask" };
  }
}

/** Tools a bare deny rule removes from the model's tool list (Claude Code hides them too). */
export function hiddenTools(policy: Policy): Set<string> {
  return new Set(policy.deny.filter((r) => !r.spec).map((r) => r.tool));
}

/** The rule "always" remembers in the REPL: that command's first word(s) for bash, the tool otherwise. */
export function alwaysRule(tool: string, input: unknown): Rule {
  if (tool === "bash") {
    const command = String((input as { command?: unknown })?.command ?? "").trim();
    const parts = shellParts(command);
    if (parts && parts.length === 1) {
      const words = parts[0]!.split(/\s+/);
      // "npm test -- x" → "npm test:*"; "ls -la" → "ls:*".
      const prefix = words.length > 1 && !words[1]!.startsWith("-") ? `${words[0]} ${words[1]}` : words[0]!;
      return parseRule(`Bash(${prefix}:*)`);
    }
    return parseRule(`Bash(${command})`);
  }
  return parseRule(tool);
}
