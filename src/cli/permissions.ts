// The permission policy: (tool, input, mode, rules) → allow | deny (with the reason the model is
// told) | ask. Pure: the REPL asks when the answer is "ask", headless mode has no one to ask.
//
// Rules use Claude Code's spelling: `Bash`, `Bash(npm test:*)` (a command starting with
// "npm test"), `Bash(git status)` (exactly that command), `Edit`, `Edit(src/**)` (a path glob),
// `Write`, `Read`, … ; lethe's own tool names work too. Deny beats allow.
//
// A rule sees what will happen, not the text the model wrote: a path rule the real path the tool
// will touch (./rule-paths.ts), a Bash rule every command the line runs (./shell/analyze.ts:
// wrappers, `bash -c`, substitutions) and every file it redirects to or names. A line allow rules
// do not fully cover is asked; a line that may run a denied command is never allowed.
import { type Command, analyzeShell, commandName } from "./shell/analyze.ts";
import { type Word, parseShell } from "./shell/parse.ts";
import { readdirSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import { type RulePaths, type Target, pathRuleCovers, resolveTarget, rulePaths, targetOf } from "./rule-paths.ts";
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
  /** A Bash pattern read as words: a prefix (`:*`), a whole command, or a legacy `text*` prefix. */
  command?: { words: string[]; kind: "prefix" | "exact" | "startsWith" };
}

/** "ask" carries why when a rule could not be checked (then even bypassPermissions asks). */
export type Decision = { kind: "allow"; rule?: string } | { kind: "deny"; reason: string } | { kind: "ask"; reason?: string };

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
  const rule: Rule = { tool, ...(spec ? { spec } : {}), text: t };
  if (tool === "bash" && spec) rule.command = commandPattern(t, spec);
  return rule;
}

/** "npm test:*" → prefix [npm, test]. A pattern naming two commands could never match one: refused. */
function commandPattern(text: string, spec: string): NonNullable<Rule["command"]> {
  const [body, kind] = spec.endsWith(":*") ? [spec.slice(0, -2), "prefix" as const] : spec.endsWith(" *") ? [spec.slice(0, -2), "prefix" as const] : spec.endsWith("*") ? [spec.slice(0, -1), "startsWith" as const] : [spec, "exact" as const];
  if (kind === "startsWith") return { words: [body.replace(/\s+/g, " ").trimStart()], kind };
  const parsed = parseShell(body);
  const words = parsed.commands[0]?.words.map((w) => w.text) ?? [];
  if (parsed.unsure || parsed.commands.length !== 1 || parsed.commands[0]!.redirects.length > 0 || parsed.hidden.length > 0 || words.length === 0) {
    const parts = parsed.commands.map((c) => `Bash(${c.words.slice(0, 2).map((w) => w.text).join(" ")}:*)`);
    throw new RuleError(`permission rule ${JSON.stringify(text)} must name one command (a rule is checked against each command of a line)${parts.length > 1 ? `; write one rule per command, e.g. ${parts.join(" ")}` : ""}`);
  }
  return { words, kind };
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


export interface Policy {
  mode: PermissionMode;
  allow: Rule[];
  deny: Rule[];
}

// ───────────────────────── what the rules are checked against ─────────────────────────

const READ_TOOLS = new Set(["read_file", "grep", "glob"]);
/** What a path rule protects: reading (Read, Grep, Glob) or changing (Edit, Write: both tools). */
const accessOf = (tool: string): "read" | "write" | undefined => (READ_TOOLS.has(tool) ? "read" : EDIT_TOOLS.has(tool) ? "write" : undefined);

function pathOf(input: unknown): string | undefined {
  const i = (input ?? {}) as Record<string, unknown>;
  const p = i.path ?? i.file_path;
  return typeof p === "string" ? p : undefined;
}

export interface DecideContext {
  /** The workspace and home the path rules are read against (default: the current folder). */
  paths?: RulePaths;
  /** The real path the tool resolved and will open (PermissionRequest.path); else the input's path is resolved here. */
  target?: string;
  /** The variables commands see, for `$HOME`-style arguments (default process.env). */
  env?: Record<string, string | undefined>;
}

let defaultPaths: RulePaths | undefined;
const pathsOf = (ctx: DecideContext) => ctx.paths ?? (defaultPaths ??= rulePaths(process.cwd()));

/** The deny rule that protects this path from this kind of access, if any. */
export function protectingRule(policy: Policy, paths: RulePaths, target: Target, access: "read" | "write" | "any"): Rule | undefined {
  return policy.deny.find((r) => r.spec && accessOf(r.tool) && (access === "any" || accessOf(r.tool) === access) && pathRuleCovers(paths, r.spec, target, true));
}

function modeDecision(policy: Policy, tool: string): Decision {
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

export function decide(policy: Policy, tool: string, input: unknown, ctx: DecideContext = {}): Decision {
  const bare = policy.deny.find((r) => r.tool === tool && !r.spec);
  if (bare) return { kind: "deny", reason: `denied by the permission rule ${bare.text}` };
  if (tool === "bash") return decideBash(policy, String((input as { command?: unknown })?.command ?? ""), ctx);
  const access = accessOf(tool);
  const raw = pathOf(input);
  if (access && (raw !== undefined || ctx.target !== undefined)) {
    const paths = pathsOf(ctx);
    const target = ctx.target !== undefined ? targetOf(paths, ctx.target) : resolveTarget(paths, raw!.trim() === "" ? "." : raw!);
    const deny = protectingRule(policy, paths, target, access);
    if (deny) return { kind: "deny", reason: `denied by the permission rule ${deny.text}${target.rel !== undefined && target.rel !== raw ? ` (${raw ?? target.rel} is ${target.rel})` : ""}` };
    const allow = policy.allow.find((r) => r.tool === tool && (!r.spec || pathRuleCovers(paths, r.spec, target, false)));
    if (allow) return { kind: "allow", rule: allow.text };
    return modeDecision(policy, tool);
  }
  const allow = policy.allow.find((r) => r.tool === tool && !r.spec);
  if (allow) return { kind: "allow", rule: allow.text };
  return modeDecision(policy, tool);
}

// ───────────────────────── shell commands ─────────────────────────

type Match = "yes" | "no" | "maybe";
const known = (w: Word) => w.exact && !w.glob;
const STANDARD_BIN = /^\/(usr\/(local\/)?)?s?bin\/[^/]+$/;

/** The command's name: a deny rule sees any path's last name, an allow rule only the system folders'. */
function nameFor(w: Word, deny: boolean): string {
  return deny || STANDARD_BIN.test(w.text) ? commandName(w) : w.text;
}

function matchCommand(pattern: NonNullable<Rule["command"]>, cmd: Command, deny: boolean): Match {
  const ws = cmd.words;
  const texts = ws.map((w, k) => (k === 0 ? nameFor(w, deny) : w.text));
  if (pattern.kind === "startsWith") {
    if (!ws.every(known)) return deny ? "maybe" : "no";
    return texts.join(" ").startsWith(pattern.words[0]!) ? "yes" : "no";
  }
  let maybe = false;
  const p = pattern.words.map((w, k) => (k === 0 && deny ? w.slice(w.lastIndexOf("/") + 1) : w));
  for (let k = 0; k < p.length; k++) {
    const w = ws[k];
    if (!w) return ws.some((x) => x.glob) && deny ? "maybe" : "no";
    if (!known(w)) maybe = true;
    else if (texts[k] !== p[k]) return "no";
  }
  if (pattern.kind === "exact" && ws.length !== p.length) return ws.some((x) => !known(x)) && deny ? "maybe" : "no";
  return maybe ? (deny ? "maybe" : "no") : "yes";
}

const SAFE_DEVICES = /^\/dev\/(null|zero|stdin|stdout|stderr|tty|fd\/\d+)$/;
const NETWORK = /^\/dev\/(tcp|udp)\//;

/** `~` and `$NAME` a word holds, as bash will expand them; undefined when the value is unknown. */
function expandWord(w: Word, line: string, env: Record<string, string | undefined>, home: string): string | undefined {
  if (w.exact) return w.glob ? undefined : w.text;
  if (/\$\(|`|\$\(\(/.test(w.text) || w.text.includes("$(…)") || w.text.includes("`…`")) return undefined;
  let text = w.text.replace(/^~(?=\/|$)/, home);
  let ok = true;
  text = text.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => {
    // A variable the line itself may set is unknown until it runs.
    if (new RegExp(`(^|[^$\\w{])${name}(=|\\b)`).test(line.replace(new RegExp(`\\$\\{?${name}\\b`, "g"), ""))) ok = false;
    const v = env[name];
    if (v === undefined) ok = false;
    return v ?? "";
  });
  if (!ok || /[$`*?[]/.test(text)) return undefined;
  return text;
}

interface BashFacts {
  deny?: string;
  /** Something a deny rule may cover, but it cannot be told: asked even with bypassPermissions. */
  unsure?: string;
  /** Everything the line writes or reads is allowed without asking (for an allow rule to cover it). */
  filesAllowed: boolean;
}

/** What the line's redirections and path arguments touch, against the path rules. */
function checkFiles(policy: Policy, line: string, commands: Command[], redirects: ReturnType<typeof analyzeShell>["redirects"], ctx: DecideContext): BashFacts {
  const paths = pathsOf(ctx);
  const env = ctx.env ?? process.env;
  const fileDeny = policy.deny.some((r) => r.spec && accessOf(r.tool));
  const facts: BashFacts = { filesAllowed: true };
  const mark = (k: "deny" | "unsure", why: string) => {
    facts[k] ??= why;
  };
  for (const r of redirects) {
    if (r.op === "<<" || r.op === "<<-" || r.op === "<<<") continue;
    const text = expandWord(r.target, line, env, paths.home);
    if (text === undefined) {
      facts.filesAllowed = false;
      if (fileDeny) mark("unsure", `the redirection target ${r.target.text} is only known when it runs`);
      continue;
    }
    if (NETWORK.test(text)) {
      mark("deny", `${text} opens a network connection; commands may not redirect to /dev/tcp or /dev/udp`);
      continue;
    }
    if (SAFE_DEVICES.test(text)) continue;
    const access = r.op === "<" ? "read" : r.op === "<>" ? "any" : "write";
    const target = resolveTarget(paths, text);
    const rule = protectingRule(policy, paths, target, access);
    if (rule) {
      mark("deny", `the command ${access === "read" ? "reads" : "writes"} ${target.rel ?? target.abs}, which the permission rule ${rule.text} protects`);
      continue;
    }
    if (target.rel === undefined) facts.filesAllowed = false;
    else if (access !== "read" && decide(policy, "write_file", { path: text }, { ...ctx, target: target.abs }).kind !== "allow") facts.filesAllowed = false;
  }
  if (!fileDeny) return facts;
  // Arguments that name a protected file (`cat src/../.env`), from the workspace and from every
  // folder the line changes into.
  const cwds = [paths.root];
  for (const c of commands) {
    if ((commandName(c.words[0]!) === "cd" || commandName(c.words[0]!) === "pushd") && c.words[1]) {
      const to = expandWord(c.words[1], line, env, paths.home);
      if (to === undefined) mark("unsure", `cd ${c.words[1].text} goes to a folder only known when it runs`);
      else cwds.push(resolveTarget(paths, to).abs);
    }
  }
  for (const c of commands) {
    for (const w of c.words.slice(1)) {
      if (w.exact && !w.glob && w.text.startsWith("-") && !w.text.includes("=")) continue;
      const value = w.exact && !w.glob && w.text.startsWith("-") ? w.text.slice(w.text.indexOf("=") + 1) : w.text;
      const candidates = w.glob ? expandGlob(value, cwds) : [expandWord(w.glob ? w : { ...w, text: value }, line, env, paths.home)];
      if (candidates === undefined || candidates.some((x) => x === undefined)) {
        mark("unsure", `the argument ${w.text} is only known when it runs`);
        continue;
      }
      for (const cand of candidates as string[]) {
        for (const cwd of cwds) {
          const target = resolveTarget(paths, cand, cwd);
          const rule = protectingRule(policy, paths, target, "any");
          if (rule) mark("deny", `the command names ${target.rel ?? target.abs}, which the permission rule ${rule.text} protects`);
        }
      }
    }
  }
  return facts;
}

/** A glob argument's matches, as bash expands it (its last segment only); undefined when that cannot be done here. */
function expandGlob(pattern: string, cwds: string[]): (string | undefined)[] | undefined {
  const slash = pattern.lastIndexOf("/");
  const dir = slash < 0 ? "" : pattern.slice(0, slash + 1);
  if (/[*?[]/.test(dir)) return undefined;
  const re = globRegex(pattern.slice(slash + 1));
  const out: string[] = [];
  for (const cwd of cwds) {
    try {
      for (const name of readdirSync(resolvePath(cwd, dir || "."))) if (re.test(name)) out.push(dir + name);
    } catch {
      // No such folder: bash leaves the word as it is.
    }
  }
  return out.length > 0 ? out : [pattern];
}

function globRegex(seg: string): RegExp {
  let re = "";
  for (const ch of seg) re += ch === "*" ? ".*" : ch === "?" ? "." : ch === "[" || ch === "]" ? ch : ch.replace(/[.+^${}()|\\]/g, "\\$&");
  try {
    return new RegExp(`^${re}$`, "s");
  } catch {
    return /^/;
  }
}

function decideBash(policy: Policy, line: string, ctx: DecideContext): Decision {
  const a = analyzeShell(line);
  const facts = checkFiles(policy, line, a.commands, a.redirects, ctx);
  for (const rule of policy.deny) {
    if (rule.tool !== "bash" || !rule.command) continue;
    for (const c of a.commands) {
      const m = matchCommand(rule.command, c, true);
      if (m === "yes") return { kind: "deny", reason: `denied by the permission rule ${rule.text}${c.via.length > 0 ? ` (run through ${c.via.join(" → ")})` : ""}` };
      if (m === "maybe") facts.unsure ??= `it cannot be told whether ${c.words.map((w) => w.text).join(" ").slice(0, 80)} is ${rule.text}`;
    }
    // An unreadable line: a denied name anywhere in it is enough.
    if (a.unsure && line.replace(/['"\\]/g, "").includes(rule.command.words[0]!.slice(rule.command.words[0]!.lastIndexOf("/") + 1))) return { kind: "deny", reason: `denied by the permission rule ${rule.text} (the line cannot be read with confidence, ${a.unsure}, and names it)` };
    if (a.unsure) facts.unsure ??= `the line cannot be read with confidence (${a.unsure})`;
  }
  if (facts.deny) return { kind: "deny", reason: facts.deny };
  if (facts.unsure) return { kind: "ask", reason: `a deny rule may apply and ${facts.unsure}` };
  const bashAllow = policy.allow.filter((r) => r.tool === "bash");
  const everything = bashAllow.find((r) => !r.command);
  if (everything) return { kind: "allow", rule: everything.text };
  if (!a.unsure && !a.hidden && a.commands.length > 0 && facts.filesAllowed) {
    const used: string[] = [];
    const covered = a.commands.every((c) => {
      const r = bashAllow.find((x) => matchCommand(x.command!, c, false) === "yes");
      if (r) used.push(r.text);
      return r !== undefined;
    });
    if (covered) return { kind: "allow", rule: [...new Set(used)].join(" ") };
  }
  return modeDecision(policy, "bash");
}

/** Tools a bare deny rule removes from the model's list (Claude Code hides them too). */
export function hiddenTools(policy: Policy): Set<string> {
  return new Set(policy.deny.filter((r) => !r.spec).map((r) => r.tool));
}

/**
 * The rules that would allow this call, for "always" in the REPL and the hint headless prints:
 * one `Bash(first words:*)` per command the line runs, `Write(path)` per file it redirects to,
 * the tool otherwise. Empty when no rule can allow it (substitutions, an unreadable line).
 */
export function suggestedRules(tool: string, input: unknown, ctx: DecideContext = {}): Rule[] {
  if (tool !== "bash") return [parseRule(tool === "write_file" ? "Write" : tool === "edit_file" ? "Edit" : tool)];
  const line = String((input as { command?: unknown })?.command ?? "");
  const a = analyzeShell(line);
  if (a.unsure || a.hidden || a.commands.length === 0 || a.commands.some((c) => !c.words.every(known))) return [];
  const texts = new Set<string>();
  for (const c of a.commands) {
    const words = c.words.map((w, k) => (k === 0 ? nameFor(w, false) : w.text));
    if (words.some((w) => /[()\s]/.test(w))) return [];
    // "npm test -- x" → "npm test:*"; "ls -la" → "ls:*".
    const prefix = words.length > 1 && !words[1]!.startsWith("-") && /^[\w.@:/+-]+$/.test(words[1]!) ? `${words[0]} ${words[1]}` : words[0]!;
    texts.add(`Bash(${prefix}:*)`);
  }
  const paths = pathsOf(ctx);
  for (const r of a.redirects) {
    if (r.op === "<" || r.op.startsWith("<<") || !known(r.target) || SAFE_DEVICES.test(r.target.text)) continue;
    const t = resolveTarget(paths, r.target.text);
    if (t.rel === undefined || /[()\s*?[\]{}]/.test(t.rel)) return [];
    texts.add(`Write(${t.rel})`);
  }
  return [...texts].map(parseRule);
}
