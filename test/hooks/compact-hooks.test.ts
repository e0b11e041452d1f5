import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCommandHooks, parseHooksConfig } from "../../src/hooks/compact-hooks.ts";

test("settings: Claude Code's nested form and the flat form, matcher and timeout", () => {
  const c = parseHooksConfig({
    PreCompact: [{ matcher: "manual", hooks: [{ type: "command", command: "echo a", timeout: 5 }] }, { command: "echo b" }],
    PostCompact: [{ command: "true" }],
  });
  assert.deepEqual(c.PreCompact, [{ command: "echo a", timeoutMs: 5_000, matcher: "manual" }, { command: "echo b", timeoutMs: undefined, matcher: undefined }]);
  assert.throws(() => parseHooksConfig({ PreCompact: [{ hooks: [{}] }] }), /without a "command" string/);
});

test("PreCompact: stdout adds instructions; the event arrives as JSON on stdin", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-hooks-"));
  try {
    const hooks = createCommandHooks(parseHooksConfig({ PreCompact: [{ command: `cat > ${dir}/in.json; echo "Keep the migration plan."` }] }), { cwd: dir, sessionId: "s1" });
    const r = await hooks.preCompact!({ trigger: "manual", tokens: 1234, focus: "tests", threshold: 5000, contextWindow: 8000 });
    assert.deepEqual(r, { instructions: "Keep the migration plan." });
    const input = JSON.parse(readFileSync(join(dir, "in.json"), "utf8"));
    assert.equal(input.hook_event_name, "PreCompact");
    assert.equal(input.trigger, "manual");
    assert.equal(input.custom_instructions, "tests");
    assert.equal(input.session_id, "s1");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("PreCompact: exit code 2 blocks with stderr as the reason; other failures warn and go on", async () => {
  const warnings: string[] = [];
  const hooks = createCommandHooks(parseHooksConfig({ PreCompact: [{ command: "echo broken >&2; exit 1" }, { command: "echo 'not during the deploy' >&2; exit 2" }] }), { cwd: tmpdir(), onWarning: (w) => warnings.push(w) });
  const r = await hooks.preCompact!({ trigger: "summarize", tokens: 1, threshold: 5000, contextWindow: 8000 });
  assert.deepEqual(r, { block: "not during the deploy" });
  assert.match(warnings[0]!, /exited with 1: broken/);
});

test("matcher: a manual-only hook does not run on auto compaction; a slow hook is killed", async () => {
  const hooks = createCommandHooks(parseHooksConfig({ PreCompact: [{ matcher: "manual", command: "exit 2" }, { command: "sleep 5", timeoutMs: 100 }] }), { cwd: tmpdir(), onWarning: () => {} });
  assert.equal(await hooks.preCompact!({ trigger: "summarize", tokens: 1, threshold: 5000, contextWindow: 8000 }), undefined);
});

test("PostCompact receives the token counts and summary", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-hooks-"));
  try {
    const hooks = createCommandHooks(parseHooksConfig({ PostCompact: [{ command: `cat > ${dir}/post.json` }] }), { cwd: dir });
    await hooks.postCompact!({ trigger: "summarize", tokensBefore: 900, tokensAfter: 100, summary: "S", threshold: 5000, contextWindow: 8000 });
    const input = JSON.parse(readFileSync(join(dir, "post.json"), "utf8"));
    assert.deepEqual([input.hook_event_name, input.trigger, input.tokens_before, input.tokens_after, input.summary], ["PostCompact", "auto", 900, 100, "S"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("hooks know how full the context is: LETHE_CONTEXT_TOKENS / _THRESHOLD / _WINDOW in their environment and the same in their JSON, from a real compaction", async () => {
  const { createEngine } = await import("../../src/engine/index.ts");
  const { bashSession } = await import("../support/build.ts");
  const dir = mkdtempSync(join(tmpdir(), "lethe-hooks-"));
  try {
    const dump = (name: string) => `cat > ${dir}/${name}.json; printf '%s %s %s' "$LETHE_CONTEXT_TOKENS" "$LETHE_CONTEXT_THRESHOLD" "$LETHE_CONTEXT_WINDOW" > ${dir}/${name}.env`;
    const hooks = createCommandHooks(parseHooksConfig({ PreCompact: [{ command: dump("pre") }], PostCompact: [{ command: dump("post") }] }), { cwd: dir });
    const engine = createEngine({ contextWindow: 100_000, maxOutputTokens: 8_000, hooks });
    const r = await engine.compact(bashSession(20, 2_000));
    const ev = r.events.find((e) => e.kind === "manual");
    assert.ok(ev && ev.kind === "manual");
    const [preTokens, preThreshold, preWindow] = readFileSync(join(dir, "pre.env"), "utf8").split(" ").map(Number);
    assert.deepEqual([preTokens, preThreshold, preWindow], [ev.tokensBefore, engine.threshold, 100_000]);
    const pre = JSON.parse(readFileSync(join(dir, "pre.json"), "utf8"));
    assert.deepEqual([pre.tokens, pre.threshold, pre.context_window], [ev.tokensBefore, engine.threshold, 100_000]);
    const [postTokens] = readFileSync(join(dir, "post.env"), "utf8").split(" ").map(Number);
    assert.equal(postTokens, ev.tokensAfter);
    assert.equal(JSON.parse(readFileSync(join(dir, "post.json"), "utf8")).context_window, 100_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
