import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runReplay } from "../../bench/replay/harness.ts";
import { createFileView, fileTextOf, readPathOf } from "../../bench/replay/files.ts";
import { ALL_POLICIES } from "../../bench/replay/policies/index.ts";
import { withoutInstruction } from "../../bench/replay/policies/lethe.ts";
import {
  SEED,
  compactHistory,
  estimateChars,
  fitToolResults,
  latestUserRequest,
  microCompact,
  parsePersisted,
  seedIO,
  snipCompact,
  toolResultBudget,
} from "../../bench/replay/policies/seed.ts";
import { commonPrefixMessages } from "../../bench/replay/pricing.ts";
import { contextText, measureRetention, newestWithin, retentionItems, typedUserMessages } from "../../bench/replay/retention.ts";
import type { Session, SummaryCall } from "../../bench/replay/types.ts";
import { summaryInstruction, summaryRequest } from "../../src/compaction/summary/summarize.ts";
import { validate } from "../../src/messages/invariants.ts";
import type { Message, ToolResultBlock } from "../../src/messages/types.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";

const text = (role: "user" | "assistant", t: string): Message => ({ role, content: [{ type: "text", text: t }] });
const use = (id: string, command: string, name = "bash"): Message => ({
  role: "assistant",
  content: [
    { type: "text", text: `Running ${command}` },
    { type: "tool_use", id, name, input: name === "bash" ? { command } : { file_path: command } },
  ],
});
const result = (id: string, out: string): Message => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: out }] });
const output = (i: number, chars: number) => Array.from({ length: chars }, (_, k) => (k % 61 === 60 ? "\n" : String.fromCharCode(97 + ((i * 7 + k) % 26)))).join("");

/** A bash session of `rounds` tool calls with `chars`-char outputs; ends with a text reply or an unanswered call. */
function session(id: string, rounds: number, chars: number, trailingCall: boolean, halfway = true): Session {
  const messages: Message[] = [text("user", `Task ${id}: find out why the build fails and fix it.`)];
  for (let i = 0; i < rounds; i++) {
    messages.push(use(`${id}_t${i}`, i % 5 === 4 ? `sed -i 's/a/b/' src/file${i}.py` : `cat src/file${i}.py`));
    messages.push(result(`${id}_t${i}`, output(i, chars)));
    if (halfway && i === Math.floor(rounds / 2)) {
      messages.push(text("assistant", "Halfway there."));
      messages.push(text("user", `Also keep the public API of ${id} unchanged.`));
    }
  }
  messages.push(trailingCall ? use(`${id}_last`, "npm test") : text("assistant", "Fixed: the import path was wrong."));
  return { id, system: "You are a coding agent.", messages };
}

const WORDS = ["the", "cache", "layer", "keeps", "every", "request", "small", "while", "old", "results", "go", "to", "disk", "and", "summary", "text", "stays"];
/** English-like prose of about `chars` characters (the estimator is calibrated on such text). */
const prose = (i: number, chars: number) => {
  const out: string[] = [];
  let n = 0;
  for (let k = 0; n < chars; k++) {
    const w = WORDS[(i * 5 + k * 7 + (k >> 3)) % WORDS.length]!;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(" ");
};

/** A conversation without tools whose text alone passes the seed's 50,000-character limit. */
function chat(id: string, turns: number, chars: number): Session {
  const messages: Message[] = [];
  for (let i = 0; i < turns; i++) {
    messages.push(text("user", `Question ${i} of ${id}: explain part ${i} of the design.`));
    messages.push(text("assistant", prose(i, chars)));
  }
  return { id, system: "You are a helpful assistant.", messages };
}

const assistants = (ss: Session[]) => ss.reduce((n, s) => n + s.messages.filter((m) => m.role === "assistant").length, 0);

const METRIC_KEYS = ["cost_usd", "input_tokens_total", "invariant_violations", "over_window", "prepare_ms_p50", "prepare_ms_p99", "requests", "retention", "summary_calls"];
const RETENTION_KEYS = ["commands_pct", "latest_request_pct", "modified_files_pct", "read_files_pct", "user_messages_pct"];

test("replay: every policy, every window: requests, tokens, cost, summaries, retention, invariants", async () => {
  // "a" crosses lethe's and claude-code's thresholds at 8k before 50 messages (no snip on the summarised request).
  const sessions = [session("a", 20, 3_000, false), session("b", 6, 800, true), chat("c", 12, 6_000)];
  const before = JSON.stringify(sessions);
  const tmp = mkdtempSync(join(tmpdir(), "lethe-replay-test-"));
  try {
    const r = await runReplay(sessions, { windows: [8_000, 200_000], policies: ALL_POLICIES, warmup: true, repeat: 2, tmpRoot: tmp });
    assert.deepEqual(readdirSync(tmp), [], "the work directory is removed");
    assert.equal(JSON.stringify(sessions), before, "the recorded corpus is untouched");
    assert.deepEqual(r.runs.map((x) => x.window), [8_000, 200_000]);
    for (const run of r.runs) {
      assert.deepEqual(Object.keys(run.policies), ["lethe", "seed", "claude-code"]);
      for (const [name, m] of Object.entries(run.policies)) {
        const at = `${name} @ ${run.window}`;
        assert.deepEqual(Object.keys(m).sort(), METRIC_KEYS, at);
        assert.equal(m.requests, assistants(sessions), `${at}: one request per recorded assistant message`);
        assert.ok(m.input_tokens_total > 0, at);
        assert.ok(m.cost_usd > 0, at);
        assert.ok(m.prepare_ms_p50 >= 0 && m.prepare_ms_p99 >= m.prepare_ms_p50, at);
        const d = r.detail.find((x) => x.window === run.window)!.policies[name]!;
        assert.ok(d.repetitions_identical, `${at}: repetitions replay the same thing`);
        assert.equal(d.cache_read_tokens + d.cache_write_tokens, m.input_tokens_total, at);
        assert.equal(d.refused_requests, 0, at);
        // Retention: measured at every compaction that removed messages (summary, snip, reactive),
        // null exactly when none happened; the per-kind figures add up to it.
        const kinds = d.retention_compactions_by_kind;
        assert.equal(kinds.summary, m.summary_calls, `${at}: every summary is measured`);
        assert.equal(d.compactions.length, kinds.summary + kinds.snip + kinds.reactive, at);
        assert.equal(m.retention === null, d.compactions.length === 0, at);
        assert.equal(d.compactions.filter((c) => c.kind === "snip").length, kinds.snip, at);
        assert.equal(d.compactions.filter((c) => c.kind === "snip").length, d.acted.snip ?? 0, `${at}: every snip is measured`);
        for (const k of ["summary", "snip", "reactive"] as const) assert.equal(d.retention_by_kind[k] === null, kinds[k] === 0, `${at} ${k}`);
        if (m.retention) {
          assert.deepEqual(Object.keys(m.retention).sort(), RETENTION_KEYS, at);
          for (const v of Object.values(m.retention)) assert.ok(v === null || (v >= 0 && v <= 100), at);
        }
        if (m.summary_calls > 0) assert.ok(d.summary_output_tokens > 0 && d.cost_summaries_usd > 0, `${at}: summaries are priced`);
      }
      assert.equal(run.policies.lethe!.invariant_violations, 0);
      assert.equal(run.policies["claude-code"]!.invariant_violations, 0);
    }
    const small = r.runs[0]!.policies;
    const large = r.runs[1]!.policies;
    const dSmall = r.detail[0]!.policies;
    // The seed's limit is in characters, the same at every window: the chat passes it at both.
    assert.ok(small.seed!.summary_calls > 0, "the seed summarises a tiny session");
    assert.equal(large.seed!.summary_calls, small.seed!.summary_calls, "the seed does not depend on the window");
    assert.equal(large.seed!.input_tokens_total, small.seed!.input_tokens_total);
    assert.equal(dSmall.seed!.summary_fresh_requests, small.seed!.summary_calls, "the seed's summary request is a fresh one");
    assert.equal(dSmall.seed!.summary_cache_read_tokens, 0, "…with no cache read");
    assert.equal(small.seed!.retention!.latest_request_pct, 100, "the seed carries the latest request");
    // lethe and claude-code summarise on the small window, never at 200k; their summary requests reuse the cache.
    for (const name of ["lethe", "claude-code"]) {
      assert.ok(small[name]!.summary_calls > 0, name);
      assert.equal(large[name]!.summary_calls, 0, name);
      assert.equal(r.detail[1]!.policies[name]!.retention_by_kind.summary, null, name);
      assert.ok(dSmall[name]!.summary_cache_read_tokens > dSmall[name]!.summary_cache_write_tokens, `${name}: the summary request reads the cached prefix`);
      assert.equal(dSmall[name]!.summary_fresh_requests, 0, name);
    }
    // Claude Code's rebuild keeps no user message; lethe's keeps the latest request.
    assert.equal(small["claude-code"]!.retention!.user_messages_pct, 0);
    assert.equal(small.lethe!.retention!.latest_request_pct, 100);
    // Without any compaction, the request after a request shares all of it: mostly cache reads.
    const cc = r.detail[1]!.policies["claude-code"]!;
    assert.ok(cc.cache_read_tokens > cc.cache_write_tokens);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("seed: estimate_chars is len(json.dumps(messages, ensure_ascii=False)), Python's separators included", () => {
  // json.dumps([{"role": "user", "content": "hi"}]) == '[{"role": "user", "content": "hi"}]'
  assert.equal(estimateChars([{ role: "user", content: "hi" }]), '[{"role": "user", "content": "hi"}]'.length);
  const m: Message[] = [text("user", "héllo"), use("t1", "ls")];
  const py =
    '[{"role": "user", "content": [{"type": "text", "text": "héllo"}]}, {"role": "assistant", "content": [{"type": "text", "text": "Running ls"}, ' +
    '{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}]}]';
  assert.equal(estimateChars(m), py.length);
});

test("seed: snip archives the middle to a new transcript every time; its marker follows a user message (the course's violation)", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-seed-test-"));
  try {
    const io = seedIO(dir);
    const h = session("d", 40, 50, false, false).messages.slice(0, -1); // 81 messages, ends with results
    const snipped = snipCompact(h, io);
    // head 3 + marker + tail 46
    assert.equal(snipped.length, 3 + 1 + 46);
    assert.deepEqual(snipped.slice(4), h.slice(-46));
    assert.match(String(snipped[3]!.content), /^\[\d+ messages archived at \.transcripts\/transcript_1\.jsonl\]$/);
    assert.equal(snipped[4]!.role, "assistant");
    assert.ok(validate(snipped).some((v) => v.kind === "role_order"), "faithful to the course: marker after a user message");
    const transcript = readFileSync(join(dir, ".transcripts/transcript_1.jsonl"), "utf8").trim().split("\n");
    assert.equal(transcript.length, h.length, "the transcript holds every message");
    // Two more messages: it fires again, with a new transcript file.
    const next = snipCompact([...snipped, use("x1", "ls"), result("x1", "ok")], io);
    assert.match(String(next[3]!.content), /transcript_2\.jsonl/);
    assert.ok(existsSync(join(dir, ".transcripts/transcript_2.jsonl")));
    // ≤ 50 messages: nothing to do. A middle of exactly one earlier marker (the tail moved back
    // over a result): nothing to do either, and no new transcript.
    assert.equal(snipCompact(snipped, io), snipped);
    const one = [...snipped, text("assistant", "thinking aloud")];
    assert.equal(snipCompact(one, io), one);
    assert.equal(readdirSync(join(dir, ".transcripts")).length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("seed: micro saves seen results to files until the target, keeps the newest 3 seen and the unseen", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-seed-test-"));
  try {
    const io = seedIO(dir);
    const h = session("e", 12, 4_000, false).messages.slice(0, -1); // ends with the unseen result
    const before = estimateChars(h);
    const m = microCompact(h, 40_000, io);
    assert.ok(estimateChars(m) <= 40_000 && before > 40_000);
    const results = m.flatMap((x) => (typeof x.content === "string" ? [] : x.content.filter((b): b is ToolResultBlock => b.type === "tool_result")));
    const saved = results.filter((b) => String(b.content).startsWith("[Earlier tool result saved at .task_outputs/tool-results/"));
    assert.ok(saved.length > 0 && saved.length <= results.length - 4, "the newest 3 seen results and the unseen one are kept");
    assert.equal(String(results.at(-1)!.content).length, 4_000, "the unseen result is untouched");
    // Stops as soon as it is under the target: not every old result goes.
    assert.ok(saved.length < results.length - 4, "stops at the target");
    const first = saved[0]!;
    const path = /saved at (\S+)\]/.exec(String(first.content))![1]!;
    const original = h.flatMap((x) => (typeof x.content === "string" ? [] : x.content)).find((b) => b.type === "tool_result" && b.tool_use_id === first.tool_use_id) as ToolResultBlock;
    assert.equal(readFileSync(join(dir, path), "utf8"), original.content, "saved byte for byte");
    assert.notEqual(m, h);
    assert.equal(JSON.stringify(h).includes("[Earlier tool result saved"), false, "input untouched");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("seed: budget persists results over 30,000 chars of a last message over 200,000; fit shrinks to 1,000-char previews", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-seed-test-"));
  try {
    const io = seedIO(dir);
    const last: Message = {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "b0", content: output(0, 120_000) },
        { type: "tool_result", tool_use_id: "b1", content: output(1, 90_000) },
        { type: "tool_result", tool_use_id: "b2", content: output(2, 20_000) },
      ],
    };
    const h: Message[] = [text("user", "go"), { role: "assistant", content: ["b0", "b1", "b2"].map((id) => ({ type: "tool_use" as const, id, name: "bash", input: { command: "cat x" } })) }, last];
    const b = toolResultBudget(h, io);
    const blocks = (b[2]!.content as ToolResultBlock[]).map((x) => String(x.content));
    assert.ok(parsePersisted(blocks[0]!), "the largest goes first");
    assert.equal(parsePersisted(blocks[0]!)!.preview.length, SEED.previewChars);
    assert.equal(blocks[1]!.length, 90_000, "then 110,000 chars ≤ 200,000: stop");
    const f = fitToolResults(b, 40_000, io);
    assert.ok(estimateChars(f) <= 40_000);
    const fitted = (f[2]!.content as ToolResultBlock[]).map((x) => String(x.content));
    assert.equal(parsePersisted(fitted[1]!)!.preview.length, SEED.fitPreviewChars);
    assert.equal(readFileSync(join(dir, parsePersisted(fitted[1]!)!.path), "utf8"), output(1, 90_000));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("seed: compact_history → one user message with the latest request, the summary and the transcript; a fresh summary request", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-seed-test-"));
  try {
    const calls: SummaryCall[] = [];
    const model = { summarize: (c: SummaryCall) => (calls.push(c), "SUMMARY TEXT") };
    const h = chat("f", 20, 6_000).messages.concat([text("user", "Now write the tests.")]);
    const out = compactHistory(h, seedIO(dir), model);
    assert.equal(out.length, 1);
    assert.match(String(out[0]!.content), /^\[Compacted\]\n\nCurrent user request:\nNow write the tests\.\n\nConversation summary \(reference only\):\nSUMMARY TEXT\n\nFull transcript: \.transcripts\/transcript_1\.jsonl$/);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.request.kind, "fresh");
    assert.ok(calls[0]!.request.kind === "fresh" && calls[0]!.request.text.length <= 80_000 + 300, "the conversation is cut to 80,000 chars");
    // The compacted message carries the request into the next compaction.
    assert.equal(latestUserRequest([...out, text("assistant", "ok"), { role: "user", content: "[3 messages archived at x]" }]), "Now write the tests.");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("retention: items from the recorded history, verbatim substrings of the rebuilt context", () => {
  const h = session("g", 10, 200, false).messages.slice(0, -1);
  const items = retentionItems(h, createTokenCounter());
  assert.equal(items.latest, "Also keep the public API of g unchanged.");
  assert.equal(items.userMessages.length, 2);
  assert.deepEqual(items.modified, ["src/file4.py", "src/file9.py"]);
  assert.equal(items.read.length, 8);
  // The ten shell commands with their outcomes (all succeed: only the command line is looked for).
  assert.equal(items.commands.length, 10);
  assert.deepEqual(items.commands[4], { command: "sed -i 's/a/b/' src/file4.py", exit: "ok" });
  const rebuilt: Message[] = [text("user", `summary… ${items.latest} files: src/file4.py src/file1.py\n$ cat src/file1.py  → ok\n$ sed -i \\'s/a/b/\\' src/file4.py`)];
  const s = measureRetention(items, rebuilt);
  // One command verbatim (cat src/file1.py); the sed one is escaped, which is not verbatim.
  assert.deepEqual(s, { latest_request_pct: 100, user_messages_pct: 50, modified_files_pct: 50, read_files_pct: 12.5, commands_pct: 10 });
  assert.match(contextText([use("x", "cat a.txt"), result("x", "b")]), /cat a\.txt[\s\S]*\nb$/);
});

test("retention: the user's messages are found and selected by the benchmark itself", () => {
  const h: Message[] = [
    { role: "user", content: "First, as a plain string." },
    text("assistant", "ok"),
    { role: "user", content: [{ type: "text", text: "Two blocks," }, { type: "text", text: "  " }, { type: "text", text: "one message." }] },
    use("t1", "ls"),
    result("t1", "a.txt"),
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "not typed" }, { type: "text", text: "Typed after a result." }] },
    text("assistant", "ok"),
    { role: "user", content: [{ type: "text", text: " \n" }] },
  ];
  // Tool results and blank texts are not typed messages; a message's text blocks form one item.
  assert.deepEqual(typedUserMessages(h), ["First, as a plain string.", "Two blocks,\none message.", "Typed after a result."]);
  // Newest first within the budget; the newest always counts; the first that does not fit ends the walk.
  const len = { text: (t: string) => t.length };
  assert.deepEqual(newestWithin(["aaaa", "b", "cccccc", "dd", "eee"], 11, len), ["cccccc", "dd", "eee"]);
  assert.deepEqual(newestWithin(["aaaa", "b", "cccccc", "dd", "eee"], 10, len), ["dd", "eee"], "b would fit, but cccccc ended the walk");
  assert.deepEqual(newestWithin(["a", "far too long"], 3, len), ["far too long"]);
  assert.deepEqual(newestWithin([], 3, len), []);
  // A rebuild that lost an earlier message scores it lost, whatever the engine would have selected.
  const items = retentionItems(h, { text: () => 1 });
  assert.equal(items.latest, "Typed after a result.");
  const s = measureRetention(items, [text("user", "Two blocks,\none message."), text("user", "Typed after a result.")]);
  assert.equal(s.latest_request_pct, 100);
  assert.equal(Number(s.user_messages_pct!.toFixed(2)), 66.67);
});

test("files: the latest content of a path seen in read results, decorations stripped", () => {
  assert.equal(readPathOf({ type: "tool_use", id: "1", name: "bash", input: { command: "cd /testbed && sed -n '1,20p' a/b.py" } }), "a/b.py");
  assert.equal(readPathOf({ type: "tool_use", id: "1", name: "bash", input: { command: "cat a/b.py | head" } }), undefined);
  assert.equal(readPathOf({ type: "tool_use", id: "1", name: "Read", input: { file_path: "/x/y.md" } }), "/x/y.md");
  assert.equal(fileTextOf("<returncode>0</returncode>\n<output>\nline\n</output>", false), "line");
  assert.equal(fileTextOf("<returncode>1</returncode>\n<output>\ncat: x: No such file\n</output>", false), undefined);
  assert.equal(fileTextOf("     1→# T\n     2→body", false), "# T\nbody");
  const v = createFileView();
  v.add(use("r1", "/x/y.md", "Read"));
  v.add(result("r1", "     1→old"));
  v.add(use("r2", "/x/y.md", "Read"));
  v.add(result("r2", "     1→new"));
  assert.equal(v.read("/x/y.md"), "new");
  assert.equal(v.read("/nowhere"), undefined);
});

test("lethe: the summary request's conversation is its messages without the instruction", () => {
  const h = session("h", 2, 100, false).messages.slice(0, -1);
  const req = summaryRequest({ model: "m", history: h, instruction: summaryInstruction({ hasPrevious: false, maxTokens: 1000 }), maxTokens: 1000 });
  assert.deepEqual(withoutInstruction(req.messages), h);
  assert.equal(commonPrefixMessages(h, req.messages), h.length - 1, "everything but the pending message is a shared prefix");
});

test("pricing: common prefix by identity, then by JSON equality", () => {
  const a = text("user", "hi");
  const b = text("assistant", "hello");
  assert.equal(commonPrefixMessages(null, [a, b]), 0);
  assert.equal(commonPrefixMessages([a, b], [a, b, a]), 2);
  assert.equal(commonPrefixMessages([a, b], [a, { ...b, content: [{ type: "text", text: "hello" }] }]), 2);
  assert.equal(commonPrefixMessages([a, b], [a, text("assistant", "changed")]), 1);
});

test("replay: huge results are persisted by each policy's own rule", async () => {
  const big = (i: number) => output(i, 80_000);
  const s: Session = {
    id: "huge",
    system: "",
    messages: [
      text("user", "Read the three logs."),
      {
        role: "assistant",
        content: [0, 1, 2].map((i) => ({ type: "tool_use" as const, id: `h${i}`, name: "bash", input: { command: `cat log${i}` } })),
      },
      { role: "user", content: [0, 1, 2].map((i) => ({ type: "tool_result" as const, tool_use_id: `h${i}`, content: big(i) })) },
      text("assistant", "The logs say the disk is full."),
    ],
  };
  const tmp = mkdtempSync(join(tmpdir(), "lethe-replay-test-"));
  try {
    const r = await runReplay([s], { windows: [200_000], policies: ALL_POLICIES, warmup: false, repeat: 1, tmpRoot: tmp });
    const d = r.detail[0]!.policies;
    const m = r.runs[0]!.policies;
    assert.equal(d["claude-code"]!.acted.persist, 1, "claude-code: three results over 50,000 chars, one request");
    assert.equal(d.seed!.acted.budget, 1, "seed: the message is over 200,000 chars");
    assert.equal(d.seed!.acted.fit, 1, "seed: still over 50,000 chars, nothing seen to clear: previews");
    assert.equal(d.lethe!.acted.budget, 1);
    for (const name of ["lethe", "seed", "claude-code"]) assert.equal(m[name]!.invariant_violations, 0, name);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
