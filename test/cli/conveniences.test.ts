// Small things a Claude Code user reaches for (issue 25, item 11): "did you mean" for a mistyped
// flag, every REPL command in --help, --max-budget-usd read as dollars, an unreachable server
// said once. (The REPL's keys: repl-keys.test.ts; type-ahead: repl-typeahead.test.ts.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseArgs, usageText } from "../../src/cli/args.ts";
import { errorLine } from "../../src/cli/errors.ts";
import { createRenderer } from "../../src/cli/markdown.ts";
import { PLAIN, recentExchanges } from "../../src/cli/render.ts";
import { nextMode } from "../../src/cli/repl/shortcuts.ts";
import { closedPort, cliEnv, keyEnv, makeWorkspace, runCli } from "./support.ts";

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

test("an unreachable server is one line that says connection once, not \"Connection error: … (Connection error.)\"", async () => {
  const port = await closedPort();
  const ws = makeWorkspace({ retry: { maxAttempts: 1, baseMs: 1, maxMs: 2 } });
  try {
    for (const provider of ["anthropic", "openai"] as const) {
      const r = await runCli(["-p", "hi", "--provider", provider, "--base-url", `http://127.0.0.1:${port}${provider === "openai" ? "/v1" : ""}`, "--cwd", ws.dir], { env: cliEnv(ws, keyEnv(provider)) });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.match(r.stderr, /^lethe: \w+: connection failed: .*ECONNREFUSED/, r.stderr);
      assert.equal(r.stderr.match(/connection/gi)?.length, 1, r.stderr);
    }
  } finally {
    ws.cleanup();
  }
  // The same message as the SDK words it, whatever the case and the full stop.
  const sdk = new Error("openai: connection failed: Connection error: fetch failed", { cause: new Error("Connection error.") });
  assert.equal(errorLine(sdk), "lethe: openai: connection failed: fetch failed");
  const news = new Error("Connection error.", { cause: new Error("getaddrinfo ENOTFOUND example.invalid") });
  assert.equal(errorLine(news), "lethe: Connection error (getaddrinfo ENOTFOUND example.invalid)", "a cause that says more is kept");
});

test("Shift+Tab's cycle: default → acceptEdits → plan → default; bypassPermissions only for a session started in it", () => {
  assert.deepEqual([nextMode("default", false), nextMode("acceptEdits", false), nextMode("plan", false)], ["acceptEdits", "plan", "default"]);
  assert.equal(nextMode("plan", true), "bypassPermissions");
  assert.equal(nextMode("bypassPermissions", true), "default");
});

test("a resumed session's last replies are rendered as live replies are: no raw **, a long one cut with a count", () => {
  const long = Array.from({ length: 30 }, (_, k) => `- point ${k + 1}`).join("\n");
  const history = [
    { role: "user", content: "how did it go?" },
    { role: "assistant", content: [{ type: "text", text: "**Result**: all `good`." }] },
    { role: "user", content: "and the list?" },
    { role: "assistant", content: [{ type: "text", text: long }] },
  ];
  const shown = recentExchanges(history, 3, PLAIN, createRenderer({ color: false, width: 80 }));
  assert.match(shown, /^ {2}Result: all good\.$/m);
  assert.doesNotMatch(shown, /\*\*|`/);
  assert.match(shown, /point 12$/m);
  assert.doesNotMatch(shown, /point 13$/m);
  assert.match(shown, /… 18 more lines$/);
  // Without a renderer (a pipe), the raw text on one line, as a pipe shows live replies.
  assert.match(recentExchanges(history, 3, PLAIN), /^ {2}\*\*Result\*\*: all `good`\.$/m);
});
