// The file ledger counts only what happened: a write or edit that was refused, failed or cancelled
// is never "modified", a read that failed is never "read" (issue 25, item 1).
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { ledgerOf, renderLedger } from "../../src/compaction/state/ledger.ts";
import { createEngine } from "../../src/engine/index.ts";
import type { ContentBlock, Message } from "../../src/messages/types.ts";

type Kind = "write" | "edit" | "read" | "sed" | "cat";
type Outcome = "ok" | "error" | "refused" | "cancelled" | "exit1" | "none";
const call = (kind: Kind, path: string, id: string): ContentBlock => {
  switch (kind) {
    case "write": return { type: "tool_use", id, name: "write_file", input: { path, content: "x" } };
    case "edit": return { type: "tool_use", id, name: "edit_file", input: { path, old_string: "a", new_string: "b" } };
    case "read": return { type: "tool_use", id, name: "read_file", input: { path } };
    case "sed": return { type: "tool_use", id, name: "bash", input: { command: `sed -i 's/a/b/' ${path}` } };
    case "cat": return { type: "tool_use", id, name: "bash", input: { command: `cat ${path}` } };
  }
};
const result = (kind: Kind, outcome: Outcome, id: string): ContentBlock | undefined => {
  const bash = kind === "sed" || kind === "cat";
  switch (outcome) {
    case "ok": return { type: "tool_result", tool_use_id: id, content: bash ? "done\nexit code: 0" : "ok" };
    case "error": return { type: "tool_result", tool_use_id: id, content: `${kind} failed: ENOENT`, is_error: true };
    case "refused": return { type: "tool_result", tool_use_id: id, content: "Not run: the user said no.", is_error: true };
    case "cancelled": return { type: "tool_result", tool_use_id: id, content: "[interrupted by the user before it finished]", is_error: true };
    case "exit1": return { type: "tool_result", tool_use_id: id, content: bash ? "No such file or directory\nexit code: 1" : "ok" };
    case "none": return undefined;
  }
};

test("property: the ledger holds exactly the files of calls that ran and succeeded, whatever the mix of outcomes", () => {
  const step = fc.record({
    kind: fc.constantFrom<Kind>("write", "edit", "read", "sed", "cat"),
    path: fc.constantFrom("a.txt", "b.txt", "src/c.ts", "new.txt"),
    outcome: fc.constantFrom<Outcome>("ok", "error", "refused", "cancelled", "exit1", "none"),
  });
  fc.assert(
    fc.property(fc.array(fc.array(step, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 12 }), (turns) => {
      const history: Message[] = [{ role: "user", content: "work" }];
      const read = new Set<string>();
      const modified = new Set<string>();
      turns.forEach((calls, t) => {
        const uses = calls.map((c, k) => call(c.kind, c.path, `t${t}_${k}`));
        history.push({ role: "assistant", content: uses });
        const results = calls.map((c, k) => result(c.kind, c.outcome, `t${t}_${k}`)).filter((b): b is ContentBlock => b !== undefined);
        // A call with no result never ran (the turn was cut); the rest of its turn's results stand.
        history.push({ role: "user", content: results.length ? results : [{ type: "text", text: "(interrupted)" }] });
        for (const c of calls) {
          const ran = c.outcome === "ok" || (c.outcome === "exit1" && !(c.kind === "sed" || c.kind === "cat"));
          if (!ran) continue;
          if (c.kind === "read" || c.kind === "cat") read.add(c.path);
          else modified.add(c.path);
        }
      });
      const l = ledgerOf(history);
      assert.deepEqual([...l.modified].sort(), [...modified].sort());
      assert.deepEqual([...l.read].sort(), [...read].sort());
    }),
    { numRuns: 300 },
  );
});

test("a write the user refused, then /compact: the rebuilt history does not say the file was modified", async () => {
  const engine = createEngine({ contextWindow: 100_000, maxOutputTokens: 4_000, summarizerMode: "digest" });
  const h: Message[] = [
    { role: "user", content: "create new.txt" },
    { role: "assistant", content: [call("write", "new.txt", "w1"), call("read", "old.txt", "r1")] },
    { role: "user", content: [result("write", "refused", "w1")!, { type: "tool_result", tool_use_id: "r1", content: "old line\n".repeat(3_000) }] },
    { role: "assistant", content: "I did not write it." },
    { role: "user", content: "ok, compact" },
  ];
  const r = await engine.compact(h);
  assert.equal(r.events.at(-1)?.kind, "manual");
  const text = JSON.stringify(r.history);
  assert.doesNotMatch(text, /modified: new\.txt/);
  assert.match(text, /read: old\.txt/);
  assert.doesNotMatch(renderLedger(ledgerOf(h)), /new\.txt/);
});

test("a summary restores only files whose read ran: a read a permission rule refused is not restored from disk", async () => {
  const files: Record<string, string> = { ".env": "SECRET=hunter2", "src/app.ts": "export const app = 1;" };
  const engine = createEngine({ contextWindow: 100_000, maxOutputTokens: 4_000, summarizerMode: "digest", readFile: (p: string) => files[p] });
  const h: Message[] = [
    { role: "user", content: "look around" },
    { role: "assistant", content: [call("read", "src/app.ts", "r1"), call("read", ".env", "r2")] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "r1", content: "export const app = 1;\n".repeat(2_000) }, { type: "tool_result", tool_use_id: "r2", content: "Not run: denied by the permission rule Read(.env).", is_error: true }] },
    { role: "assistant", content: "Read app.ts." },
    { role: "user", content: "compact" },
  ];
  const r = await engine.compact(h);
  const text = JSON.stringify(r.history);
  assert.doesNotMatch(text, /hunter2/);
  assert.doesNotMatch(text, /read: \.env/);
});
