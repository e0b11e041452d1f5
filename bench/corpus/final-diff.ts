// Ground truth for the file ledger: the files of a session's final diff, read from the patch the
// agent submitted at the end of the recorded session. Used by derive-final-diffs.ts (shared
// corpus, whose lines are read-only) and by the converters of other corpora (which write it into
// meta.final_diff_files). Pure; no guessing: a session without a recognisable submission has none.
import { resultPlainText } from "../../src/messages/blocks.ts";
import type { Message, ToolUseBlock } from "../../src/messages/types.ts";

/**
 * Files a unified diff changes, repo-relative, in order of first appearance: from `diff --git
 * a/X b/Y` headers (Y; X for a deletion), else from `+++ b/Y` / `--- a/X` pairs.
 */
export function diffFiles(patch: string): string[] {
  const out: string[] = [];
  const add = (p: string | undefined) => {
    if (p && p !== "/dev/null" && !out.includes(p)) out.push(p);
  };
  const lines = patch.split(/\r?\n/);
  const git = lines.filter((l) => l.startsWith("diff --git "));
  if (git.length > 0) {
    for (let i = 0; i < lines.length; i++) {
      const m = /^diff --git a\/(.+?) b\/(.+)$/.exec(lines[i]!);
      if (!m) continue;
      // A deleted file's header is followed by "deleted file mode"; its diff names a/X only.
      add(m[2] === m[1] || !/^deleted file mode/.test(lines[i + 1] ?? "") ? m[2] : m[1]);
    }
    return out;
  }
  for (let i = 0; i < lines.length; i++) {
    const minus = /^--- (?:a\/)?([^\t]+?)(?:\t.*)?$/.exec(lines[i]!);
    const plus = /^\+\+\+ (?:b\/)?([^\t]+?)(?:\t.*)?$/.exec(lines[i + 1] ?? "");
    if (!minus || !plus) continue;
    add(plus[1] === "/dev/null" ? minus[1] : plus[1]);
    i++;
  }
  return out;
}

/** Whether a call is the session's submission: mini-swe-agent's sentinel echo, or SWE-agent's `submit`. */
export function isSubmission(use: ToolUseBlock): boolean {
  if (use.name.toLowerCase() === "submit") return true;
  const input = (use.input ?? {}) as Record<string, unknown>;
  const command = input.command ?? input.cmd;
  return typeof command === "string" && (command.includes("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT") || /^\s*submit\s*$/.test(command));
}

/**
 * The patch a session submitted: the result of its last submission call, when that result holds
 * a diff. undefined when the session has no submission or it submitted no diff.
 */
export function submittedPatch(messages: readonly Message[]): string | undefined {
  const subs = new Set<string>();
  let patch: string | undefined;
  for (const m of messages) {
    if (typeof m.content === "string") continue;
    for (const b of m.content) {
      if (b.type === "tool_use" && isSubmission(b)) subs.add(b.id);
      else if (b.type === "tool_result" && subs.has(b.tool_use_id)) {
        const text = resultPlainText(b.content);
        if (/^(?:diff --git |--- )/m.test(text)) patch = text;
      }
    }
  }
  return patch;
}

/** Files of the final diff a session submitted, or undefined when it cannot be derived. */
export function finalDiffFilesOf(messages: readonly Message[]): string[] | undefined {
  const patch = submittedPatch(messages);
  if (patch === undefined) return undefined;
  const files = diffFiles(patch);
  return files.length > 0 ? files : undefined;
}
