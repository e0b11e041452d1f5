// Real content through every stage: a screenshot in a tool result, a PDF-only user message and an
// image-only user message go through prepare, each kind of compaction (budget, snip, micro,
// summary, manual, reactive by tokens and by bytes), the transcript and a resume, and both wire
// conversions. At every stage each attachment is either still there or named by a placeholder,
// and no message is empty; the estimates for the image and the PDF stay within 20% of the
// providers' documented formulas.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEngine, type EngineOptions } from "../../src/engine/index.ts";
import type { CompactionEvent } from "../../src/compaction/types.ts";
import type { DeepPartial, CompactionConfig } from "../../src/compaction/config/config.ts";
import { validate } from "../../src/messages/invariants.ts";
import { toOpenAI } from "../../src/messages/openai-to.ts";
import type { ContentBlock, Message } from "../../src/messages/types.ts";
import { toAnthropicMessages } from "../../src/model/anthropic.ts";
import { ModelError } from "../../src/model/types.ts";
import { createSessionDir } from "../../src/session/paths.ts";
import { loadTranscript, messageEntries, openTranscript, resumeContext } from "../../src/session/transcript.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import { countTokens } from "../../src/tokens/exact.ts";
import { anthropicImageTokens, openaiImageTokens } from "../support/fakes/media-tokens.ts";
import { jpeg, pdf, png, prose } from "../support/media.ts";
import { bigOutput } from "../support/e2e.ts";

const SHOT = png(1280, 800, 300_000).toString("base64");
const PHOTO = jpeg(640, 480, 20_000).toString("base64");
const PAGES = Array.from({ length: 3 }, (_, i) => prose(300, i + 7));
const PDF = pdf(PAGES, { compress: true }).toString("base64");

/** Each attachment: a piece of its data, and what a placeholder naming it says. */
const ATTACHMENTS = [
  { name: "screenshot", data: SHOT.slice(1_000, 1_200), named: /1280×800/ },
  { name: "photo", data: PHOTO.slice(0, 200), named: /640×480/ },
  { name: "PDF", data: PDF.slice(0, 200), named: /PDF document, 3 pages/ },
];

const text = (role: "user" | "assistant", t: string): Message => ({ role, content: [{ type: "text", text: t }] });

function history(rounds: number): Message[] {
  const h: Message[] = [
    text("user", "Look at the app, the spec and my photo, then fix the layout."),
    { role: "assistant", content: [{ type: "tool_use", id: "shot_1", name: "bash", input: { command: "screenshot --window app" } }] },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "shot_1",
          content: [
            { type: "text", text: "screenshot of the app window" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: SHOT } },
          ],
        },
      ],
    },
    text("assistant", "I see the login page; the button overlaps the footer."),
    { role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF } } as unknown as ContentBlock] },
    text("assistant", "Read the spec: three pages about the layout grid."),
    { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/jpeg", data: PHOTO } }] },
    text("assistant", "Thanks, the photo shows the same overlap on a phone."),
  ];
  for (let i = 0; i < rounds; i++) {
    h.push(text("user", `Step ${i}: go on.`));
    h.push({ role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "bash", input: { command: `cat src/layout${i}.css` } }] });
    h.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: bigOutput(`layout${i}`, 1_200) }] });
  }
  h.push(text("user", "Now fix it."));
  return h;
}

function assertWhole(stage: string, messages: readonly unknown[], present: typeof ATTACHMENTS) {
  const json = JSON.stringify(messages);
  for (const a of present) {
    assert.ok(json.includes(a.data) || a.named.test(json), `${stage}: the ${a.name} is neither there nor named`);
  }
  messages.forEach((m: any, i) => {
    const c = m.content;
    const empty =
      (c === undefined || c === null || c === "" || (Array.isArray(c) && c.length === 0)) && !(m.tool_calls?.length > 0);
    assert.ok(!empty, `${stage}: message ${i} (${m.role}) is empty: ${JSON.stringify(m).slice(0, 200)}`);
  });
}

/** The stage's history, and both wire conversions of it. */
function check(stage: string, h: Message[], input?: Message[]) {
  // Every attachment the input held (all three unless said otherwise).
  const present = input ? ATTACHMENTS.filter((a) => JSON.stringify(input).includes(a.data)) : ATTACHMENTS;
  assert.deepEqual(validate(h), [], stage);
  assertWhole(stage, h, present);
  assertWhole(`${stage} → Anthropic`, toAnthropicMessages(h, true), present);
  assertWhole(`${stage} → OpenAI (lossless)`, toOpenAI(h), present);
  assertWhole(`${stage} → OpenAI (strict)`, toOpenAI(h, { strict: true }), present);
  assertWhole(`${stage} → DeepSeek`, toOpenAI(h, { strict: true, reasoning: "tool-turns" }), present);
}

function setup(window: number, config: DeepPartial<CompactionConfig> = {}, extra: Partial<EngineOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "lethe-content-"));
  const session = createSessionDir(dir);
  const transcript = openTranscript(session.transcript, { header: { id: session.id, cwd: dir } });
  const events: CompactionEvent[] = [];
  const engine = createEngine({
    contextWindow: window,
    maxOutputTokens: 4_000,
    workspace: dir,
    sessionDir: session.dir,
    transcript,
    transcriptHoldsHistory: true,
    summarizerMode: "digest",
    config,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return {
    engine,
    events,
    transcript,
    path: session.transcript,
    close() {
      transcript.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const kinds = (events: CompactionEvent[]) => events.map((e) => e.kind);

test("estimates: the screenshot and the PDF are within 20% of Anthropic's and OpenAI's documented costs", () => {
  const image = { type: "image" as const, source: { type: "base64", media_type: "image/png", data: SHOT } };
  const within = (actual: number, expected: number, what: string) =>
    assert.ok(Math.abs(actual - expected) / expected <= 0.2, `${what}: ${actual} vs documented ${expected}`);
  within(createTokenCounter().block(image), anthropicImageTokens(SHOT), "image, Anthropic");
  within(createTokenCounter(undefined, { media: "openai" }).block(image), openaiImageTokens(SHOT, "auto"), "image, OpenAI");
  // Documented: each page as an image (a Letter page reaches the ~1,600 cap) plus the page's text.
  const doc = { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF } };
  within(createTokenCounter().block(doc as never), 3 * 1_600 + countTokens(PAGES.join("\n")), "PDF");
  // And not their base64 length (what main estimated before).
  assert.ok(createTokenCounter().block(image) < SHOT.length / 100);
});

test("prepare with nothing to do keeps every attachment as it came", () => {
  const s = setup(200_000);
  try {
    const h = history(3);
    const r = s.engine.prepare(h);
    assert.deepEqual(kinds(r.events), []);
    check("prepare", r.history);
    assert.ok(JSON.stringify(r.history).includes(SHOT), "the screenshot whole");
  } finally {
    s.close();
  }
});

test("budget persists the screenshot's result as it arrives, with a preview that names the image", () => {
  const s = setup(200_000, { budget: { perResultChars: 3_000, perToolChars: { bash: 3_000 } } });
  try {
    // The newest message is the screenshot's result (budget acts on results as they arrive).
    const input = history(0).slice(0, 3);
    const r = s.engine.prepare(input);
    assert.ok(kinds(r.events).includes("budget"), kinds(r.events).join());
    assert.ok(!JSON.stringify(r.history).includes(SHOT), "the screenshot went to disk");
    check("budget", r.history, input);
  } finally {
    s.close();
  }
});

test("snip removes the middle: the attachments in it are named in a note", () => {
  const s = setup(200_000, { snip: { triggerMessages: 12, targetMessages: 6, minThresholdShare: 0 }, micro: { enabled: false } });
  try {
    const r = s.engine.prepare(history(8));
    assert.ok(kinds(r.events).includes("snip"), kinds(r.events).join());
    check("snip", r.history);
  } finally {
    s.close();
  }
});

test("micro clears the old screenshot result: its placeholder names the image", () => {
  const s = setup(200_000, { snip: { enabled: false }, micro: { keepRecent: 1, minResultTokens: 0, minSavingsTokens: 0, cacheAware: false } });
  try {
    const r = s.engine.prepare(history(4));
    assert.ok(kinds(r.events).includes("micro"), kinds(r.events).join());
    assert.ok(!JSON.stringify(r.history).includes(SHOT), "the screenshot itself was cleared");
    check("micro", r.history);
  } finally {
    s.close();
  }
});

test("the summary at the threshold, a manual compaction, and a resume from the transcript", async () => {
  const s = setup(24_000, { snip: { enabled: false }, micro: { enabled: false } });
  try {
    const h = history(14);
    for (const m of h) s.transcript.appendMessage(m);
    const r = await s.engine.beforeRequest(h);
    assert.ok(kinds(r.events).includes("summarize"), kinds(r.events).join());
    check("summary", r.history);
    const m = await s.engine.compact(r.history.concat([text("assistant", "Fixed the grid."), text("user", "And the footer?")]));
    assert.ok(kinds(m.events).includes("manual"), kinds(m.events).join());
    check("manual", m.history);
    // Resume: the transcript rebuilds the last compacted context, and keeps every original.
    const loaded = loadTranscript(s.path);
    check("resume", resumeContext(loaded.entries));
    const stored = JSON.stringify(messageEntries(loaded.entries).map((e) => e.message));
    for (const a of ATTACHMENTS) assert.ok(stored.includes(a.data), `the transcript keeps the ${a.name}`);
  } finally {
    s.close();
  }
});

test("reactive, by tokens (the provider's overflow) and by bytes (a 413)", async () => {
  const s = setup(200_000, { snip: { enabled: false }, micro: { enabled: false } });
  try {
    const h = history(14);
    const tokens = await s.engine.recover(h, new ModelError("prompt_too_long", "prompt is too long: 30000 tokens > 24000 maximum", { actualTokens: 30_000, limitTokens: 24_000 }));
    assert.ok(kinds(tokens.events).includes("reactive"), kinds(tokens.events).join());
    check("reactive (tokens)", tokens.history);
    const bytes = await s.engine.recover(h, new ModelError("prompt_too_long", "413 request_too_large", { status: 413, overBytes: true }));
    assert.ok(kinds(bytes.events).includes("reactive"), kinds(bytes.events).join());
    check("reactive (bytes)", bytes.history);
    assert.ok(Buffer.byteLength(JSON.stringify(bytes.history)) <= Buffer.byteLength(JSON.stringify(h)) / 2);
  } finally {
    s.close();
  }
});
