// SIGKILL mid-turn, then resume: no message that was sent to the model is lost.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAgent } from "../../src/agent/loop.ts";
import { createEngine } from "../../src/engine/index.ts";
import { createAnthropicClient } from "../../src/model/anthropic.ts";
import { validate } from "../../src/messages/invariants.ts";
import type { Message } from "../../src/messages/types.ts";
import { loadTranscript, openTranscript, resumeContext } from "../../src/session/transcript.ts";
import { startFakeAnthropic } from "../support/fakes/anthropic.ts";
import { TOOLS, bigOutput, toolScript } from "../support/e2e.ts";

/** A request's messages as lethe holds them: the client adds cache_control on the way out. */
function strip(messages: unknown): unknown {
  return JSON.parse(JSON.stringify(messages), (k, v) => (k === "cache_control" ? undefined : v));
}

for (const killAfter of [3, 9, 17]) {
  test(`SIGKILL after ${killAfter} requests, then resume: every message that was sent is in the transcript`, async () => {
    const fake = await startFakeAnthropic({ script: toolScript(30), contextWindow: 24_000 });
    const dir = mkdtempSync(join(tmpdir(), "lethe-crash-"));
    const transcriptPath = join(dir, "transcript.jsonl");
    try {
      const child = spawn(process.execPath, ["--import", "tsx", "test/integration/agent-child.ts", fake.url, dir, transcriptPath], { stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const exited = new Promise((r) => child.on("exit", r));
      // Kill as soon as the fake has received `killAfter` requests (the child is mid-turn then).
      while (fake.requests.length < killAfter) {
        if (child.exitCode !== null) assert.fail(`child exited early: ${stderr}`);
        await new Promise((r) => setTimeout(r, 2));
      }
      child.kill("SIGKILL");
      await exited;

      const sent = fake.requests.map((b) => strip(b.messages) as Message[]);
      const loaded = loadTranscript(transcriptPath);
      assert.deepEqual(loaded.errors, []);
      const live = resumeContext(loaded.entries);
      // The last request sent is a prefix of what resume gives back (its reply may or may not have been written).
      const last = sent.at(-1)!;
      assert.deepEqual(strip(live.slice(0, last.length)), last, "resume lost a message that was sent");
      // Every user message ever sent is somewhere in the transcript.
      const all = JSON.stringify(loaded.entries);
      for (const req of sent) for (const m of req) for (const b of (m.content as { tool_use_id?: string }[])) if (b.tool_use_id) assert.ok(all.includes(b.tool_use_id));

      // Resume and finish the job.
      const client = createAnthropicClient({ baseURL: fake.url, apiKey: "k" });
      const transcript = openTranscript(transcriptPath);
      const engine = createEngine({ contextWindow: 24_000, maxOutputTokens: 2_000, sessionDir: dir, transcript, summarizer: { client, model: "claude-sonnet-4-6" }, config: { micro: { enabled: false } } });
      // A reply whose tool results were never written is answered by repair before the next request.
      const r = await runAgent(live, undefined, {
        engine, client, model: "claude-sonnet-4-6", tools: TOOLS, transcript, maxOutputTokens: 2_000,
        runTool: async (use) => ({ content: bigOutput(String((use.input as { command: string }).command), 1_500) }),
      });
      transcript.close();
      assert.match(r.text, /done after 30 calls/);
      assert.deepEqual(validate(r.history), []);
    } finally {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
