// The work record a snip carries: commands with their outcomes and the agent's conclusions, so the
// agent does not repeat, after a snip, what it already tried.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { type CommandOutcome, carriedWorkOf, commandOutcomes, errorLine, parseWork, renderWork, renderWorkWithin, workRecordOf, type WorkRecord } from "../../src/compaction/state/work.ts";
import type { LayerContext } from "../../src/compaction/types.ts";
import { createMemoryStore } from "../../src/session/tool-results.ts";
import { snip } from "../../src/compaction/layers/snip.ts";
import { DEFAULT_CONFIG } from "../../src/compaction/config/config.ts";
import { WORK_CLOSE, WORK_OPEN, tagOf } from "../../src/compaction/state/tags.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { clippedLine } from "../../src/messages/one-line.ts";
import type { Message } from "../../src/messages/types.ts";
import { measureRetention, retentionItems } from "../../bench/replay/retention.ts";

const call = (id: string, command: string): Message => ({ role: "assistant", content: [{ type: "text", text: `Running ${id}.` }, { type: "tool_use", id, name: "bash", input: { command } }] });
const answer = (id: string, output: string, isError = false): Message => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: output, ...(isError ? { is_error: true } : {}) }] });

test("errorLine: the exception line of a traceback, else the first line naming an error", () => {
  const tb = "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n    import pytz\nModuleNotFoundError: No module named 'pytz'";
  assert.equal(errorLine(tb), "ModuleNotFoundError: No module named 'pytz'");
  assert.equal(errorLine("<returncode>2</returncode>\n<output>\nls: cannot access 'x': No such file or directory\n</output>"), "ls: cannot access 'x': No such file or directory");
  assert.equal(errorLine("all good\n"), undefined);
  assert.equal(errorLine(`error: ${"x".repeat(500)}`)!.length, 120);
});

test("commandOutcomes: shell calls only, first line of the command, exit status and error line", () => {
  const h: Message[] = [
    { role: "user", content: "fix it" },
    call("a", "cd /testbed && cat > t.py << 'EOF'\nimport pytz\nEOF\npython t.py"),
    answer("a", "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\nModuleNotFoundError: No module named 'pytz'\n</output>"),
    { role: "assistant", content: [{ type: "tool_use", id: "b", name: "str_replace_editor", input: { command: "view", path: "/x.py" } }] },
    answer("b", "file"),
    call("c", "pip install pytz"),
    answer("c", "<returncode>0</returncode>\n<output>\n</output>"),
  ];
  assert.deepEqual(commandOutcomes(h), [
    { command: "cd /testbed && cat > t.py << 'EOF'", exit: "1", error: "ModuleNotFoundError: No module named 'pytz'" },
    { command: "pip install pytz", exit: "0" },
  ]);
});

test("the record: parse(render(w)) = w, and it is classified as carried state", () => {
  const line = fc.stringMatching(/^[^\n]{1,80}$/).map((s) => s.trim()).filter((s) => s.length > 0 && !s.includes("  → "));
  const outcome = fc.record({ command: line, exit: fc.constantFrom("0", "1", "127", "ok", "error"), error: fc.option(line, { nil: undefined }) });
  fc.assert(
    fc.property(fc.array(outcome, { maxLength: 12 }), fc.array(line, { maxLength: 2 }), (cmds, notes) => {
      const commands: CommandOutcome[] = cmds.map((c) => (c.error === undefined ? { command: c.command, exit: c.exit } : c));
      const w: WorkRecord = { commands, notes };
      const text = renderWork(w);
      assert.equal(tagOf(text), "work");
      const back = parseWork(text)!;
      assert.deepEqual(back.notes, notes);
      assert.deepEqual(back.commands.map((c) => c.command), commands.map((c) => c.command));
      // A success reads back as ok; a failure keeps its exit status and error line.
      back.commands.forEach((c, i) => {
        const o = commands[i]!;
        if (o.error !== undefined) assert.deepEqual([c.exit, c.error], [o.exit, o.error]);
        else if (o.exit !== "0" && o.exit !== "ok") assert.equal(c.exit, o.exit);
      });
    }),
    { numRuns: 200 },
  );
});

test("workRecordOf folds an earlier record forward and keeps the newest commands", () => {
  const removed: Message[] = [];
  for (let i = 0; i < 40; i++) removed.push(call(`t${i}`, `echo ${i}`), answer(`t${i}`, `${i}`));
  const w = workRecordOf(removed, { commands: [{ command: "make", exit: "2", error: "make: *** [all] Error 2" }], notes: ["old note"] });
  assert.equal(w.commands.length, 30);
  assert.equal(w.commands[29]!.command, "echo 39");
  assert.equal(w.commands[0]!.command, "echo 10");
  assert.deepEqual(w.notes, ["Running t38.", "Running t39."]);
  const few = workRecordOf(removed.slice(0, 4), { commands: [{ command: "make", exit: "2", error: "boom error" }], notes: [] });
  assert.deepEqual(few.commands.map((c) => c.command), ["make", "echo 0", "echo 1"]);
});

test("snip carries the work of what it removes, through a second snip, and retention sees it", () => {
  const ctx = (): LayerContext => ({ config: DEFAULT_CONFIG, window: { contextWindow: 32_000, maxOutputTokens: 8_000 }, tokens: createTokenCounter(), fixedTokens: 0, archivePath: "/tmp/t.jsonl", store: createMemoryStore(), now: 0 });
  const h: Message[] = [{ role: "user", content: "Task: make the tests pass." }];
  for (let i = 0; i < 40; i++) {
    h.push(call(`t${i}`, i === 30 ? "python -m pytest tests/test_a.py" : `grep -n thing${i} src/mod${i}.py ${"x".repeat(3_000)}`));
    h.push(answer(`t${i}`, i === 30 ? "E   AssertionError: expected 2, got 3\nFAILED tests/test_a.py::test_x" : `found ${"y".repeat(2_500)}`, i === 30));
  }
  const first = snip(h, ctx());
  assert.ok(first.event, "the long history is snipped");
  const text = (m: readonly Message[]) => JSON.stringify(m);
  assert.ok(text(first.history).includes("$ python -m pytest tests/test_a.py  -> exit error: E   AssertionError: expected 2, got 3"), "the failed run and why it failed");
  // Grow again and snip again: the record of the first snip is folded into the second's.
  const more = first.history.slice();
  for (let i = 40; i < 70; i++) more.push(call(`t${i}`, `ls dir${i}`), answer(`t${i}`, `z${"w".repeat(3_000)}`));
  const second = snip(more, ctx());
  assert.ok(second.event);
  const carried = JSON.stringify(second.history);
  assert.equal(carried.split("<lethe-work>").length - 1, 1, "one record, not one per snip");
  // The newest 30 commands before the second snip are all in its context, each with its outcome.
  const items = retentionItems(more, createTokenCounter());
  assert.equal(measureRetention(items, second.history).commands_pct, 100);
});

test("what a snip writes into the context is ASCII when what it carries is: its note, the work record, a cut note, the user's messages (an arrow and a dash made the message carrying them, and every boundary line written with it, two-byte strings)", () => {
  const ctx = (): LayerContext => ({ config: DEFAULT_CONFIG, window: { contextWindow: 32_000, maxOutputTokens: 8_000 }, tokens: createTokenCounter(), fixedTokens: 0, archivePath: "/tmp/t.jsonl", store: createMemoryStore(), now: 0 });
  const h: Message[] = [{ role: "user", content: "Task: make the tests pass." }];
  for (let i = 0; i < 40; i++) {
    if (i === 12) h.push({ role: "user", content: [{ type: "text", text: `Also: ${"keep the API stable. ".repeat(600)}` }] });
    h.push({ role: "assistant", content: [{ type: "text", text: `Step ${i}: ${"thinking it through ".repeat(40)}` }, { type: "tool_use", id: `t${i}`, name: "bash", input: { command: i % 3 ? `grep -n thing${i} src/mod${i}.py` : "python -m pytest -x" } }] });
    h.push(answer(`t${i}`, i % 3 ? `found ${"y".repeat(2_500)}` : "E   AssertionError: expected 2, got 3\nFAILED tests/test_a.py::test_x", i % 3 === 0));
  }
  const out = snip(h, ctx());
  assert.ok(out.event, "the long history is snipped");
  const bounded = out.history[out.event.from - 1]!;
  const texts = (bounded.content as { type: string; text?: string }[]).flatMap((b) => (b.type === "text" ? [b.text!] : []));
  assert.ok(texts.some((t) => tagOf(t) === "work"), "a work record is carried");
  for (const t of texts) assert.ok(/^[\x00-\x7f]*$/.test(t), `not ASCII: ${JSON.stringify(t.match(/[^\x00-\x7f]/)?.[0])} in ${JSON.stringify(t.slice(0, 80))}`);
});

test("a record an earlier version carried, with its arrow \"  →\", reads back as it did", () => {
  const legacy = `${WORK_OPEN}\nWork done in the removed part:\n$ pip install pytz  → ok\n$ python t.py  → exit 1: ModuleNotFoundError: No module named 'pytz'\n$ make  → ok\n${WORK_CLOSE}`;
  assert.deepEqual(parseWork(legacy)?.commands, [
    { command: "pip install pytz", exit: "ok" },
    { command: "python t.py", exit: "1", error: "ModuleNotFoundError: No module named 'pytz'" },
    { command: "make", exit: "ok" },
  ]);
});

test("fitting a record priced from its lines' counts (the engine's counter) keeps what rendering and counting each try keeps", () => {
  const line = fc.string({ minLength: 1, maxLength: 120 }).map((s) => s.replace(/\s+/g, " ").trim() || "x");
  const outcome = fc.record({ command: line, exit: fc.constantFrom("0", "1", "ok", "error", "127"), error: fc.option(line, { nil: undefined }) }).map((o) => (o.error === undefined ? { command: o.command, exit: o.exit } : o) as CommandOutcome);
  const work = fc.record({ commands: fc.array(outcome, { maxLength: 35 }), notes: fc.array(line, { maxLength: 2 }) });
  fc.assert(
    fc.property(work, fc.integer({ min: 0, max: 1_500 }), (w, tokens) => {
      const counter = createTokenCounter(undefined, { lineCounted: ["<lethe-work>", "<lethe-files>"] });
      const rendering = { ...counter, recordLine: undefined };
      const priced = renderWorkWithin(w, tokens, counter);
      assert.equal(priced, renderWorkWithin(w, tokens, rendering));
      if (priced === undefined) return;
      assert.ok(counter.text(priced) <= tokens);
      // The count it remembered for the record is the one a counter that never saw it gives.
      assert.equal(counter.text(priced), createTokenCounter(undefined, { lineCounted: ["<lethe-work>"] }).text(priced));
    }),
    { numRuns: 200 },
  );
});

test("the record a snip renders reads back, at the next snip, as reading its text back would (commands holding the arrow or a newline included)", () => {
  const line = fc.oneof(fc.string({ minLength: 1, maxLength: 60 }), fc.constantFrom("a  -> b", "a  → b", "x\ny", "make  -> ok", "make  → ok", "exit 1: boom"));
  // Frozen, as outcomeOf's are (a caller's own outcomes are never kept, see below).
  const outcome = fc.record({ command: line, exit: fc.constantFrom("0", "1", "ok", "error", "a b", "2:"), error: fc.option(line, { nil: undefined }) }).map((o) => Object.freeze(o.error === undefined ? { command: o.command, exit: o.exit } : o) as CommandOutcome);
  const work = fc.record({ commands: fc.array(outcome, { maxLength: 12 }), notes: fc.array(line, { maxLength: 2 }) });
  fc.assert(
    fc.property(work, (w) => {
      const counter = createTokenCounter(undefined, { lineCounted: ["<lethe-work>", "<lethe-files>"] });
      const text = renderWorkWithin(w, 100_000, counter);
      if (text === undefined) return;
      const back = carriedWorkOf([{ role: "user", content: [{ type: "text", text }] }]);
      assert.equal(renderWork(back!), renderWork(parseWork(text)!));
    }),
    { numRuns: 300 },
  );
  // A caller's outcome that it changes after rendering does not change what its text reads back as.
  const mine: CommandOutcome = { command: "make", exit: "0" };
  const counter = createTokenCounter(undefined, { lineCounted: ["<lethe-work>"] });
  const text = renderWorkWithin({ commands: [mine], notes: [] }, 1_000, counter)!;
  mine.command = "rm -rf build";
  assert.equal(carriedWorkOf([{ role: "user", content: [{ type: "text", text }] }])!.commands[0]!.command, "make");
});

test("a note's line (clippedLine, one pass) is what collapsing every whitespace run, trimming and clipping to max less the ellipsis and the ellipsis gives, for any text", () => {
  const reference = (text: string, max: number, ellipsis = "...") => {
    const line = text.replace(/\s+/g, " ").trim();
    return line.length > max ? `${line.slice(0, max - ellipsis.length)}${ellipsis}` : line;
  };
  // Every character \s matches, others near them, surrogates, and long runs of either.
  const spaces = [..." \t\n\v\f\r\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"];
  const others = ["a", "Z", "é", "\u0085", "\u180e", "\u200b", "\u200c", "\u2060", "\ud83d", "\ude00", "😀", "x".repeat(400), "-"];
  const piece = fc.oneof(fc.constantFrom(...spaces), fc.constantFrom(...others), fc.constantFrom(" ".repeat(500), "\n".repeat(50)), fc.string());
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 80 }), fc.integer({ min: 4, max: 400 }), (parts, max) => {
      const text = parts.join("");
      assert.equal(clippedLine(text, max), reference(text, max));
      // As session previews and error lines clip (one "…").
      assert.equal(clippedLine(text, max, "…"), reference(text, max, "…"));
    }),
    { numRuns: 3000 },
  );
  // A reply of megabytes is not copied whole: one long word.
  assert.equal(clippedLine(`  ${"w".repeat(2_000_000)} tail`, 300), `${"w".repeat(297)}...`);
});
