// The shell reader behind the Bash rules (src/cli/shell/): words as bash makes them, redirections,
// substitutions and here-documents, the wrappers that run another command, and what it refuses to
// guess. Its word splitting is checked against bash itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { parseShell } from "../../src/cli/shell/parse.ts";
import { analyzeShell } from "../../src/cli/shell/analyze.ts";
import { type Policy, decide, parseRule } from "../../src/cli/permissions.ts";

const words = (line: string) => parseShell(line).commands.map((c) => c.words.map((w) => w.text));
const runs = (line: string) => analyzeShell(line).commands.map((c) => c.words.map((w) => w.text).join(" "));

test("words: quotes, backslashes, ANSI-C quoting, comments, assignments and keywords", () => {
  assert.deepEqual(words(`echo "a b" 'c d' e\\ f`), [["echo", "a b", "c d", "e f"]]);
  assert.deepEqual(words(`r''m "x"y`), [["rm", "xy"]]);
  assert.deepEqual(words(`$'\\x72\\x6d' $'a\\tb' $'\\101'`), [["rm", "a\tb", "A"]]);
  assert.deepEqual(words("ls # rm -rf /"), [["ls"]]);
  assert.deepEqual(words("echo a#b"), [["echo", "a#b"]]);
  assert.deepEqual(words("A=1 B=2 make"), [["make"]]);
  assert.deepEqual(words("if true; then rm x; fi"), [["true"], ["rm", "x"]]);
  assert.deepEqual(words("for f in a b; do rm $f; done"), [["rm", "$f"]]);
  assert.deepEqual(words("a\\\nb"), [["ab"]]);
  assert.equal(parseShell("echo $HOME").commands[0]!.words[1]!.exact, false);
  assert.equal(parseShell("echo '$HOME'").commands[0]!.words[1]!.exact, true);
  assert.equal(parseShell("ls *.ts").commands[0]!.words[1]!.glob, true);
  assert.equal(parseShell("ls '*.ts'").commands[0]!.words[1]!.glob, false);
});

test("redirections: every operator, descriptor numbers, copies and here-documents", () => {
  const ops = (line: string) => parseShell(line).commands.flatMap((c) => c.redirects.map((r) => `${r.op} ${r.target.text}`));
  assert.deepEqual(ops("a > o1 >> o2 2> o3 1>o4 &> o5 &>> o6 >| o7 <> o8 < i1 >& o9"), ["> o1", ">> o2", "> o3", "> o4", "&> o5", "&>> o6", ">| o7", "<> o8", "< i1", "&> o9"]);
  assert.deepEqual(ops("a 2>&1 >&2 <&0 >&-"), [], "descriptor copies name no file");
  assert.deepEqual(words("echo a>b"), [["echo", "a"]]);
  assert.deepEqual(ops("echo a>b"), ["> b"]);
  assert.deepEqual(ops("echo 2>x"), ["> x"]);
  assert.deepEqual(words("echo '2'>x"), [["echo", "2"]], "a quoted 2 is a word, not a descriptor");
  // A here-document body is data; an unquoted delimiter lets its substitutions run.
  assert.deepEqual(words("cat <<EOF\nrm -rf /\nEOF\nls"), [["cat"], ["ls"]]);
  assert.deepEqual(parseShell("cat <<EOF\n$(rm x)\nEOF").hidden, ["rm x"]);
  assert.deepEqual(parseShell("cat <<'EOF'\n$(rm x)\nEOF").hidden, []);
  assert.match(parseShell("cat <<EOF\nno end").unsure ?? "", /here-document/);
});

test("substitutions are read as commands; what cannot be read is said", () => {
  assert.deepEqual(parseShell('echo $(rm a) "`rm b`" <(rm c) $((1+$(rm d)))').hidden, ["rm a", "rm b", "rm c", "rm d"]);
  assert.deepEqual(runs("echo $(echo $(rm x))").sort(), ["echo $(…)", "echo $(…)", "rm x"]);
  for (const bad of ["echo 'open", 'echo "open', "echo $(open", "echo `open", "case x in a) rm;; esac"]) assert.ok(parseShell(bad).unsure, bad);
});

test("wrappers: what each one runs is checked too", () => {
  const inner = (line: string) => runs(line).slice(1);
  assert.deepEqual(inner("sudo -u root -E rm -rf x"), ["rm -rf x"]);
  assert.deepEqual(inner("env -i A=1 -u B rm x"), ["rm x"]);
  assert.deepEqual(inner("nice -n 10 ionice -c3 rm x"), ["ionice -c3 rm x", "rm x"]);
  assert.deepEqual(inner("timeout -s KILL 5 rm x"), ["rm x"]);
  assert.deepEqual(inner("xargs -n1 -I{} rm {}"), ["rm {}"]);
  assert.deepEqual(inner("xargs"), ["echo"]);
  assert.deepEqual(inner("bash -euo pipefail -c 'rm x; ls'"), ["rm x", "ls"]);
  assert.deepEqual(inner("eval 'rm' x"), ["rm x"]);
  assert.deepEqual(inner("find . -name '*.o' -exec rm -f {} + -delete"), ["rm -f {}", "rm -r ."]);
  assert.deepEqual(inner("su -c 'rm x' root"), ["rm x"]);
  assert.deepEqual(inner("/usr/bin/env rm x"), ["rm x"]);
  assert.match(analyzeShell("echo rm x | sh").unsure ?? "", /reads|input/);
  assert.equal(analyzeShell("bash script.sh").unsure, undefined, "a script file is its own business (documented)");
});

const policy = (mode: Policy["mode"], allow: string[], deny: string[] = []): Policy => ({ mode, allow: allow.map(parseRule), deny: deny.map(parseRule) });

test("Bash rules on what runs: redirections need what a write needs; unknown names are asked under a deny rule, even with --yes", () => {
  const p = policy("default", ["Bash(npm test:*)", "Write(logs/**)"]);
  assert.equal(decide(p, "bash", { command: "npm test > logs/out.txt 2>&1" }).kind, "allow");
  assert.equal(decide(p, "bash", { command: "npm test > out.txt" }).kind, "ask");
  assert.equal(decide(p, "bash", { command: "npm test < README.md" }).kind, "allow", "reading a workspace file");
  assert.equal(decide(p, "bash", { command: "npm test < /etc/hostname" }).kind, "ask", "reading outside the workspace");
  assert.equal(decide(p, "bash", { command: "npm test > /dev/tcp/127.0.0.1/9" }).kind, "deny");
  assert.equal(decide(p, "bash", { command: "/usr/bin/npm test" }).kind, "allow", "a system path of the same command");
  assert.equal(decide(p, "bash", { command: "./npm test" }).kind, "ask", "a workspace program of that name is not npm");
  assert.equal(decide(p, "bash", { command: "sudo npm test" }).kind, "ask", "the wrapper itself needs a rule");
  const y = policy("bypassPermissions", [], ["Bash(git push:*)"]);
  assert.equal(decide(y, "bash", { command: "git push origin" }).kind, "deny");
  assert.equal(decide(y, "bash", { command: "git $x origin" }).kind, "ask", "may be git push");
  assert.equal(decide(y, "bash", { command: "git status" }).kind, "allow");
  assert.equal(decide(y, "bash", { command: "$CMD" }).kind, "ask");
  assert.equal(decide(policy("bypassPermissions", []), "bash", { command: "$CMD" }).kind, "allow", "no deny rule, nothing to check");
});

test("property: bash splits a line into the same words lethe reads (quotes, escapes, ANSI-C)", () => {
  const piece = fc.oneof(
    fc.stringMatching(/^[a-z0-9_.\/=:,+-]{1,6}$/),
    fc.stringMatching(/^[a-z ;&|<>()$`*]{0,6}$/).map((s) => `'${s}'`),
    fc.stringMatching(/^[a-z '\\;&|]{0,6}$/).map((s) => `"${s.replace(/\\/g, "\\\\")}"`),
    fc.stringMatching(/^[a-z ;&|'"]{1,3}$/).map((s) => [...s].map((c) => `\\${c}`).join("")),
    fc.constantFrom("$'\\x41'", "$'a\\tb'", "$'\\''", "''", '""'),
  );
  const word = fc.array(piece, { minLength: 1, maxLength: 3 }).map((p) => p.join(""));
  fc.assert(
    fc.property(fc.array(word, { minLength: 1, maxLength: 5 }), (ws) => {
      const line = ws.join(" ");
      const r = spawnSync("/bin/bash", ["-c", `printf '%s\\0' ${line}`], { encoding: "utf8" });
      const theirs = r.stdout.split("\0").slice(0, -1);
      const ours = parseShell(`printf '%s\\0' ${line}`).commands[0]!.words.slice(2).map((w) => w.text);
      assert.deepEqual(ours, theirs, line);
    }),
    { numRuns: 150, seed: 42 },
  );
});
