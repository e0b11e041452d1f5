import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fromOpenAI, toOpenAI, type OpenAIMessage } from "../../src/messages/openai.ts";
import type { ContentBlock, Message } from "../../src/messages/types.ts";
import { validate } from "../../src/messages/invariants.ts";

// The corpus lives beside the repo (CI clones shared/ next to it).
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const corpusPath = join(repoRoot, "../shared/corpus/real_sessions.jsonl");

interface Session {
  id: string;
  system?: string;
  messages: Message[];
}

const sessions: Session[] = readFileSync(corpusPath, "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as Session);

/** Anthropic → OpenAI → (JSON wire) → Anthropic must be exact; returns the OpenAI form. */
function roundTrip(messages: Message[], system?: string): OpenAIMessage[] {
  const openai = toOpenAI(messages, system === undefined ? {} : { system });
  const back = fromOpenAI(JSON.parse(JSON.stringify(openai)) as OpenAIMessage[]);
  assert.deepEqual(back.messages, messages);
  assert.equal(back.system, system);
  return openai;
}

const hasExt = (ms: OpenAIMessage[]): boolean => ms.some((m) => "lethe" in m);

/** Strict output must only use fields the official API defines. */
function assertStandard(ms: OpenAIMessage[]): void {
  const allowed: Record<string, string[]> = {
    system: ["content", "role"],
    user: ["content", "role"],
    assistant: ["content", "role", "tool_calls"],
    tool: ["content", "role", "tool_call_id"],
  };
  ms.forEach((m, i) => {
    const keys = allowed[m.role];
    assert.ok(keys, `message ${i}: role ${m.role}`);
    for (const k of Object.keys(m)) assert.ok(keys.includes(k), `message ${i}: unexpected key ${k}`);
    if (Array.isArray(m.content)) {
      for (const p of m.content) {
        if (p.type === "text") assert.deepEqual(Object.keys(p).sort(), ["text", "type"]);
        else {
          assert.deepEqual(Object.keys(p).sort(), ["image_url", "type"]);
          assert.deepEqual(Object.keys(p.image_url), ["url"]);
        }
      }
    }
    if (m.role === "assistant") {
      for (const c of m.tool_calls ?? []) {
        assert.deepEqual(Object.keys(c).sort(), ["function", "id", "type"]);
        assert.deepEqual(Object.keys(c.function).sort(), ["arguments", "name"]);
        assert.equal(typeof c.function.arguments, "string");
      }
    }
  });
}

const user = (content: Message["content"]): Message => ({ role: "user", content });
const assistant = (content: Message["content"]): Message => ({ role: "assistant", content });
const use = (id: string, input: unknown = {}, extra: object = {}): ContentBlock => ({ type: "tool_use", id, name: "bash", input, ...extra });
const result = (id: string, content?: unknown, extra: object = {}): ContentBlock =>
  ({ type: "tool_result", tool_use_id: id, ...(content === undefined ? {} : { content }), ...extra }) as ContentBlock;
const text = (t: string, extra: object = {}): ContentBlock => ({ type: "text", text: t, ...extra });
const png = { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } as const;

// ── the real corpus ────────────────────────────────────────────────────────────────

test("corpus: every session survives Anthropic → OpenAI → Anthropic exactly, system included", () => {
  assert.ok(sessions.length >= 20);
  for (const s of sessions) {
    assert.equal(typeof s.system, "string", s.id);
    roundTrip(s.messages, s.system);
  }
});

test("corpus: the extension appears only where OpenAI cannot say it (signed thinking, is_error)", () => {
  for (const s of sessions) {
    const openai = toOpenAI(s.messages, { system: s.system });
    const results = s.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content)).filter((b) => b.type === "tool_result");
    const signed = s.messages.filter((m) => m.role === "assistant" && typeof m.content !== "string" && m.content.some((b) => b.type === "thinking"));
    assert.equal(openai.filter((m) => m.role === "tool").length, results.length, s.id);
    const withExt = openai.filter((m) => "lethe" in m);
    assert.equal(withExt.length, signed.length + results.filter((r) => r.is_error !== undefined).length, s.id);
    for (const m of withExt) assert.ok(m.role === "tool" || (m.role === "assistant" && m.reasoning_content !== undefined), s.id);
  }
});

test("corpus: strict output uses only standard fields and still converts back", () => {
  for (const s of sessions) {
    const strict = toOpenAI(s.messages, { system: s.system, strict: true });
    assertStandard(strict);
    const back = fromOpenAI(strict);
    assert.equal(back.system, s.system);
    assert.equal(back.messages.length, s.messages.length, s.id);
    const ids = (ms: Message[]) => ms.flatMap((m) => (typeof m.content === "string" ? [] : m.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []))));
    assert.deepEqual(ids(back.messages), ids(s.messages));
  }
});

// ── Anthropic → OpenAI mapping ─────────────────────────────────────────────────────

test("tool_use becomes tool_calls with JSON.stringify(input); no text gives content null", () => {
  const openai = roundTrip([user("go"), assistant([use("toolu_1", { cmd: "ls", n: [1, 2] }), use("toolu_2")])]);
  assert.deepEqual(openai[1], {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "toolu_1", type: "function", function: { name: "bash", arguments: '{"cmd":"ls","n":[1,2]}' } },
      { id: "toolu_2", type: "function", function: { name: "bash", arguments: "{}" } },
    ],
  });
});

test("assistant text: one block is string content, several are text parts", () => {
  const one = roundTrip([assistant([text("hi")])]);
  assert.deepEqual(one, [{ role: "assistant", content: "hi" }]);
  const two = roundTrip([assistant([text("a"), text("b"), use("t1")])]);
  assert.deepEqual(two[0]!.content, [{ type: "text", text: "a" }, { type: "text", text: "b" }]);
  assert.equal(hasExt(two), false);
});

test("tool_results become tool messages in order right after the assistant; other blocks a following user message", () => {
  const openai = roundTrip([
    user("go"),
    assistant([text("running"), use("a"), use("b")]),
    user([result("b", "B out"), result("a", [text("A1"), text("A2")]), text("next"), { type: "image", source: png }]),
    assistant([text("done")]),
  ]);
  assert.deepEqual(openai.slice(2), [
    { role: "tool", tool_call_id: "b", content: "B out" },
    { role: "tool", tool_call_id: "a", content: [{ type: "text", text: "A1" }, { type: "text", text: "A2" }] },
    { role: "user", content: [{ type: "text", text: "next" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }] },
    { role: "assistant", content: "done" },
  ]);
});

test("a lone text after tool results becomes plain string content", () => {
  const openai = roundTrip([assistant([use("a")]), user([result("a", "ok"), text("now this")])]);
  assert.deepEqual(openai[2], { role: "user", content: "now this" });
});

test("images: base64 → data URL, url → url, and back", () => {
  const openai = roundTrip([user([{ type: "image", source: png }, { type: "image", source: { type: "url", url: "https://x.test/a.jpg" } }])]);
  assert.deepEqual(openai[0], {
    role: "user",
    content: [
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      { type: "image_url", image_url: { url: "https://x.test/a.jpg" } },
    ],
  });
});

test("thinking → reasoning_content; the signature rides in the extension only", () => {
  const openai = roundTrip([assistant([{ type: "thinking", thinking: "hmm", signature: "sig==" }, text("answer")])]);
  assert.deepEqual(openai[0], {
    role: "assistant",
    content: "answer",
    reasoning_content: "hmm",
    lethe: { blocks: [{ type: "thinking", signature: "sig==" }, { type: "text" }] },
  });
  const unsigned = roundTrip([assistant([{ type: "thinking", thinking: "hmm" }, text("answer")])]);
  assert.deepEqual(unsigned[0], { role: "assistant", content: "answer", reasoning_content: "hmm" });
});

test("system is a leading system message; empty string and absence are kept apart", () => {
  assert.deepEqual(roundTrip([user("x")], "be brief")[0], { role: "system", content: "be brief" });
  assert.deepEqual(roundTrip([user("x")], "")[0], { role: "system", content: "" });
  assert.equal(roundTrip([user("x")]).length, 1);
});

// ── what OpenAI cannot express: every case must come back exactly ─────────────────

const lossless: { name: string; history: Message[]; ext: boolean }[] = [
  { name: "redacted_thinking", ext: true, history: [assistant([{ type: "redacted_thinking", data: "enc" }, text("x")])] },
  { name: "is_error true", ext: true, history: [assistant([use("a")]), user([result("a", "boom", { is_error: true })])] },
  { name: "is_error false", ext: true, history: [assistant([use("a")]), user([result("a", "fine", { is_error: false })])] },
  { name: "tool_result text block list", ext: false, history: [assistant([use("a")]), user([result("a", [text("one")])])] },
  { name: "tool_result with an image", ext: true, history: [assistant([use("a")]), user([result("a", [text("see"), { type: "image", source: png }])])] },
  { name: "tool_result without content", ext: true, history: [assistant([use("a")]), user([result("a")])] },
  { name: "tool_result with empty content", ext: false, history: [assistant([use("a")]), user([result("a", "")])] },
  { name: "text before thinking", ext: true, history: [assistant([text("x"), { type: "thinking", thinking: "t" }])] },
  { name: "tool_use before text", ext: true, history: [assistant([use("a"), text("x")]), user([result("a", "r")])] },
  { name: "two thinking blocks", ext: true, history: [assistant([{ type: "thinking", thinking: "a", signature: "s1" }, { type: "thinking", thinking: "b", signature: "s2" }, text("x")])] },
  { name: "user string content", ext: false, history: [user("plain")] },
  { name: "user single text block", ext: false, history: [user([text("plain")])] },
  { name: "user empty block list", ext: false, history: [user([])] },
  { name: "assistant string content", ext: true, history: [user("q"), assistant("plain answer")] },
  { name: "extra props on text", ext: true, history: [user([text("x", { cache_control: { type: "ephemeral" } })]), assistant([text("y", { citations: [] })])] },
  { name: "extra props on tool_use and tool_result", ext: true, history: [assistant([use("a", {}, { caller: "z" })]), user([result("a", "r", { cache_control: { type: "ephemeral" } })])] },
  { name: "extra props on image", ext: true, history: [user([{ type: "image", source: png, cache_control: { type: "ephemeral" } }])] },
  { name: "image with another source type", ext: true, history: [user([text("a"), { type: "image", source: { type: "file", file_id: "f1" } }, text("b")])] },
  { name: "empty text blocks", ext: false, history: [user([text("")]), assistant([text(""), use("a")]), user([result("a", "r"), text("")]), assistant([text(""), text("x")])] },
  { name: "empty text beside thinking", ext: true, history: [assistant([{ type: "thinking", thinking: "" }, text("")])] },
  { name: "tool_use input array/string/null/number", ext: true, history: [assistant([use("a", [1]), use("b", "s"), use("c", null), use("d", 7)]), user([result("a", "1"), result("b", "2"), result("c", "3"), result("d", "4")])] },
  { name: "tool_use input that looks like a raw wrapper", ext: true, history: [assistant([use("a", { _raw: "{}" })]), user([result("a", "r")])] },
  { name: "results split over two user messages", ext: true, history: [assistant([use("a"), use("b")]), user([result("a", "1")]), user([result("b", "2")])] },
  { name: "user string right after tool results", ext: true, history: [assistant([use("a")]), user([result("a", "1")]), user("interrupt")] },
  { name: "text before a tool_result in one user message", ext: true, history: [assistant([use("a"), use("b")]), user([result("a", "1"), text("mid"), result("b", "2")])] },
  { name: "consecutive same-role messages", ext: false, history: [user("a"), user("b"), assistant([text("c")]), assistant([text("d")])] },
];

for (const c of lossless) {
  test(`lossless: ${c.name}`, () => {
    const openai = roundTrip(c.history, "sys");
    assert.equal(hasExt(openai), c.ext, c.ext ? "needs the extension" : "needs no extension");
    const strict = toOpenAI(c.history, { system: "sys", strict: true });
    assertStandard(strict);
    fromOpenAI(strict); // lossy but well-formed
  });
}

test("lossless: all the odd cases in one history", () => {
  roundTrip(lossless.flatMap((c) => c.history), "sys");
});

// ── strict mode ───────────────────────────────────────────────────────────────────

test("strict: is_error becomes an Error: prefix; no reasoning_content, no extension", () => {
  const history = [
    assistant([{ type: "thinking", thinking: "t", signature: "s" }, use("a"), use("b")]),
    user([result("a", "boom", { is_error: true }), result("b", [text("bad")], { is_error: true })]),
  ] satisfies Message[];
  const strict = toOpenAI(history, { strict: true });
  assert.deepEqual(strict, [
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "a", type: "function", function: { name: "bash", arguments: "{}" } },
        { id: "b", type: "function", function: { name: "bash", arguments: "{}" } },
      ],
    },
    { role: "tool", tool_call_id: "a", content: "Error: boom" },
    { role: "tool", tool_call_id: "b", content: [{ type: "text", text: "Error: " }, { type: "text", text: "bad" }] },
  ]);
  assert.match(JSON.stringify(toOpenAI(history)), /"is_error":true/);
  assert.doesNotMatch(JSON.stringify(toOpenAI(history)), /Error: /);
});

test("strict: a remainder with nothing OpenAI can show is left out", () => {
  const strict = toOpenAI([assistant([use("a")]), user([result("a", "r"), { type: "redacted_thinking", data: "x" }])], { strict: true });
  assert.deepEqual(strict.map((m) => m.role), ["assistant", "tool"]);
});

// ── OpenAI → Anthropic ────────────────────────────────────────────────────────────

const conversation: OpenAIMessage[] = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: "Fix the bug." },
  {
    role: "assistant",
    content: "Let me look.",
    tool_calls: [
      { id: "call_Ab3/x+=", type: "function", function: { name: "read", arguments: '{"path":"a.py"}' } },
      { id: "call_Zz9", type: "function", function: { name: "grep", arguments: '{"pattern":"def f","n":3}' } },
    ],
  },
  { role: "tool", tool_call_id: "call_Ab3/x+=", content: "def f(): pass" },
  { role: "tool", tool_call_id: "call_Zz9", content: "a.py:1" },
  { role: "user", content: "Also check b.py" },
  { role: "assistant", content: "Done: fixed." },
];

test("OpenAI → Anthropic: tool messages and the next user message merge, results first, ids exact", () => {
  const { system, messages } = fromOpenAI(conversation);
  assert.equal(system, "You are a coding agent.");
  assert.deepEqual(messages, [
    user("Fix the bug."),
    assistant([
      text("Let me look."),
      { type: "tool_use", id: "call_Ab3/x+=", name: "read", input: { path: "a.py" } },
      { type: "tool_use", id: "call_Zz9", name: "grep", input: { pattern: "def f", n: 3 } },
    ]),
    user([result("call_Ab3/x+=", "def f(): pass"), result("call_Zz9", "a.py:1"), text("Also check b.py")]),
    assistant([text("Done: fixed.")]),
  ]);
});

test("OpenAI → Anthropic → OpenAI gives the same plain conversation back", () => {
  const { system, messages } = fromOpenAI(conversation);
  assert.deepEqual(toOpenAI(messages, system === undefined ? {} : { system }), conversation);
});

test("OpenAI: assistant content null with tool_calls, tool text parts, trailing tool messages", () => {
  const plain: OpenAIMessage[] = [
    { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "https://x.test/i.png" } }] },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
  ];
  const { messages } = fromOpenAI(plain);
  assert.deepEqual(messages[1], assistant([{ type: "tool_use", id: "c1", name: "ls", input: {} }]));
  assert.deepEqual(messages[2], user([result("c1", [text("a"), text("b")])]));
  assert.deepEqual(toOpenAI(messages), plain);
});

test("OpenAI: arguments that are not a JSON object become input {_raw} and go back unchanged", () => {
  for (const args of ["{oops", "", "[1,2]", "null", '"s"']) {
    const plain: OpenAIMessage[] = [
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: args } }] },
      { role: "tool", tool_call_id: "c1", content: "r" },
    ];
    const { messages } = fromOpenAI(plain);
    assert.deepEqual((messages[0]!.content as ContentBlock[])[0], { type: "tool_use", id: "c1", name: "f", input: { _raw: args } });
    assert.deepEqual(toOpenAI(messages), plain);
  }
});

test("OpenAI: reasoning_content becomes a leading thinking block; empty or null is ignored", () => {
  const { messages } = fromOpenAI([
    { role: "assistant", content: "x", reasoning_content: "why" },
    { role: "assistant", content: "y", reasoning_content: "" },
    { role: "assistant", content: "z", reasoning_content: null },
  ]);
  assert.deepEqual(messages, [
    assistant([{ type: "thinking", thinking: "why" }, text("x")]),
    assistant([text("y")]),
    assistant([text("z")]),
  ]);
});

test("OpenAI: system and developer messages join into system", () => {
  const r = fromOpenAI([
    { role: "system", content: "a" },
    { role: "developer", content: [{ type: "text", text: "b" }] },
    { role: "user", content: "hi" },
  ]);
  assert.deepEqual(r, { system: "a\n\nb", messages: [user("hi")] });
  assert.equal("system" in fromOpenAI([{ role: "user", content: "hi" }]), false);
});

// ── bad input ─────────────────────────────────────────────────────────────────────

function assertThrowsAt(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof Error);
    assert.match(e.message, pattern);
    assert.doesNotMatch(e.message, /\n/);
    return true;
  });
}

test("bad OpenAI input throws a one-line error naming the message index", () => {
  assertThrowsAt(() => fromOpenAI([{ role: "tool", tool_call_id: "x", content: "r" }]), /^fromOpenAI: message 0 .*"x"/);
  assertThrowsAt(
    () => fromOpenAI([{ role: "user", content: "a" }, { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }, { role: "tool", tool_call_id: "c2", content: "r" }]),
    /^fromOpenAI: message 2 .*"c2"/,
  );
  assertThrowsAt(
    () => fromOpenAI([{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }, { role: "user", content: "a" }, { role: "tool", tool_call_id: "c1", content: "r" }]),
    /^fromOpenAI: message 2 /,
  );
  // Issue 10: role "function" and input_audio parts are converted now (test below); still refused:
  assertThrowsAt(() => fromOpenAI([{ role: "user", content: "a" }, { role: "narrator", content: "x" } as unknown as OpenAIMessage]), /^fromOpenAI: message 1 has unknown role "narrator"/);
  assertThrowsAt(() => fromOpenAI([{ role: "user", content: [{ type: "video_url" }] } as unknown as OpenAIMessage]), /^fromOpenAI: message 0 .*"video_url"/);
  assertThrowsAt(() => fromOpenAI([null as unknown as OpenAIMessage]), /^fromOpenAI: message 0 is not an object/);
});

test("a tampered extension is rejected, not misread", () => {
  const openai = toOpenAI([assistant([use("a"), use("b")]), user([text("x"), result("a", "1"), result("b", "2")])]);
  const tool = openai[1] as { lethe?: { order?: string } };
  assert.equal(tool.lethe?.order, "utt");
  tool.lethe = { order: "ut" };
  assertThrowsAt(() => fromOpenAI(openai), /^fromOpenAI: message 1 .*lethe\.order/);
});

test("bad Anthropic input throws a one-line error naming the message index", () => {
  assertThrowsAt(() => toOpenAI([user("a"), { role: "system", content: "x" } as unknown as Message]), /^toOpenAI: message 1 has unknown role "system"/);
  assertThrowsAt(() => toOpenAI([user("a"), user([result("nope", "r")])]), /^toOpenAI: message 1 .*"nope"/);
  assertThrowsAt(() => toOpenAI([user([use("a")])]), /^toOpenAI: message 0 .*tool_use/);
  assertThrowsAt(() => toOpenAI([assistant([result("a", "r")])]), /^toOpenAI: message 0 .*tool_result/);
});

test("fromOpenAI keeps what it used to refuse or drop (issue 10): file/PDF, input_audio, refusal parts, image detail, calls without ids, the legacy function role", () => {
  const pdf = "JVBERi0xLjQK";
  const r = fromOpenAI([
    { role: "user", content: [{ type: "text", text: "read these" }, { type: "file", file: { file_data: `data:application/pdf;base64,${pdf}`, filename: "spec.pdf" } }, { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }, { type: "image_url", image_url: { url: "https://x/y.png", detail: "high" } }] },
    { role: "assistant", content: [{ type: "refusal", refusal: "I won't do that part." }] },
    { role: "user", content: "then list files" },
    { role: "assistant", content: null, tool_calls: [{ type: "function", function: { name: "glob", arguments: "{\"pattern\":\"*\"}" } }] },
    { role: "tool", content: "a.ts" },
    { role: "assistant", content: null, function_call: { name: "grep", arguments: "{}" } },
    { role: "function", name: "grep", content: "no match" },
  ] as unknown as OpenAIMessage[]);
  const [first, refusal, , call, result, legacy, legacyResult] = r.messages;
  const blocks = first!.content as { type: string }[];
  assert.deepEqual(blocks.map((b) => b.type), ["text", "document", "openai_part", "image"]);
  assert.equal((blocks[1] as unknown as { source: { data: string } }).source.data, pdf);
  assert.equal((blocks[3] as unknown as { detail?: string }).detail, "high");
  assert.match(JSON.stringify(refusal), /I won't do that part\./);
  const id = (call!.content as { type: string; id: string }[]).find((b) => b.type === "tool_use")!.id;
  assert.ok(id, "a call without an id got one");
  assert.equal((result!.content as { tool_use_id: string }[])[0]!.tool_use_id, id, "the tool message without an id answers it");
  const legacyId = (legacy!.content as { type: string; id: string; name: string }[]).find((b) => b.type === "tool_use")!;
  assert.equal(legacyId.name, "grep");
  assert.equal((legacyResult!.content as { tool_use_id: string }[])[0]!.tool_use_id, legacyId.id);
  assert.deepEqual(validate(r.messages), []);
  // And back: the PDF goes out as a file part, audio as it came, image detail kept.
  const back = JSON.stringify(toOpenAI([first!]));
  assert.match(back, /"type":"file".*application\/pdf;base64,JVBERi0xLjQK.*"filename":"spec.pdf"/);
  assert.match(back, /"input_audio":\{"data":"UklGRg==","format":"wav"\}/);
  assert.match(back, /"detail":"high"/);
});

test("stream chunks of one tool call without an index make one call, not two (issue 10)", async () => {
  const { OpenAIAssembler } = await import("../../src/model/openai.ts");
  const acc = new OpenAIAssembler();
  const chunk = (tc: object, finish: string | null = null) => ({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: { tool_calls: [tc] }, finish_reason: finish }] });
  acc.add(chunk({ id: "call_a", type: "function", function: { name: "glob", arguments: "" } }) as never);
  acc.add(chunk({ function: { arguments: '{"pat' } }) as never);
  acc.add(chunk({ function: { arguments: 'tern":"*"}' } }) as never);
  acc.add(chunk({ id: "call_b", type: "function", function: { name: "grep", arguments: '{"pattern":"x"}' } }, "tool_calls") as never);
  const r = acc.finish("m", () => ({ input_tokens: 1, output_tokens: 1 }));
  const calls = (r.message.content as { type: string; id: string; name: string; input: unknown }[]).filter((b) => b.type === "tool_use");
  assert.deepEqual(calls.map((c) => [c.id, c.name, c.input]), [["call_a", "glob", { pattern: "*" }], ["call_b", "grep", { pattern: "x" }]]);
});

test("strict: an assistant turn that is only reasoning goes out as its reasoning text, never content null without tool calls (issue 10)", () => {
  const out = toOpenAI([{ role: "user", content: "solve it" }, { role: "assistant", content: [{ type: "thinking", thinking: "Step 1: factor the polynomial…" }] }, { role: "user", content: "continue" }], { strict: true });
  const a = out[1] as { content: unknown; tool_calls?: unknown };
  assert.equal(typeof a.content, "string");
  assert.match(a.content as string, /Step 1: factor the polynomial/);
  assert.equal(a.tool_calls, undefined);
  const empty = toOpenAI([{ role: "user", content: "x" }, { role: "assistant", content: [] }], { strict: true })[1] as { content: unknown };
  assert.notEqual(empty.content, null);
});

test("the openai SDK's refusal (content null, refusal text) is the assistant's text: the refused request is not merged into the next one or sent again", () => {
  const { messages } = fromOpenAI([
    { role: "user", content: "do the bad thing" },
    { role: "assistant", content: null, refusal: "I can't help with that." } as unknown as OpenAIMessage,
    { role: "user", content: "ok, something else" },
  ]);
  assert.deepEqual(messages, [
    { role: "user", content: "do the bad thing" },
    { role: "assistant", content: [{ type: "text", text: "I can't help with that." }] },
    { role: "user", content: "ok, something else" },
  ]);
  assert.deepEqual(validate(messages), []);
  const sent = toOpenAI(messages, { strict: true });
  assert.equal(sent.filter((m) => JSON.stringify(m).includes("do the bad thing")).length, 1, "the refused request is sent once, in its own turn");
});

test("strict conversion sends the text of search results and text documents (top-level and inside tool results), not placeholders: a RAG tool's results reach an OpenAI-compatible model", () => {
  const h = [
    { role: "user", content: [{ type: "search_result", source: "https://x.test/a", title: "A", content: [{ type: "text", text: "alpha facts" }] }, { type: "document", source: { type: "text", media_type: "text/plain", data: "doc body" }, title: "D" }, { type: "text", text: "what?" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "rag", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "search_result", source: "https://x.test/b", title: "B", content: [{ type: "text", text: "beta facts" }] }, { type: "document", source: { type: "content", content: [{ type: "text", text: "inner doc" }] } }] }] },
  ] as unknown as Message[];
  const sent = JSON.stringify(toOpenAI(h, { strict: true }));
  for (const text of ["alpha facts", "doc body", "beta facts", "inner doc", "https://x.test/a"]) assert.ok(sent.includes(text), text);
  assert.doesNotMatch(sent, /block not sent/);
});

test("a PDF then a text block with cache_control round-trips through toOpenAI and fromOpenAI, and the PDF travels once (the extension does not copy it)", () => {
  const pdf = `JVBERi0xLjQK${"QUJD".repeat(5_000)}`;
  const h = [{ role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf } }, { type: "text", text: "summarise", cache_control: { type: "ephemeral" } }] }] as unknown as Message[];
  const sent = toOpenAI(h);
  assert.equal(JSON.stringify(sent).split(pdf).length - 1, 1, "one copy of the PDF");
  assert.deepEqual(fromOpenAI(sent).messages, h);
});

test("a system or developer message mid-conversation stays where it was through fromOpenAI, the engine and toOpenAI (it was moved to the top); leading ones are the system prompt", async () => {
  const { createEngine } = await import("../../src/engine/index.ts");
  const original = [
    { role: "system", content: "You are careful." },
    { role: "user", content: "a" },
    { role: "assistant", content: "b" },
    { role: "developer", content: "From now on, answer in French." },
    { role: "user", content: "c" },
  ] as OpenAIMessage[];
  const { system, messages } = fromOpenAI(original);
  assert.equal(system, "You are careful.");
  assert.deepEqual(toOpenAI(messages, { system }), original, "round trip");
  // Through the engine (repair merges the developer turn with the user's next one): still in place, still its role.
  const ready = await createEngine({ contextWindow: 100_000, maxOutputTokens: 4_000 }).beforeRequest(messages);
  const sent = toOpenAI(ready.history, { system: system!, strict: true });
  assert.deepEqual(sent.map((m) => m.role), ["system", "user", "assistant", "developer", "user"]);
  assert.equal(sent[3]!.content, "From now on, answer in French.");
});
