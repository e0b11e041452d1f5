// examples/ai-sdk-route.mjs as a browser's useChat drives it: every request POSTs the whole
// conversation (UI messages) with the chat id, and the route builds a fresh engine on a store.
// 40 turns, with the server restarted halfway (the state lives in the store, not the process).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import { builtBin } from "../cli/support.ts";
import { openaiInputTokens, startFakeOpenAI } from "../support/fakes/openai.ts";
import { isSummary } from "../support/adapters.ts";
import { SUMMARY_TEXT } from "../support/e2e.ts";

const WINDOW = 16_000;
const TURNS = 40;

/** The model: a lookup for each new question, then an answer once the result is in. */
function script() {
  let answers = 0;
  return (body: any) => {
    if (isSummary(body)) return { text: SUMMARY_TEXT };
    const last = body.messages.at(-1);
    if (last?.role === "tool") return { text: `answer ${++answers}` };
    return { toolUses: [{ name: "lookup", input: { command: `cat data/file${answers + 1}.txt` } }] };
  };
}

function startRoute(env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolveStart, reject) => {
    const child = spawn(process.execPath, [resolve("examples/ai-sdk-route.mjs")], { env: { ...process.env, ...env, PORT: "0" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolveStart({ url: m[1]!, child });
    });
    child.stderr!.on("data", (d) => (out += d));
    child.on("exit", (code) => reject(new Error(`the route exited (${code}): ${out}`)));
  });
}

/** The assistant message a response streams, as useChat assembles it. */
async function assistantOf(res: Response): Promise<UIMessage> {
  const text = await res.text();
  const chunks = text
    .split("\n")
    .filter((l) => l.startsWith("data: ") && l !== "data: [DONE]")
    .map((l) => JSON.parse(l.slice(6)) as UIMessageChunk);
  const stream = new ReadableStream<UIMessageChunk>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream })) last = m;
  assert.ok(last, `no message in the response: ${text.slice(0, 300)}`);
  return last;
}

test("examples/ai-sdk-route.mjs: 40 stateless requests with the whole conversation each (server restarted halfway): every request under the window, none refused, each message recorded once in the store", async () => {
  builtBin(); // the example imports the built package
  const fake = await startFakeOpenAI({ script: script(), contextWindow: WINDOW });
  const dir = mkdtempSync(join(tmpdir(), "lethe-route-"));
  const env = { LETHE_BASE_URL: fake.url, OPENAI_API_KEY: "k", LETHE_STORE: join(dir, "store") };
  let route = await startRoute(env);
  try {
    const messages: UIMessage[] = [];
    for (let k = 0; k < TURNS; k++) {
      if (k === TURNS / 2) {
        route.child.kill("SIGKILL");
        route = await startRoute(env);
      }
      messages.push({ id: `u${k}`, role: "user", parts: [{ type: "text", text: `Question ${k}: what is in the next data file?` }] });
      const res = await fetch(route.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: "chat-1", messages }) });
      assert.equal(res.status, 200);
      const reply = await assistantOf(res);
      assert.ok(reply.parts.some((p) => p.type === "text" && /^answer \d+$/.test((p as { text: string }).text)), `turn ${k}: ${JSON.stringify(reply.parts).slice(0, 300)}`);
      messages.push(reply);
    }
    const summaries = fake.requests.filter(isSummary).length;
    assert.equal(fake.served!.length, fake.requests.length, "no request was refused");
    assert.deepEqual(fake.requests.filter((b) => openaiInputTokens(b) > WINDOW).length, 0, "no request over the window");
    // Each turn adds ~1.5k tokens, 60k in all at a 16k window: snip keeps it under the threshold
    // (its state comes from the store: a fresh engine starts from the last snip, not from scratch).
    assert.ok(summaries <= 2, `${summaries} summaries in ${TURNS} requests`);
    assert.ok(fake.requests.length >= TURNS * 2, "a tool call and an answer per turn");
    // The store holds the conversation, each message once, as `lethe export --store` reads it.
    const exported = spawnSync(process.execPath, [builtBin(), "export", "chat-1", "--store", env.LETHE_STORE, "--format", "json"], { encoding: "utf8" });
    assert.equal(exported.status, 0, exported.stderr);
    const entries = (JSON.parse(exported.stdout) as { entries: { type: string; seq?: number; message?: { role: string; content: unknown } }[] }).entries;
    const recorded = entries.filter((e) => e.type === "message");
    assert.deepEqual(recorded.map((e) => e.seq), recorded.map((_, i) => i), "each message once, in order");
    const typed = recorded.filter((e) => JSON.stringify(e.message).includes("Question "));
    assert.equal(typed.length, TURNS, "every question recorded once");
    // What the replies taught the meter is stored for the next request's engine (the route flushes it in onFinish).
    const meter = JSON.parse(readFileSync(join(env.LETHE_STORE, "chat-1", "meter.json"), "utf8")) as { factor: number; lastResponseAt: number };
    assert.ok(meter.factor > 0.5 && meter.factor < 2, `a correction learned from the fake's counts (${meter.factor})`);
    assert.ok(Date.now() - meter.lastResponseAt < 120_000, "the last reply's time");
    assert.equal(entries.filter((e) => e.type === "boundary" && (e as { kind?: string }).kind === "summarize").length, summaries, JSON.stringify(entries.filter((e) => e.type !== "message").map((e) => [e.type, (e as { kind?: string; name?: string }).kind ?? (e as { name?: string }).name])));
  } finally {
    route.child.kill("SIGKILL");
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
