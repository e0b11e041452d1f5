// The session's permission gate: every tool call the policy decides (rules, then the mode), what
// the read rules keep from read_file/grep/glob, and the "always" rules. Only "ask" reaches the UI;
// what is not run is recorded (Claude Code's permission_denials) and the model is told why.
import type { PermissionRequest } from "../tools/types.ts";
import { type Policy, decide, protectingRule, suggestedRules } from "./permissions.ts";
import { type RulePaths, rulePaths, targetOf } from "./rule-paths.ts";

export interface PermissionDenial {
  tool_name: string;
  tool_use_id: string;
  tool_input: Record<string, unknown>;
}

export class PermissionGate {
  /** What was not run since the last reset (a run's permission_denials). */
  denials: PermissionDenial[] = [];
  private readonly paths: RulePaths;

  constructor(
    private readonly policy: Policy,
    workspace: string,
    home: string,
    private readonly ask: (() => ((req: PermissionRequest) => Promise<boolean | string>) | undefined),
  ) {
    this.paths = rulePaths(workspace, home);
  }

  async check(req: PermissionRequest): Promise<boolean | string> {
    const d = decide(this.policy, req.tool, req.input, { paths: this.paths, ...(req.path !== undefined ? { target: req.path } : {}) });
    let answer: boolean | string;
    if (d.kind === "allow") answer = true;
    else if (d.kind === "deny") answer = `Not run: ${d.reason}.`;
    else {
      const ui = this.ask();
      const asked = d.reason !== undefined ? { ...req, reason: d.reason } : req;
      answer = ui ? await ui(asked) : `Not run: the permission mode ${this.policy.mode} asks before ${req.tool}, and no one can answer.`;
    }
    if (answer !== true) this.denials.push({ tool_name: req.tool, tool_use_id: req.toolUseId ?? "", tool_input: (req.input ?? {}) as Record<string, unknown> });
    return answer;
  }

  /** The tools' read check, when there are read rules to check (else none: nothing to pay per file). */
  readCheck(): ((abs: string) => string | undefined) | undefined {
    if (!this.policy.deny.some((r) => r.spec && ["read_file", "grep", "glob"].includes(r.tool))) return undefined;
    return (abs) => {
      const target = targetOf(this.paths, abs);
      const rule = protectingRule(this.policy, this.paths, target, "read");
      return rule ? `Not run: denied by the permission rule ${rule.text} (the path is ${target.rel ?? abs}).` : undefined;
    };
  }

  /** The rules "always" would add for this call (none when no rule can allow it). */
  alwaysRules(tool: string, input: unknown): string[] {
    return suggestedRules(tool, input, { paths: this.paths }).map((r) => r.text);
  }

  /** "Always" at a permission prompt: allow calls like this one for the rest of the session. */
  allowAlways(tool: string, input: unknown): string {
    const rules = suggestedRules(tool, input, { paths: this.paths });
    this.policy.allow.push(...rules);
    return rules.map((r) => r.text).join(" ");
  }
}
