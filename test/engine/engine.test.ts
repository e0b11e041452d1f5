import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine } from "../../src/engine/index.ts";
import { validate } from "../../src/messages/invariants.ts";
import type { Message } from "../../src/messages/types.ts";
import { bashSession, calls, results, said, user } from "../support/build.ts";

test("engine: huge results land in <sessionDir>/tool-results, byte for byte", () => {
  const dir = mkdtempSync(join(tmpdir(), "lethe-engine-"));
  try {
    const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, sessionDir: dir });
    const big = "line\n".repeat(20_000);
    const r = engine.prepare([user("go"), calls(["bash", { command: "seq" }, "toolu_1"]), results(["toolu_1", big])]);
    const file = join(dir, "tool-results", "toolu_1.txt");
    assert.ok(existsSync(file));
    assert.equal(readFileSync(file, "utf8"), big);
    assert.equal(r.events[0]?.kind, "budget");
    assert.match(JSON.stringify(r.history), /transcript|tool-results/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("engine.readStored gives back what a layer moved out, with a session folder (disk) or without one (memory); the memory marker claims no file", () => {
  const big = "line\n".repeat(20_000);
  const history = [user("go"), calls(["bash", { command: "seq" }, "toolu_1"]), results(["toolu_1", big])];
  const memory = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000 });
  const r = memory.prepare(history);
  assert.equal(r.events[0]?.kind, "budget");
  const marker = JSON.stringify(r.history);
  assert.doesNotMatch(marker, /read_file/, "not told to open a file that does not exist");
  assert.match(marker, /not a file/);
  assert.match(marker, /tool result \\"toolu_1\\"/);
  assert.equal(memory.readStored("toolu_1"), big);
  assert.equal(memory.readStored("toolu_2"), undefined);
  const dir = mkdtempSync(join(tmpdir(), "lethe-engine-"));
  try {
    const disk = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, sessionDir: dir });
    disk.prepare(history);
    assert.equal(disk.readStored("toolu_1"), big);
    assert.throws(() => disk.readStored(null as never), /readStored/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("engine: a cheap layer's boundary line in the transcript has its tokens before and after (not -1)", async () => {
  const { openTranscript, loadTranscript } = await import("../../src/session/transcript.ts");
  const dir = mkdtempSync(join(tmpdir(), "lethe-engine-"));
  try {
    const transcript = openTranscript(join(dir, "t.jsonl"), { header: { id: "s", cwd: dir } });
    const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, sessionDir: dir, transcript });
    const r = engine.prepare([user("go"), calls(["bash", { command: "seq" }, "toolu_1"]), results(["toolu_1", "line\n".repeat(20_000)])], { fixedTokens: 100 });
    transcript.close();
    const boundary = loadTranscript(join(dir, "t.jsonl")).entries.find((e) => e.type === "boundary") as { kind: string; tokens_before: number; tokens_after: number };
    assert.equal(boundary.kind, "budget");
    assert.equal(boundary.tokens_after, r.measuredTokens);
    assert.ok(boundary.tokens_before > boundary.tokens_after + 10_000, JSON.stringify(boundary));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("engine: every request passes through repair, and the result is valid", () => {
  const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 8_000 });
  const broken: Message[] = [said("hello"), calls(["bash", {}, "x"]), user("where is my result?")];
  assert.ok(validate(broken).length > 0);
  const r = engine.prepare(broken);
  assert.deepEqual(validate(r.history), []);
  assert.ok(r.fixes.length >= 2);
});

test("engine: anchored measure after observe, overThreshold from the anchored count", () => {
  let clock = 0;
  const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 8_000, now: () => clock });
  const h = bashSession(2, 200);
  const first = engine.prepare(h, { fixedTokens: 500 });
  const reply = said("done");
  // The provider says the request was much bigger than we thought (another tokenizer).
  engine.observe(first.history, reply, { input_tokens: 25_000, output_tokens: 10 }, { fixedTokens: 500 });
  clock = 1_000;
  const next = engine.prepare([...first.history, reply, user("and now?")], { fixedTokens: 500 });
  assert.ok(next.measuredTokens > 25_000, `${next.measuredTokens}`);
  assert.equal(next.overThreshold, next.measuredTokens > next.threshold);
  assert.equal(next.overThreshold, true);
  assert.ok(engine.meter.correction() > 1);
});

test("engine: events reach onEvent in pipeline order", () => {
  const seen: string[] = [];
  const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, onEvent: (e) => seen.push(e.kind) });
  engine.prepare([user("go"), calls(["bash", {}, "a"]), results(["a", "z".repeat(100_000)])]);
  assert.deepEqual(seen, ["budget"]);
});
