// The transcript writer over a conversation (src/store/transcript.ts), on the real files store:
// synchronous calls, stored in order (messages in batches), a failed write kept and tried again
// by the next flush, and a second writer on the same conversation stopped, never interleaved.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFilesStore } from "../../src/store/files.ts";
import { openStoreTranscript } from "../../src/store/transcript.ts";
import type { Conversation } from "../../src/store/types.ts";
import { createMemoryStore } from "../../src/session/tool-results.ts";
import { msg } from "./contract.ts";

async function withConversation(body: (c: Conversation, root: string) => Promise<void>): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "lethe-store-writer-"));
  try {
    await body(await createFilesStore(root).conversation("c1", { cwd: root }), root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The conversation, counting appendMessages calls and failing the first `failures` of them. */
function instrumented(c: Conversation, failures = 0): Conversation & { appends: number } {
  let left = failures;
  const w = Object.create(c) as Conversation & { appends: number };
  w.appends = 0;
  w.appendMessages = (from, messages, opts) => {
    w.appends++;
    if (left-- > 0) return Promise.reject(new Error("connection reset by peer\n    at Socket.read"));
    return c.appendMessages(from, messages, opts);
  };
  return w;
}

test("calls are stored in the order they were made; messages in a row go in batches; uuids and uuidOf agree", async () => {
  await withConversation(async (c) => {
    const conv = instrumented(c);
    const w = openStoreTranscript(conv, { next: 0, path: "mem" });
    const sent = Array.from({ length: 500 }, (_, i) => msg(i));
    const entries = sent.slice(0, 250).map((m) => w.appendMessage(m));
    w.appendBoundary({ kind: "snip", tokens_before: 10, tokens_after: 5, removed: [entries[3]!.uuid] });
    for (const m of sent.slice(250)) w.appendMessage(m);
    w.appendEvent("request", { tokens: 9 });
    assert.equal(w.uuidOf!(sent[7]!), entries[7]!.uuid);
    await w.flush();
    assert.equal(w.pending, 0);
    assert.ok(conv.appends <= 6, `${conv.appends} appendMessages calls for 500 messages`);
    const lines = (await c.lines()).slice(1);
    assert.deepEqual(lines.map((l) => (l.type === "message" ? "m" : l.type)).join("").replace(/m+/g, (r) => `m${r.length}`), "m250boundarym250event");
    const stored = lines.filter((l) => l.type === "message") as unknown as { uuid: string; message: unknown; seq: number }[];
    assert.deepEqual(stored.map((l) => l.message), sent);
    assert.deepEqual(stored.slice(0, 250).map((l) => l.uuid), entries.map((e) => e.uuid));
    assert.deepEqual(stored.map((l) => l.seq), sent.map((_, i) => i));
  });
});

test("a write that fails stays queued: flush tries it once more, then rejects in one store_failed line; the next flush stores everything once, in order", async () => {
  await withConversation(async (c) => {
    // The write started at once fails, and so does flush's second try.
    const w = openStoreTranscript(instrumented(c, 2), { next: 0, path: "mem" });
    w.appendMessage(msg(0));
    w.appendMessage(msg(1));
    await assert.rejects(w.flush(), (e: { code?: string; message: string }) => {
      assert.equal(e.code, "store_failed");
      assert.match(e.message, /^lethe: [^\n]*connection reset by peer$/);
      return true;
    });
    assert.equal(await c.messageCount(), 0);
    w.appendMessage(msg(2));
    w.appendEvent("note", { text: "after the failure" });
    await w.flush();
    const lines = (await c.lines()).slice(1);
    assert.deepEqual(lines.filter((l) => l.type === "message").map((l) => (l as { message: unknown }).message), [msg(0), msg(1), msg(2)]);
    assert.equal(lines.at(-1)!.type, "event");
  });
});

test("two writers on one conversation: the second is stopped with a line saying so, and the first's messages stand", async () => {
  await withConversation(async (c) => {
    const first = openStoreTranscript(c, { next: 0, path: "mem" });
    const second = openStoreTranscript(c, { next: 0, path: "mem" });
    first.appendMessage(msg(0));
    await first.flush();
    second.appendMessage(msg(0, " from the second"));
    await assert.rejects(second.flush(), /written by another process meanwhile \(message 0 differs\)/);
    second.appendMessage(msg(1));
    await assert.rejects(second.flush(), /written by another process/, "it stays stopped");
    assert.deepEqual((await c.lines()).filter((l) => l.type === "message").map((l) => (l as { message: unknown }).message), [msg(0)]);
  });
});

test("results(): the full text is kept locally at once and in the conversation after the flush; a mirror gets every line", async () => {
  await withConversation(async (c, root) => {
    const local = createMemoryStore();
    const { openTranscript } = await import("../../src/session/transcript.ts");
    const mirror = openTranscript(join(root, "mirror.jsonl"), { header: { id: "c1", cwd: root } });
    const w = openStoreTranscript(c, { next: 0, path: "mem", mirror });
    const ref = w.results(local).save("toolu_1", "x".repeat(100_000));
    assert.equal(ref, "mem://tool-results/toolu_1.txt");
    assert.equal(local.files.size, 1);
    w.appendMessage(msg(0));
    await w.flush();
    assert.equal((await c.loadResult("toolu_1"))?.length, 100_000);
    w.close();
    const mirrored = readFileSync(join(root, "mirror.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l).type);
    assert.deepEqual(mirrored, ["session", "message"]);
  });
});

test("a writer on a conversation read back (a resumed session) knows the lines' message objects once told (adoptLines): a boundary can name them", async () => {
  await withConversation(async (c) => {
    const first = openStoreTranscript(c, { next: 0, path: "mem" });
    const written = [msg(0), msg(1), msg(2)].map((m) => first.appendMessage(m).uuid);
    await first.flush();
    const lines = (await c.lines()).filter((l) => l.type !== "session") as Parameters<NonNullable<typeof first.adoptLines>>[0];
    const read = lines.flatMap((l) => (l.type === "message" ? [l.message] : []));
    const again = openStoreTranscript(c, { next: 3, path: "mem" });
    assert.equal(again.uuidOf!(read[0]!), undefined, "a new writer knows none of them");
    again.adoptLines!(lines);
    assert.deepEqual(read.map((m) => again.uuidOf!(m)), written);
  });
});
