// Path rules see the path the tool will touch (issue 20): for random paths made of `.`, `..`, `//`,
// symlinks and case changes, the decision on what the model wrote equals the decision on the path
// the file tools resolve it to.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Policy, decide, parseRule } from "../../src/cli/permissions.ts";
import { foldsCase, pathRuleCovers, resolveTarget, rulePaths } from "../../src/cli/rule-paths.ts";
import { ToolError, resolveInWorkspace } from "../../src/tools/util.ts";

function fixture() {
  const base = mkdtempSync(join(tmpdir(), "lethe-rules-"));
  const ws = join(base, "ws");
  mkdirSync(join(ws, "a", "b"), { recursive: true });
  mkdirSync(join(ws, "secret"), { recursive: true });
  writeFileSync(join(ws, ".env"), "x");
  writeFileSync(join(ws, "a", "b", "x.ts"), "x");
  writeFileSync(join(ws, "secret", "k"), "x");
  writeFileSync(join(base, "outside.txt"), "x");
  symlinkSync("..", join(ws, "a", "up"));
  symlinkSync("../.env", join(ws, "a", "envlink"));
  symlinkSync("b", join(ws, "a", "dirlink"));
  symlinkSync("../../outside.txt", join(ws, "a", "out"));
  return { base, ws, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

const policy = (mode: Policy["mode"]): Policy => ({
  mode,
  allow: ["Edit(a/b/**)", "Write(a/**)"].map(parseRule),
  deny: ["Read(.env)", "Read(secret/**)", "Edit(a/b/x.ts)"].map(parseRule),
});

test("property: the decision on a path as written equals the decision on the path the tool resolves", () => {
  const f = fixture();
  try {
    const paths = rulePaths(f.ws);
    const segment = fc.constantFrom("a", "b", "up", "envlink", "dirlink", "out", ".env", "secret", "k", "x.ts", ".", "..", "", "A", ".ENV", "B");
    const arb = fc.record({
      segs: fc.array(segment, { minLength: 1, maxLength: 7 }),
      lead: fc.constantFrom("", "./", "absolute"),
      tool: fc.constantFrom("read_file", "edit_file", "write_file", "grep", "glob"),
      mode: fc.constantFrom("default", "acceptEdits", "bypassPermissions") as fc.Arbitrary<Policy["mode"]>,
    });
    let denied = 0;
    let throughLinksOrDots = 0;
    fc.assert(
      fc.property(arb, ({ segs, lead, tool, mode }) => {
        const written = (lead === "absolute" ? `${f.ws}/` : lead) + segs.join("/");
        // What the tools do with it: resolveInWorkspace (realpathLoose, the same function the rules use).
        let resolved: string;
        try {
          resolved = resolveInWorkspace({ workspace: f.ws }, written).rel;
        } catch (e) {
          if (!(e instanceof ToolError)) throw e;
          resolved = resolveTarget(paths, written).abs; // outside: the tools refuse it anyway
        }
        const p = policy(mode);
        const onWritten = decide(p, tool, { path: written }, { paths });
        const onResolved = decide(p, tool, { path: resolved }, { paths });
        if (onWritten.kind === "deny") denied++;
        if (written !== resolved) throughLinksOrDots++;
        assert.equal(onWritten.kind, onResolved.kind, `${tool} ${written} → ${resolved}`);
        // And the path a tool hands the policy (PermissionRequest.path) decides the same.
        const abs = resolveTarget(paths, written).abs;
        assert.equal(decide(p, tool, { path: "ignored" }, { paths, target: abs }).kind, onResolved.kind);
      }),
      { numRuns: 1500, seed: 20261125 },
    );
    assert.ok(denied > 20 && throughLinksOrDots > 1000, `${denied} denied, ${throughLinksOrDots} respelled`);
  } finally {
    f.cleanup();
  }
});

test("path rules: the forms the issue saw, outside patterns, and case on this file system", () => {
  const f = fixture();
  try {
    const paths = rulePaths(f.ws);
    const p = policy("bypassPermissions");
    for (const path of ["src/../.env", "a/../.env", "a//up/.env", "a/envlink", `${f.ws}/a/../.env`, "./.env"]) assert.equal(decide(p, "read_file", { path }, { paths }).kind, "deny", path);
    assert.equal(decide(p, "edit_file", { path: "a/dirlink/x.ts" }, { paths }).kind, "deny", "a symlinked folder leads to a protected file");
    assert.equal(decide(policy("default"), "edit_file", { path: "a/dirlink/../b/y.ts" }, { paths }).kind, "allow", "allowed through the real path");
    assert.equal(decide(policy("default"), "edit_file", { path: "a/up/a/b/y.ts" }, { paths }).kind, "allow");
    assert.equal(decide(policy("default"), "write_file", { path: "a/out" }, { paths }).kind, "ask", "a link out of the workspace is not under a/**");
    // Absolute and home patterns; `/x` counts both ways for a deny rule, only in the workspace for an allow.
    const t = resolveTarget(paths, join(f.base, "outside.txt"));
    assert.ok(pathRuleCovers(paths, `/${f.base}/outside.txt`, t, true));
    assert.ok(pathRuleCovers(paths, `${f.base}/outside.txt`, t, true));
    assert.ok(!pathRuleCovers(paths, `${f.base}/outside.txt`, t, false));
    assert.ok(pathRuleCovers({ ...paths, home: f.base }, "~/outside.txt", t, true));
    // Case: Linux file systems keep it, so .ENV is another file (a folding one would match it).
    assert.equal(foldsCase(f.ws), false);
    assert.equal(decide(p, "read_file", { path: ".ENV" }, { paths }).kind, "allow");
    assert.equal(decide(p, "read_file", { path: ".ENV" }, { paths: { ...paths, caseInsensitive: true } }).kind, "deny");
  } finally {
    f.cleanup();
  }
});
