// The files store (lethe's embedded default) against the store contract, plus what only files
// have: sessions written before seqs existed, a torn last line, a lock left by a killed process.
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFilesStore, conversationFolder } from "../../src/store/files.ts";
import { connectStore } from "../../src/store/connect.ts";
import { openTranscript } from "../../src/session/transcript.ts";
import { msg, storeContract } from "./contract.ts";

storeContract("files", async () => {
  const root = mkdtempSync(join(tmpdir(), "lethe-files-store-"));
  const store = createFilesStore(join(root, "store"));
  return {
    store,
    reopen: async () => createFilesStore(join(root, "store")),
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  };
});

test("files store: a session written before seqs existed (the CLI's transcript) opens, counts its messages once, and goes on from there", async () => {
  const root = mkdtempSync(join(tmpdir(), "lethe-files-store-"));
  try {
    const dir = join(root, "store", "old-session");
    const t = openTranscript(join(dir, "transcript.jsonl"), { header: { id: "old-session", cwd: root } });
    for (let i = 0; i < 5; i++) t.appendMessage(msg(i));
    t.appendEvent("request", { tokens: 10 });
    t.close();
    const store = createFilesStore(join(root, "store"));
    const c = await store.conversation("old-session");
    assert.equal(await c.messageCount(), 5);
    // The same five again (a host retrying with its whole history) and two new ones.
    const r = await c.appendMessages(0, [msg(0), msg(1), msg(2), msg(3), msg(4), msg(5), msg(6)]);
    assert.deepEqual(r, { added: 2, existing: 5, rewritten: [] });
    const lines = await c.lines();
    assert.deepEqual(lines.filter((l) => l.type === "message").map((l) => (l as { message: unknown }).message), [0, 1, 2, 3, 4, 5, 6].map((i) => msg(i)));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("files store: a torn last line (a writer killed mid-line) is closed off and marked; nothing acknowledged is lost", async () => {
  const root = mkdtempSync(join(tmpdir(), "lethe-files-store-"));
  try {
    const store = createFilesStore(join(root, "store"));
    const c = await store.conversation("torn");
    await c.appendMessages(0, [msg(0), msg(1)]);
    appendFileSync(join(root, "store", "torn", "transcript.jsonl"), '{"type":"message","uuid":"x","seq":2,"mess');
    assert.equal(await c.messageCount(), 2);
    assert.deepEqual(await c.appendMessages(2, [msg(2)]), { added: 1, existing: 0, rewritten: [] });
    const text = readFileSync(join(root, "store", "torn", "transcript.jsonl"), "utf8");
    assert.match(text, /"name":"torn-tail"/);
    assert.equal(await c.messageCount(), 3);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("files store: a lock file left by a killed process (a dead pid, or empty) does not block the next writer", async () => {
  const root = mkdtempSync(join(tmpdir(), "lethe-files-store-"));
  try {
    const store = createFilesStore(join(root, "store"));
    const c = await store.conversation("locked");
    const lock = join(root, "store", "locked", "append.lock");
    writeFileSync(lock, "999999999\n");
    assert.deepEqual(await c.appendMessages(0, [msg(0)]), { added: 1, existing: 0, rewritten: [] });
    assert.equal(existsSync(lock), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("files store: conversation folders are the id when it is a plain name, a bounded hashed name otherwise (never a path outside the store)", () => {
  assert.equal(conversationFolder("chat-42"), "chat-42");
  for (const id of ["..", ".", "../../etc", "a/b", "x".repeat(1000), "quote\"s", "é"]) {
    const f = conversationFolder(id);
    assert.match(f, /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/, id);
    assert.ok(f.length <= 100, id);
    assert.notEqual(f, "..");
  }
  assert.notEqual(conversationFolder("a/b"), conversationFolder("a_b"));
});

test("connectStore: a path and a file: URL give the files store; an unknown scheme is a one-line store_url error", async () => {
  const root = mkdtempSync(join(tmpdir(), "lethe-files-store-"));
  try {
    assert.equal((await connectStore(join(root, "a"))).kind, "files");
    assert.equal((await connectStore(`file://${join(root, "b")}`)).location, join(root, "b"));
    await assert.rejects(connectStore("postgress://u:secret@host/db"), (e: { code?: string; message: string }) => e.code === "store_url" && !e.message.includes("secret") && !e.message.includes("\n"));
    await assert.rejects(connectStore(""), (e: { code?: string }) => e.code === "store_url");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("files store: a result saved again with the same text is not written again (another engine on the conversation); a different text replaces it", async () => {
  const { statSync } = await import("node:fs");
  const root = mkdtempSync(join(tmpdir(), "lethe-files-store-"));
  try {
    const c = await createFilesStore(join(root, "store")).conversation("results");
    const path = await c.saveResult("toolu_1", "output ".repeat(1000));
    const ino = statSync(path).ino;
    await c.saveResult("toolu_1", "output ".repeat(1000));
    assert.equal(statSync(path).ino, ino, "not rewritten");
    await c.saveResult("toolu_1", "other ".repeat(1000));
    assert.equal(await c.loadResult("toolu_1"), "other ".repeat(1000));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
