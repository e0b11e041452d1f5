// The permission refusal of headless mode: what the policy would ask about is refused, since no
// one can answer. The model is told by which rule or mode (and how to allow it); stderr gets one
// line and the model one note, both once per run.
import type { RunConfig } from "../config.ts";
import { oneLine } from "../errors.ts";
import { suggestedRules } from "../permissions.ts";
import { rulePaths } from "../rule-paths.ts";
import type { SessionUI } from "../session.ts";

export const HEADLESS_DENIAL_NOTE =
  "[lethe] This session runs headless: no one can answer permission questions, so calls the permission policy does not allow (by default shell commands and file changes) are refused every time. " +
  "Do not try them again. Carry on with the read-only tools (read_file, glob, grep, recall) and, in your final answer, say what you could not do and the exact commands or edits that remain.";

/**
 * What the model and stderr are told when the policy would ask and no one can answer. The rules it
 * suggests are ones that can match (one per command of a compound line); a call that asks because
 * a deny rule could not be checked says so, since no allow rule or mode lets it through.
 */
export function headlessRefusal(mode: string, tool: string, input: unknown, reason?: string, workspace?: string): string {
  if (reason !== undefined) return `Not run: ${reason}; headless, so no one can be asked. Write the command so that what it runs and touches is plain (no variables or substitutions in the command name or file arguments).`;
  const rules = suggestedRules(tool, input, workspace !== undefined ? { paths: rulePaths(workspace) } : {}).map((r) => r.text);
  const how = rules.length > 0 ? `--allowedTools '${rules.join(" ")}', ` : "";
  return `Not run: denied by the permission policy (mode ${mode}; headless, so no one can be asked). Allow it with ${how}--permission-mode acceptEdits (file edits) or bypassPermissions (everything).`;
}

/**
 * The session callbacks of the refusal: `askPermission` answers every question with the refusal
 * (the first one also goes to stderr and queues HEADLESS_DENIAL_NOTE), `takeNotes` hands the queued
 * note to the model.
 */
export function headlessRefuser(cfg: RunConfig, stderr: NodeJS.WritableStream): Required<Pick<SessionUI, "askPermission" | "takeNotes">> {
  let deniedNoted = false;
  const notes: string[] = [];
  return {
    askPermission: async ({ tool, summary, input, reason }) => {
      const refusal = headlessRefusal(cfg.policy.mode, tool, input, reason, cfg.workspace);
      if (!deniedNoted) {
        deniedNoted = true;
        stderr.write(`lethe: refused ${tool} (${oneLine(summary, 120)}): ${refusal.replace(/^Not run: /, "")}\n`);
        notes.push(HEADLESS_DENIAL_NOTE);
      }
      return refusal;
    },
    takeNotes: () => notes.splice(0),
  };
}
