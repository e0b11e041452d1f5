// The file ledger's memoised parts give the same answers as parsing afresh.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { boundedLedger, ledgerOf, parseLedger, renderLedger, renderLedgerWithin, shellFiles } from "../../src/compaction/state/ledger.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
// The walk that indexes each turn's calls is the engine's one walk over new messages now.
import { indexNewMessages as indexNewCalls } from "../../src/compaction/state/prime.ts";
import type { Message } from "../../src/messages/types.ts";
import { calls, results, user } from "../support/build.ts";

function session(): Message[] {
  return [
    user("Fix the parser"),
    calls(["bash", { command: "cat src/a.ts && sed -i 's/x/y/' src/b.ts" }, "t1"]),
    results(["t1", "ok"]),
    calls(["read_file", { path: "README.md" }, "t2"], ["write_file", { path: "docs/x.md", content: "x" }, "t3"]),
    results(["t2", "readme"], ["t3", "written"]),
  ];
}

test("shellFiles: reads, in-place edits and redirections", () => {
  assert.deepEqual(shellFiles("cat src/a.ts && sed -i 's/x/y/' src/b.ts > out.log"), { read: ["src/a.ts"], modified: ["out.log", "src/b.ts"] });
});

test("indexNewCalls walks only the messages it has not seen, newest first, and leaves the ledger unchanged", () => {
  const h = session();
  const seen = new WeakSet<Message>();
  indexNewCalls(h, seen);
  for (const m of h) assert.ok(seen.has(m));
  // A new turn: only the new messages are walked (the walk stops at the first seen one).
  const next = [...h, calls(["bash", { command: "touch new.txt" }, "t4"]), results(["t4", ""])];
  const before = new WeakSet<Message>(h);
  indexNewCalls(next, before);
  assert.ok(before.has(next[5]!) && before.has(next[6]!));
  const l = ledgerOf(next);
  assert.deepEqual([...l.read], ["src/a.ts", "README.md"]);
  assert.deepEqual([...l.modified], ["src/b.ts", "docs/x.md", "new.txt"]);
});

test("a carried ledger block is folded in, and the same block parsed twice gives the same paths", () => {
  const carried = renderLedger({ read: new Set(["old/r.ts"]), modified: new Set(["old/m.ts"]) });
  const h: Message[] = [{ role: "user", content: [{ type: "text", text: carried }] }, ...session().slice(1)];
  const a = ledgerOf(h);
  const b = ledgerOf(h);
  assert.deepEqual([...a.read], ["old/r.ts", "src/a.ts", "README.md"]);
  assert.deepEqual([...a.modified], ["old/m.ts", "src/b.ts", "docs/x.md"]);
  assert.deepEqual(a, b);
  // The memo never leaks mutations: changing one result leaves the next one whole.
  a.read.clear();
  assert.deepEqual([...ledgerOf(h).read], ["old/r.ts", "src/a.ts", "README.md"]);
});

test("issue 13: a patch written to a file and applied later (same call or a later one) modifies the files its diff names", () => {
  const diff = ["--- a/src/app.py", "+++ b/src/app.py", "@@ -1 +1 @@", "-x = 1", "+x = 2", "--- a/tests/test_app.py", "+++ b/tests/test_app.py", "@@ -1 +1 @@", "-y", "+z"].join("\n");
  // Written in one call, applied in the next.
  const two = [
    user("fix it"),
    calls(["bash", { command: `cat > fix.patch <<'EOF'\n${diff}\nEOF` }, "t1"]),
    results(["t1", ""]),
    calls(["bash", { command: "patch -p1 < fix.patch" }, "t2"]),
    results(["t2", "patching file src/app.py"]),
  ];
  assert.deepEqual([...ledgerOf(two).modified].sort(), ["fix.patch", "src/app.py", "tests/test_app.py"]);
  // git apply, in the same call.
  const one = shellFiles(`cat <<EOF > /tmp/p.diff\n${diff}\nEOF\ngit apply /tmp/p.diff`);
  assert.deepEqual(one.patches, { "/tmp/p.diff": ["src/app.py", "tests/test_app.py"] });
  assert.deepEqual(one.applies, ["/tmp/p.diff"]);
  const same = [user("go"), calls(["bash", { command: `cat <<EOF > /tmp/p.diff\n${diff}\nEOF\ngit apply /tmp/p.diff` }, "t1"]), results(["t1", ""])];
  assert.ok(ledgerOf(same).modified.has("src/app.py"));
  // A diff fed straight to patch on stdin.
  assert.deepEqual(shellFiles(`patch -p1 <<'EOF'\n${diff}\nEOF`).modified.sort(), ["src/app.py", "tests/test_app.py"]);
  // A patch that is written but never applied changes nothing (yet).
  const unapplied = [user("go"), calls(["bash", { command: `cat > fix.patch <<'EOF'\n${diff}\nEOF` }, "t1"]), results(["t1", ""])];
  assert.ok(!ledgerOf(unapplied).modified.has("src/app.py"));
});

test("issue 13: SWE-agent's edit acts on the file opened last", () => {
  const h = [
    user("fix it"),
    calls(["bash", { command: "open src/models.py 120" }, "t1"]),
    results(["t1", "[File: src/models.py]"]),
    calls(["bash", { command: "edit 130:132\n        return self.value\nend_of_edit" }, "t2"]),
    results(["t2", "File updated."]),
    calls(["bash", { command: "create reproduce.py" }, "t3"]),
    results(["t3", ""]),
  ];
  const l = ledgerOf(h);
  assert.ok(l.read.has("src/models.py"));
  assert.deepEqual([...l.modified].sort(), ["reproduce.py", "src/models.py"]);
});

test("SWE-agent function calling: edit/insert calls without a path act on the file open or created last", () => {
  const h = [
    user("fix it"),
    calls(["create", { filename: "reproduce.py" }, "t1"]),
    results(["t1", "[File: /testbed/reproduce.py (1 lines total)]"]),
    calls(["insert", { text: "print(1)" }, "t2"]),
    results(["t2", "ok"]),
    calls(["open", { path: "src/marshmallow/fields.py", line_number: 1474 }, "t3"]),
    results(["t3", "[File: src/marshmallow/fields.py]"]),
    calls(["edit", { search: "return int(x)", replace: "return int(round(x))" }, "t4"]),
    results(["t4", "File updated."]),
  ];
  const l = ledgerOf(h);
  assert.deepEqual([...l.modified], ["reproduce.py", "src/marshmallow/fields.py"]);
  assert.ok(l.read.has("src/marshmallow/fields.py"));
  // An edit with nothing opened before it names no file.
  assert.deepEqual([...ledgerOf([user("go"), calls(["edit", { search: "a", replace: "b" }, "t1"]), results(["t1", "ok"])]).modified], []);
});

test("scripts that write files: open(name, 'w') through a variable, Path(…).write_text, perl -pi, sed -i -e", () => {
  const script = [
    "python3 - <<'EOF'",
    "import re",
    "from pathlib import Path",
    "file_path = '/testbed/django/db/models/base.py'",
    "with open(file_path, 'r') as f:",
    "    content = f.read()",
    "with open(file_path, 'w') as f:",
    "    f.write(content)",
    "Path('/testbed/docs/notes.txt').write_text('x')",
    "p = Path(\"/testbed/setup.cfg\")",
    "open('/testbed/tests/test_x.py', \"a\").write('')",
    "p.write_text(p.read_text())",
    "EOF",
  ].join("\n");
  assert.deepEqual(shellFiles(script).modified.sort(), ["/testbed/django/db/models/base.py", "/testbed/docs/notes.txt", "/testbed/setup.cfg", "/testbed/tests/test_x.py"]);
  assert.deepEqual(shellFiles("perl -pi -e 's/foo/bar/g' lib/a.pm lib/b.pm").modified, ["lib/a.pm", "lib/b.pm"]);
  assert.deepEqual(shellFiles("sed -i -e 's/a\\/b/c/' -e 's/x/y/' src/x.py").modified, ["src/x.py"]);
  // Reading through a variable is not a write.
  assert.deepEqual(shellFiles("python -c \"f = 'a.py'; print(open(f).read())\"").modified, []);
});

test("SWE-agent's windowed edit_replace in shell form (`edit 'search' 'replace' False`) acts on the file opened last", () => {
  const h = [
    user("fix it"),
    calls(["bash", { command: 'open "/repo/tests/missing_colon.py"' }, "t1"]),
    results(["t1", "[File: /repo/tests/missing_colon.py (10 lines total)]"]),
    calls(["bash", { command: "edit 'def division(a: float, b: float) -> float' 'def division(a: float, b: float) -> float:' False" }, "t2"]),
    results(["t2", "Replaced 1 occurrences."]),
  ];
  assert.deepEqual([...ledgerOf(h).modified], ["/repo/tests/missing_colon.py"]);
  // `edit FILE` (an editor on a named file) names its file.
  assert.deepEqual(shellFiles("edit src/a.py").modified, ["src/a.py"]);
});

test("quoting and continuations: ; and | inside quotes do not split a command, backslash-newline continues it, dotfiles are files", () => {
  assert.deepEqual(shellFiles("cd /testbed && sed -i '/if data is None:/{N;N;d}' src/marshmallow/schema.py").modified, ["src/marshmallow/schema.py"]);
  assert.deepEqual(shellFiles("sed -i 's/a|b/c/; s/x/y/' lib/m.py && echo done").modified, ["lib/m.py"]);
  // A multi-line sed insert whose lines end in backslashes, one of them with a quote the shell takes literally.
  const insert = "cd /testbed && sed -i '750i\\    def pre_save(self):\\\n        \"\"\"Return field\\'s value.\"\"\"\\\n        return 1' django/db/models/fields/related.py";
  assert.deepEqual(shellFiles(insert).modified, ["django/db/models/fields/related.py"]);
  assert.deepEqual(shellFiles("cp ~/a/one.jsonl \\\n   ~/b/two.jsonl && \\\n  chmod 600 ~/b/two.jsonl").modified, ["~/b/two.jsonl"]);
  assert.deepEqual(shellFiles("cd /testbed && cat > .sqlfluff << 'EOF'\n[sqlfluff]\ndialect = postgres\nEOF").modified, [".sqlfluff"]);
  // git checkout / restore of paths rewrites them (a branch name is not a path).
  assert.deepEqual(shellFiles("cd /testbed && git checkout astroid/builder.py").modified, ["astroid/builder.py"]);
  assert.deepEqual(shellFiles("git checkout -- a.py b/c.py && git restore --staged d.py").modified, ["a.py", "b/c.py", "d.py"]);
  assert.deepEqual(shellFiles("git checkout main").modified, []);
  // A python -c script is one command: its lines are not commands.
  assert.deepEqual(shellFiles("python -c \"\nimport os\ncp = 'x'\nrm = 1\nprint(cp, rm)\n\"").modified, []);
});

test("boundedLedger priced from its lines' counts (the engine's counter) keeps what rendering and counting each try keeps; a path holding a newline is rendered to be priced", () => {
  const path = fc.oneof(fc.stringMatching(/^[\w./-]{1,40}$/), fc.string({ minLength: 1, maxLength: 40 }));
  fc.assert(
    fc.property(fc.uniqueArray(path, { maxLength: 60 }), fc.uniqueArray(path, { maxLength: 20 }), fc.integer({ min: 0, max: 800 }), (read, modified, cap) => {
      const counter = createTokenCounter(undefined, { lineCounted: ["<lethe-work>", "<lethe-files>"] });
      const rendering = { ...counter, recordLine: undefined };
      const l = { read: new Set(read), modified: new Set(modified) };
      const priced = boundedLedger(l, cap, counter);
      const rendered = boundedLedger(l, cap, rendering);
      assert.deepEqual([...priced.read], [...rendered.read]);
      assert.deepEqual([...priced.modified], [...rendered.modified]);
      const left = priced.read.size + priced.modified.size;
      assert.ok(counter.text(renderLedger(priced)) <= cap || left <= 1);
      if (priced.read.size === l.read.size && priced.modified.size === l.modified.size) assert.equal(priced, l, "nothing dropped: the same ledger");
      // Rendered within its cap, its remembered count is the one a counter that never saw it gives.
      const text = renderLedgerWithin(l, cap, counter);
      assert.equal(text, renderLedger(priced));
      assert.equal(counter.text(text), createTokenCounter(undefined, { lineCounted: ["<lethe-files>"] }).text(text));
    }),
    { numRuns: 200 },
  );
});

test("with the engine's counter neither the ledger nor the work record is rendered to be priced: no text is counted while fitting", async () => {
  const { renderWorkWithin } = await import("../../src/compaction/state/work.ts");
  const base = createTokenCounter(undefined, { lineCounted: ["<lethe-work>", "<lethe-files>"] });
  let counted = 0;
  const counter = { ...base, text: (s: string) => (counted++, base.text(s)) };
  const l = { read: new Set(Array.from({ length: 200 }, (_, i) => `src/deep/module_${i}/file_${i}.py`)), modified: new Set(["README.md"]) };
  const kept = boundedLedger(l, 300, counter);
  assert.ok(kept.read.size < 200 && kept.read.size > 0);
  const w = { commands: Array.from({ length: 30 }, (_, i) => ({ command: `python -m pytest tests/test_${i}.py -x -q --tb=long`, exit: "1", error: `AssertionError: ${i}` })), notes: ["the fix is in the parser"] };
  const text = renderWorkWithin(w, 200, counter);
  assert.ok(text !== undefined && text.split("\n").length < 33);
  assert.equal(counted, 0);
  // Rendered, each counts what its fit priced.
  assert.ok(base.text(renderLedger(kept)) <= 300);
  assert.ok(base.text(text) <= 200);
});

test("a ledger a snip renders reads back, at the next snip and in its boundary, as reading its text afresh would (hostile paths included)", async () => {
  const { readLedgerText, ledgerSizes } = await import("../../src/compaction/state/ledger-record.ts");
  const path = fc.oneof(fc.stringMatching(/^[\w./-]{1,30}$/), fc.string({ maxLength: 20 }), fc.constantFrom("a\nread: b", "x\r", "</lethe-files>", "", "p\u2028q", "modified: z"));
  fc.assert(
    fc.property(fc.uniqueArray(path, { maxLength: 30 }), fc.uniqueArray(path, { maxLength: 10 }), (read, modified) => {
      const counter = createTokenCounter(undefined, { lineCounted: ["<lethe-work>", "<lethe-files>"] });
      const text = renderLedgerWithin({ read: new Set(read), modified: new Set(modified) }, 100_000, counter);
      const fresh = readLedgerText(text);
      const back = parseLedger(text);
      assert.deepEqual([...back.read], [...fresh.read]);
      assert.deepEqual([...back.modified], [...fresh.modified]);
      assert.deepEqual(ledgerSizes(text), { read: fresh.read.size, modified: fresh.modified.size });
    }),
    { numRuns: 300 },
  );
});
