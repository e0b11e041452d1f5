// Small things a Claude Code user reaches for (issue 25, item 11): "did you mean" for a mistyped
// flag, every REPL command in --help, --max-budget-usd read as dollars.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseArgs, usageText } from "../../src/cli/args.ts";

test("a mistyped long option says which one was meant, as settings keys do", () => {
  assert.throws(() => parseArgs(["--max-turn", "3"]), /unknown option --max-turn \(did you mean --max-turns\?\)/);
  assert.throws(() => parseArgs(["--conitnue"]), /did you mean --continue\?/);
  assert.throws(() => parseArgs(["--frobnicate"]), (e: Error) => /unknown option --frobnicate$/.test(e.message));
});

test("--help lists every REPL command, /memory and /init included", () => {
  const help = usageText("0.0.0");
  for (const c of ["/compact", "/context", "/cost", "/clear", "/resume", "/memory", "/init", "/help", "/exit"]) assert.ok(help.includes(c), c);
});

test("--max-budget-usd takes dollars (0.5, $2, 10) and refuses what is not an amount above 0", () => {
  assert.equal(parseArgs(["--max-budget-usd", "0.5"]).maxBudgetUsd, 0.5);
  assert.equal(parseArgs(["--max-budget-usd", "$2"]).maxBudgetUsd, 2);
  assert.equal(parseArgs(["--max-budget-usd=10"]).maxBudgetUsd, 10);
  for (const bad of ["0", "-1", "abc", "1e400", ""]) assert.throws(() => parseArgs(["--max-budget-usd", bad]), /--max-budget-usd needs (an amount in dollars above 0|a value)/, bad);
});
