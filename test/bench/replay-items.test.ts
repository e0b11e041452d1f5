// The benchmark's own definition of the files and shell commands retention looks for
// (bench/replay/items.ts), on hand-written histories, and how it compares with the engine's
// file ledger and work record on the real corpus.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { commandLineOf, commandText, failureLine, filesTouched, patchFiles, shellCommands } from "../../bench/replay/items.ts";
import { contextText, measureRetention, retentionItems } from "../../bench/replay/retention.ts";
import { loadCorpus } from "../../bench/replay.ts";
import { ledgerRecall } from "../../bench/replay/ledger-recall.ts";
import { ledgerOf } from "../../src/compaction/state/ledger.ts";
import { commandOutcomes } from "../../src/compaction/state/work.ts";
import type { Message, ToolUseBlock } from "../../src/messages/types.ts";

const call = (id: string, name: string, input: Record<string, unknown>): Message => ({ role: "assistant", content: [{ type: "tool_use", id, name, input }] });
const answer = (id: string, content: string, isError = false): Message => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content, ...(isError ? { is_error: true } : {}) }],
});
/** A shell call and its answer. */
const sh = (id: string, command: string, output = "<returncode>0</returncode>\n<output>\n</output>", isError = false): Message[] => [call(id, "bash", { command }), answer(id, output, isError)];
const use = (name: string, input: Record<string, unknown>): ToolUseBlock => ({ type: "tool_use", id: "u", name, input });

test("file tools: reads and writes by tool name and path key; a call whose result is an error counts for nothing", () => {
  const h: Message[] = [
    { role: "user", content: "fix it" },
    call("1", "Read", { file_path: "/r/a.py" }),
    answer("1", "     1→x"),
    call("2", "Edit", { file_path: "/r/a.py", old_string: "x", new_string: "y" }),
    answer("2", "ok"),
    call("3", "Write", { file_path: "/r/never.py", content: "z" }),
    answer("3", "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>", true),
    call("4", "Read", { file_path: "/r/src" }),
    answer("4", "EISDIR: illegal operation on a directory, read", true),
    call("5", "MultiEdit", { file_path: "/r/b.ts", edits: [] }),
    answer("5", "ok"),
    call("6", "str_replace_editor", { command: "view", path: "/r/c.py" }),
    answer("6", "c"),
    call("7", "str_replace_based_edit_tool", { command: "str_replace", path: "/r/c.py", old_str: "a", new_str: "b" }),
    answer("7", "ok"),
    call("8", "NotebookEdit", { notebook_path: "/r/n.ipynb", new_source: "" }),
    answer("8", "ok"),
    call("9", "TodoWrite", { todos: [] }),
    answer("9", "ok"),
  ];
  assert.deepEqual(filesTouched(h), { modified: ["/r/a.py", "/r/b.ts", "/r/c.py", "/r/n.ipynb"], read: ["/r/a.py", "/r/c.py"] });
});

test("SWE-agent's tools: open reads and sets the file that path-less edit/insert change; create makes one", () => {
  const h: Message[] = [
    call("1", "create", { filename: "reproduce.py" }),
    answer("1", "[File: /testbed/reproduce.py (1 lines total)]"),
    call("2", "insert", { text: "print(1)" }),
    answer("2", "ok"),
    call("3", "open", { path: "src/marshmallow/fields.py", line_number: 1457 }),
    answer("3", "[File: src/marshmallow/fields.py]"),
    call("4", "edit", { search: "a", replace: "b" }),
    answer("4", "ok"),
    call("5", "find_file", { file_name: "fields.py", dir: "src" }),
    answer("5", "found"),
  ];
  assert.deepEqual(filesTouched(h), { modified: ["reproduce.py", "src/marshmallow/fields.py"], read: ["src/marshmallow/fields.py"] });
});

test("apply_patch (tool or shell) modifies the files its patch names", () => {
  const patch = ["*** Begin Patch", "*** Update File: src/app.py", "@@", "-a", "+b", "*** Add File: src/new.py", "+x", "*** Delete File: old.py", "*** End Patch"].join("\n");
  assert.deepEqual(filesTouched([call("1", "apply_patch", { input: patch }), answer("1", "Done")]).modified, ["src/app.py", "src/new.py", "old.py"]);
  assert.deepEqual(filesTouched(sh("1", `apply_patch << 'EOF'\n${patch}\nEOF`)).modified, ["src/app.py", "src/new.py", "old.py"]);
  // An argv command (Codex's shell tool) as well.
  assert.deepEqual(filesTouched([call("1", "shell", { command: ["apply_patch", patch] }), answer("1", "Done")]).modified, ["src/app.py", "src/new.py", "old.py"]);
  // Unified diffs: +++ b/… (a/ and b/ stripped), --- a/… for a deletion.
  assert.deepEqual(patchFiles("--- a/x.py\n+++ b/x.py\n@@\n--- a/gone.py\n+++ /dev/null\n--- /dev/null\n+++ b/new.py\t2024-01-01"), ["x.py", "gone.py", "new.py"]);
});

test("shell writes: sed -i, redirections, tee, touch, cp/mv destinations, rm, git checkout of a file", () => {
  const h: Message[] = [
    ...sh("1", "cd /testbed && sed -i 's/old/new/g' django/db/models/base.py && python -m pytest tests/ -q"),
    ...sh("2", "git diff > patch.txt 2>&1; echo done >> /tmp/log.txt 2>/dev/null"),
    ...sh("3", "python run.py | tee -a out/run.log"),
    ...sh("4", "touch a/__init__.py && cp src/x.py src/x.py.bak && mv tmp.py final.py"),
    ...sh("5", "rm -f reproduce.py && mkdir -p build/dir"),
    ...sh("6", "git checkout -- src/y.py && git checkout main && git checkout src/z.py"),
    ...sh("7", "sed -i.bak -e 's/a/b/' conf/settings.cfg"),
  ];
  assert.deepEqual(filesTouched(h).modified, [
    "django/db/models/base.py",
    "patch.txt",
    "/tmp/log.txt",
    "out/run.log",
    "a/__init__.py",
    "src/x.py.bak",
    "tmp.py",
    "final.py",
    "reproduce.py",
    "src/y.py",
    "src/z.py",
    "conf/settings.cfg",
  ]);
  assert.deepEqual(filesTouched(h).read, [], "sed -i, cp's source and a script run are not reads");
});

test("shell reads: cat/head/tail/less/nl/wc of plain paths and sed -n; not grep, not a script run, not an expansion", () => {
  const h: Message[] = [
    ...sh("1", "cat README.md src/a.py | grep -n def"),
    ...sh("2", "head -n 50 lib/b.py && tail -20 lib/c.py && wc -l lib/d.py && nl -ba lib/e.py && less docs/f.md"),
    ...sh("3", "cd /testbed && sed -n '10,40p' django/g.py"),
    ...sh("4", "grep -rn 'thing' src/h.py; python src/i.py; diff src/j.py src/k.py"),
    ...sh("5", 'cat $FILE; cat *.py; cat "$HOME/.bashrc"; cat ~/.claude/settings.json; cat Makefile'),
    ...sh("6", "sed -e 's/a/b/' -n src/l.py"),
  ];
  assert.deepEqual(filesTouched(h).read, ["README.md", "src/a.py", "lib/b.py", "lib/c.py", "lib/d.py", "lib/e.py", "docs/f.md", "django/g.py", "~/.claude/settings.json", "src/l.py"]);
  assert.deepEqual(filesTouched(h).modified, []);
});

test("heredocs are data: a script written to a file is not run as commands, its Python file writes count", () => {
  const script = ["cd /testbed && cat > fix.py << 'EOF'", "with open('astroid/modutils.py', 'r') as f:", "    s = f.read()", "rm -rf important.py", "with open('astroid/modutils.py', 'w') as f:", "    f.write(s)", "EOF", "python fix.py"].join("\n");
  assert.deepEqual(filesTouched(sh("1", script)), { modified: ["astroid/modutils.py", "fix.py"], read: [] });
  // python -c with escaped quotes inside a double-quoted script.
  assert.deepEqual(filesTouched(sh("2", `python3 -c "open(\\"out/data.json\\", \\"w\\").write('{}')"`)).modified, ["out/data.json"]);
});

test("a patch written to a file by a heredoc (or Write) and applied later modifies the files of its diff", () => {
  const diff = "--- a/django/db/models/fields/related.py\n+++ b/django/db/models/fields/related.py\n@@ -1 +1 @@\n-a\n+b";
  const h: Message[] = [
    ...sh("1", `cat > /tmp/fix.patch << 'EOF'\n${diff}\nEOF`),
    ...sh("2", "git apply --check /tmp/fix.patch"),
  ];
  assert.deepEqual(filesTouched(h).modified, ["/tmp/fix.patch"], "--check applies nothing");
  const applied = [...h, ...sh("3", "cd /testbed && patch -p1 < /tmp/fix.patch")];
  assert.deepEqual(filesTouched(applied).modified, ["/tmp/fix.patch", "django/db/models/fields/related.py"]);
  const viaWrite: Message[] = [call("1", "Write", { file_path: "./b.diff", content: "--- a/src/q.py\n+++ b/src/q.py\n" }), answer("1", "ok"), ...sh("2", "git apply b.diff")];
  assert.deepEqual(filesTouched(viaWrite).modified, ["./b.diff", "src/q.py"]);
  assert.deepEqual(filesTouched(sh("4", `patch -p1 << 'EOF'\n${diff}\nEOF`)).modified, ["django/db/models/fields/related.py"], "a heredoc fed to patch");
});

test("a command line with a quote never closed is a syntax error: it touches nothing", () => {
  // The shell stops at the unmatched quote (the corpus's result: unexpected EOF while looking for matching `'').
  const h = sh("1", "cd /testbed && sed -i '935a\\    # it doesn\\'t match the object\\'s pk.' django/db/models/base.py", "<returncode>2</returncode>\n<output>\nbash: -c: line 1: unexpected EOF while looking for matching `''\n</output>");
  assert.deepEqual(filesTouched(h), { modified: [], read: [] });
});

test("commandText: shell tools only; an argv list is joined, `bash -lc SCRIPT` is the script", () => {
  assert.equal(commandText(use("Bash", { command: "ls -la", description: "list" })), "ls -la");
  assert.equal(commandText(use("exec_command", { cmd: "npm test" })), "npm test");
  assert.equal(commandText(use("shell", { command: ["bash", "-lc", "cd x && make"] })), "cd x && make");
  assert.equal(commandText(use("shell", { command: ["git", "status"] })), "git status");
  assert.equal(commandText(use("str_replace_editor", { command: "view", path: "/x" })), undefined);
  assert.equal(commandText(use("Read", { file_path: "/x" })), undefined);
  assert.equal(commandText(use("bash", { command: "  " })), undefined);
  assert.equal(commandLineOf("\n  cd /testbed && cat > t.py << 'EOF'  \nimport x\nEOF"), "cd /testbed && cat > t.py << 'EOF'");
  assert.equal(commandLineOf(`echo ${"y".repeat(300)}`).length, 200);
});

test("shellCommands: failures from is_error or a stated non-zero exit code, with the line that says what went wrong", () => {
  const chained = [
    "<returncode>1</returncode>",
    "<output>",
    "Traceback (most recent call last):",
    '  File "/testbed/django/db/utils.py", line 111, in load_backend',
    "    import sqlparse",
    "ModuleNotFoundError: No module named 'sqlparse'",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "Traceback (most recent call last):",
    '  File "/testbed/django/core/exceptions.py", line 5, in <module>',
    "    raise ImproperlyConfigured(msg)",
    "django.core.exceptions.ImproperlyConfigured: 'django.db.backends.dummy' isn't an available database backend.",
    "</output>",
  ].join("\n");
  const h: Message[] = [
    { role: "user", content: "go" },
    ...sh("1", "cd /testbed && python test_issue.py 2>&1", chained),
    ...sh("2", "grep -n nothing src/a.py", "<returncode>1</returncode>\n<output>\n</output>"),
    ...sh("3", "cat ~/x.jsonl | \\\n  sed 's|a|b|' > y", "Exit code 1\n/bin/bash: line 1: : No such file or directory", true),
    ...sh("4", "ls types/", "ls: cannot access 'types/': No such file or directory", true),
    ...sh("5", "python -c 'import traceback; traceback.print_stack()'", "<returncode>0</returncode>\n<output>\nTraceback (most recent call last):\nValueError: printed, not raised\n</output>"),
    ...sh("6", "python -m pytest tests/test_a.py", "==================== FAILURES ====================\nE   AssertionError: expected 2, got 3\nFAILED tests/test_a.py::test_x", true),
    ...sh("7", "sqlfluff fix q.sql", "<returncode>1</returncode>\n<output>\nAre you sure? [Y/n] Traceback (most recent call last):\n  File \"x\", line 1\nEOFError: EOF when reading a line\n</output>"),
    ...sh("8", `make ${"x".repeat(10)}`, `<returncode>2</returncode>\n<output>\nmake: *** [all] Error 2 ${"z".repeat(200)}\n</output>`),
    call("9", "bash", { command: "still running" }),
  ];
  assert.deepEqual(shellCommands(h), [
    { command: "cd /testbed && python test_issue.py 2>&1", exit: "1", error: "django.core.exceptions.ImproperlyConfigured: 'django.db.backends.dummy' isn't an available database backend." },
    { command: "grep -n nothing src/a.py", exit: "1" },
    { command: "cat ~/x.jsonl | \\", exit: "1", error: "/bin/bash: line 1: : No such file or directory" },
    { command: "ls types/", exit: "error", error: "ls: cannot access 'types/': No such file or directory" },
    { command: "python -c 'import traceback; traceback.print_stack()'", exit: "0" },
    { command: "python -m pytest tests/test_a.py", exit: "error", error: "E   AssertionError: expected 2, got 3" },
    { command: "sqlfluff fix q.sql", exit: "1", error: "EOFError: EOF when reading a line" },
    { command: "make xxxxxxxxxx", exit: "2", error: `make: *** [all] Error 2 ${"z".repeat(120 - 24)}` },
  ]);
  assert.equal(failureLine("all good\n"), undefined);
});

test("retention scores the benchmark's items: a failed command needs its error line, a file its path", () => {
  const h: Message[] = [
    { role: "user", content: "Fix the import." },
    ...sh("1", "cd /testbed && sed -i 's/a/b/' pkg/mod.py"),
    ...sh("2", "python t.py", "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File \"t.py\", line 1\nImportError: cannot import name 'x'\n</output>"),
    ...sh("3", "cat pkg/other.py"),
  ];
  const items = retentionItems(h, { text: () => 1 });
  assert.deepEqual(items.modified, ["pkg/mod.py"]);
  assert.deepEqual(items.read, ["pkg/other.py"]);
  // A record that names the failed command but not why it failed keeps the command only half: lost.
  const record: Message[] = [{ role: "user", content: "Fix the import.\n$ cd /testbed && sed -i 's/a/b/' pkg/mod.py  → ok\n$ python t.py  → exit 1\nmodified: pkg/mod.py" }];
  assert.deepEqual(measureRetention(items, record), { latest_request_pct: 100, user_messages_pct: 100, modified_files_pct: 100, read_files_pct: 0, commands_pct: 100 / 3 });
  const withError: Message[] = [{ role: "user", content: `${String(record[0]!.content)}: ImportError: cannot import name 'x'` }];
  assert.equal(measureRetention(items, withError).commands_pct, 200 / 3);
  // The context's text carries a shell call's command unescaped (its JSON would spell \" for a quote).
  assert.ok(contextText(sh("9", 'echo "hi" > a.txt')).includes('echo "hi" > a.txt'));
});

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CORPUS = resolve(ROOT, "../shared/corpus/real_sessions.jsonl");
const DIFFS = resolve(ROOT, "bench/corpus/shared_final_diffs.json");

test("on the real corpus the benchmark's definition and the engine's mostly agree (reported), and it finds the final diffs", { skip: !existsSync(CORPUS) && "no shared corpus" }, (t) => {
  const sessions = loadCorpus(CORPUS, DIFFS);
  const jaccard = (a: readonly string[], b: readonly string[]) => {
    const u = new Set([...a, ...b]);
    return u.size === 0 ? 1 : a.filter((x) => b.includes(x)).length / u.size;
  };
  const rows: string[] = [];
  for (const s of sessions) {
    const mine = filesTouched(s.messages);
    const engine = ledgerOf(s.messages);
    const em = [...engine.modified];
    const er = [...engine.read];
    const mc = shellCommands(s.messages).map((c) => c.command);
    const ec = commandOutcomes(s.messages).map((c) => c.command);
    rows.push(
      `${s.id}: modified ${mine.modified.length} vs engine ${em.length} (overlap ${jaccard(mine.modified, em).toFixed(2)}), read ${mine.read.length} vs ${er.length} (${jaccard(mine.read, er).toFixed(2)}), commands ${mc.length} vs ${ec.length}`,
    );
    // Robust properties only: where the engine sees work, so does the benchmark.
    if (em.length > 0) assert.ok(mine.modified.length > 0, `${s.id}: the engine's ledger lists modified files, the benchmark's definition none`);
    if (ec.length > 0) assert.ok(mc.length > 0, `${s.id}: the engine finds shell commands, the benchmark none`);
  }
  for (const r of rows) t.diagnostic(r);
  // Against ground truth (each session's submitted diff), not against the engine.
  const recall = ledgerRecall(sessions, (h) => filesTouched(h).modified);
  assert.ok(recall, "the shared corpus has final diffs");
  t.diagnostic(`benchmark's modified files vs final diffs: ${recall.found}/${recall.files}; engine ledger: ${ledgerRecall(sessions)?.found}/${ledgerRecall(sessions)?.files}`);
  assert.ok(recall.found >= recall.files - 1, `final-diff files missed: ${recall.missed.join(", ")}`);
});
