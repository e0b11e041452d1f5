// Claude Code headless compatibility: the invocations a `claude -p` script makes, and the JSON it
// reads, field by field. The shapes follow Claude Code's documented SDK types (SDKResultMessage:
// type, subtype success | error_max_turns | error_during_execution, is_error, duration_ms,
// duration_api_ms, num_turns, result, session_id, total_cost_usd: number, usage,
// permission_denials [{tool_name, tool_use_id, tool_input}], uuid; SDKSystemMessage init with
// session_id, cwd, tools, model, permissionMode, apiKeySource; SDKAssistantMessage /
// SDKUserMessage {type, message, session_id, parent_tool_use_id, uuid}) — as published in the
// Agent SDK's TypeScript reference and mirrored, e.g., in Eclipse Theia's @theia/ai-claude-code
// (common/claude-code-service, SDKResultMessage).
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Step } from "../support/fakes/common.ts";
import { closedPort, cliEnv, keyEnv, makeWorkspace, providerArgs, runCli, startFake } from "./support.ts";

type Shape = Record<string, "string" | "number" | "boolean" | "object" | "array" | "string|null">;

const RESULT: Shape = {
  type: "string",
  subtype: "string",
  is_error: "boolean",
  duration_ms: "number",
  duration_api_ms: "number",
  num_turns: "number",
  session_id: "string",
  total_cost_usd: "number",
  usage: "object",
  permission_denials: "array",
  uuid: "string",
};
const INIT: Shape = { type: "string", subtype: "string", session_id: "string", cwd: "string", tools: "array", model: "string", permissionMode: "string", apiKeySource: "string", uuid: "string" };
const MESSAGE: Shape = { type: "string", message: "object", session_id: "string", parent_tool_use_id: "string|null", uuid: "string" };

function assertShape(obj: any, shape: Shape, what: string) {
  for (const [k, type] of Object.entries(shape)) {
    assert.ok(k in obj, `${what}: has ${k}`);
    const v = obj[k];
    const actual = v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
    assert.ok(type.split("|").includes(actual), `${what}: ${k} is ${type}, got ${actual}`);
  }
  for (const k of ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]) {
    if (shape === RESULT) assert.equal(typeof obj.usage[k], "number", `${what}: usage.${k}`);
  }
}

test("claude -p … --output-format json: success, max turns and an unpriced model give the documented result object", async () => {
  const fake = await startFake("anthropic", {
    script: (body: any): Step => (/use a tool/.test(JSON.stringify(body.messages[0])) && body.messages.length === 1 ? { toolUses: [{ name: "glob", input: { pattern: "*" } }] } : { text: "The answer." }),
  });
  const ws = makeWorkspace();
  try {
    const env = cliEnv(ws, keyEnv("anthropic"));
    let r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p", "hello", "--output-format", "json"], { env });
    assert.equal(r.code, 0, r.stderr);
    let out = JSON.parse(r.stdout);
    assertShape(out, RESULT, "success");
    assert.equal(out.type, "result");
    assert.equal(out.subtype, "success");
    assert.equal(out.is_error, false);
    assert.equal(out.result, "The answer.");
    assert.equal(out.num_turns, 1);
    assert.ok(out.duration_api_ms <= out.duration_ms);
    assert.ok(out.total_cost_usd > 0, "a priced model costs something");
    assert.deepEqual(out.permission_denials, []);

    r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p", "use a tool", "--max-turns", "1", "--output-format", "json"], { env });
    assert.equal(r.code, 1);
    out = JSON.parse(r.stdout);
    assertShape(out, RESULT, "max turns");
    assert.equal(out.subtype, "error_max_turns");
    assert.equal(out.is_error, true);
    assert.ok(Array.isArray(out.errors));

    r = await runCli(["--provider", "anthropic", "--base-url", fake.url, "--model", "my-local-model", "--context-window", "32000", "--cwd", ws.dir, "-p", "hello", "--output-format", "json"], { env });
    assert.equal(r.code, 0, r.stderr);
    out = JSON.parse(r.stdout);
    assert.equal(out.total_cost_usd, 0, "a number, not null");
    assert.match(out.usage.cost_note, /no price known for my-local-model/);
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("claude -p … --output-format json when the model call fails: stdout still holds one result object with is_error and error_during_execution", async () => {
  const port = await closedPort();
  const ws = makeWorkspace({ retry: { maxAttempts: 1, baseMs: 1, maxMs: 2 } });
  try {
    for (const format of ["json", "stream-json"]) {
      const r = await runCli(["--provider", "anthropic", "--base-url", `http://127.0.0.1:${port}`, "--cwd", ws.dir, "-p", "hello", "--output-format", format, ...(format === "stream-json" ? ["--verbose"] : [])], { env: cliEnv(ws, keyEnv("anthropic")) });
      assert.equal(r.code, 1);
      const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
      const out = lines.at(-1);
      assertShape(out, RESULT, `${format} error`);
      assert.equal(out.subtype, "error_during_execution");
      assert.equal(out.is_error, true);
      assert.match(out.errors[0], /connection failed/);
      assert.equal(r.stderr.trim().split("\n").length, 1, "and one line on stderr");
    }
  } finally {
    ws.cleanup();
  }
});

test("claude -p … --output-format stream-json --verbose: init first, messages carry session_id and parent_tool_use_id, the result line is last", async () => {
  const fake = await startFake("anthropic", { script: (body: any): Step => (body.messages.length === 1 ? { toolUses: [{ name: "glob", input: { pattern: "*" } }] } : { text: "Listed." }) });
  const ws = makeWorkspace();
  try {
    const r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p", "list", "--output-format", "stream-json", "--verbose", "--append-system-prompt", "Answer tersely (ORCA).", "--allowedTools", "Bash(ls:*)", "--permission-mode", "acceptEdits"], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assertShape(lines[0], INIT, "init");
    assert.equal(lines[0].subtype, "init");
    assert.equal(lines[0].permissionMode, "acceptEdits");
    assert.equal(lines[0].apiKeySource, "ANTHROPIC_API_KEY");
    const messages = lines.filter((l) => l.type === "user" || l.type === "assistant");
    assert.ok(messages.length >= 4);
    for (const m of messages) {
      assertShape(m, MESSAGE, m.type);
      assert.equal(m.session_id, lines[0].session_id);
      assert.equal(m.parent_tool_use_id, null);
    }
    const last = lines.at(-1);
    assert.equal(last.type, "result");
    assertShape(last, RESULT, "result");
    assert.equal(last.result, "Listed.");
    assert.equal(lines.filter((l) => l.type === "result").length, 1);
    assert.match(JSON.stringify(fake.requests[0].system), /Answer tersely \(ORCA\)\./, "--append-system-prompt reached the model");
  } finally {
    await fake.close();
    ws.cleanup();
  }
});

test("--system-prompt replaces lethe's role; context notes, the environment and AGENTS.md stay; --dangerously-skip-permissions runs commands", async () => {
  const fake = await startFake("anthropic", { script: (body: any): Step => (body.messages.length === 1 ? { toolUses: [{ name: "bash", input: { command: "echo ran > ran.txt" } }] } : { text: "ok" }) });
  const ws = makeWorkspace();
  try {
    const { writeFileSync, existsSync } = await import("node:fs");
    const { join } = await import("node:path");
    writeFileSync(join(ws.dir, "AGENTS.md"), "Rule: KESTREL.");
    const r = await runCli([...providerArgs("anthropic", fake), "--cwd", ws.dir, "-p", "go", "--system-prompt", "You are a release bot (HERON).", "--dangerously-skip-permissions"], { env: cliEnv(ws, keyEnv("anthropic")) });
    assert.equal(r.code, 0, r.stderr);
    const system = JSON.stringify(fake.requests[0].system);
    assert.match(system, /^\[\{"type":"text","text":"You are a release bot \(HERON\)\./);
    assert.doesNotMatch(system, /You are lethe, a coding agent/);
    assert.match(system, /KESTREL/);
    assert.match(system, /<environment>/);
    assert.ok(existsSync(join(ws.dir, "ran.txt")));
  } finally {
    await fake.close();
    ws.cleanup();
  }
});
