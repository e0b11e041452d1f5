// What every ConversationStore must do, whatever keeps the data: registered as node:test tests by
// each store's test file (storeContract("postgres", …), storeContract("files", …)). Nothing here
// knows which store it runs against.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TRANSCRIPT_VERSION, type TranscriptLine } from "../../src/session/transcript-format.ts";
import type { Message } from "../../src/messages/types.ts";
import type { AppendResult, ConversationStore, EngineSnapshot } from "../../src/store/types.ts";

export interface OpenedStore {
  /** A fresh, empty store of its own (no other test sees it). */
  store: ConversationStore;
  /** Another instance on the same storage, opened as a second process would (its own connections, its own handles). */
  reopen(): Promise<ConversationStore>;
  /** Closes the store and every instance reopen() made, and removes what the store kept. */
  cleanup(): Promise<void>;
}

/** A message whose content names its position (and a variant, for a rewritten one). */
export function msg(i: number, variant = ""): Message {
  return { role: i % 2 === 0 ? "user" : "assistant", content: [{ type: "text", text: `message ${i}${variant}` }] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A rejection that is a LetheInputError said in one line. */
export async function rejectsInput(p: Promise<unknown> | (() => unknown), what = ""): Promise<void> {
  await assert.rejects(typeof p === "function" ? async () => p() : p, (e: { code?: unknown; message?: unknown }) => {
    assert.equal(e.code, "bad_input", `${what}: ${String(e.message)}`);
    assert.match(String(e.message), /^lethe: [^\n]+$/, `${what}: one line`);
    return true;
  });
}

const messagesOf = (lines: TranscriptLine[]) => lines.filter((l) => l.type === "message").map((l) => l.message as Message);
const snapshot = (covers: number, tag: string): Omit<EngineSnapshot, "version" | "saved"> => ({
  covers,
  coverKeys: [`user:${tag}`],
  headKeys: [`user:head-${tag}`],
  rebuilt: [{ role: "user", content: [{ type: "text", text: `summary by ${tag}` }] }],
  window: { contextWindow: 100_000, maxOutputTokens: 8_000 },
});

export function storeContract(name: string, open: () => Promise<OpenedStore>): void {
  const it = (title: string, body: (s: OpenedStore) => Promise<void>) =>
    test(`${name} store: ${title}`, { timeout: 60_000 }, async () => {
      const s = await open();
      try {
        await body(s);
      } finally {
        await s.cleanup();
      }
    });

  it("a conversation is created on first use and reopened, by another instance, with what it holds", async ({ store, reopen }) => {
    const before = Date.now();
    const c = await store.conversation("first", { cwd: "/work/project", model: "model-1" });
    assert.equal(c.id, "first");
    assert.equal(await c.messageCount(), 0);
    assert.equal(await c.state(), null);
    const [header, ...rest] = await c.lines();
    assert.deepEqual(rest, []);
    assert.equal(header?.type, "session");
    assert.deepEqual({ ...header, created: undefined }, { type: "session", id: "first", cwd: "/work/project", model: "model-1", version: TRANSCRIPT_VERSION, created: undefined });
    const created = Date.parse(String(header?.created));
    assert.ok(created >= before - 60_000 && created <= Date.now() + 60_000, `created ${header?.created}`);
    assert.deepEqual(await c.appendMessages(0, [msg(0), msg(1)]), { added: 2, existing: 0, rewritten: [] });

    const other = await reopen();
    const again = await other.conversation("first", { cwd: "/somewhere/else", model: "model-2" });
    assert.equal(await again.messageCount(), 2);
    const lines = await again.lines();
    assert.deepEqual(lines[0], header, "the first opener's header stays");
    assert.deepEqual(messagesOf(lines), [msg(0), msg(1)]);
    assert.deepEqual((await other.list()).map((i) => [i.id, i.messages]), [["first", 2]]);
  });

  it("a writer's uuids are kept (a boundary or a retraction can name the message); list() gives each conversation's cwd; bad uuids are refused", async ({ store }) => {
    const c = await store.conversation("named", { cwd: "/work/named" });
    await c.appendMessages(0, [msg(0), msg(1)], { uuids: ["u-0", "u-1"] });
    // A retry under other uuids records nothing again, and the first uuids stay.
    assert.deepEqual(await c.appendMessages(0, [msg(0), msg(1), msg(2)], { uuids: ["x-0", "x-1", "u-2"] }), { added: 1, existing: 2, rewritten: [] });
    const uuids = (await c.lines()).filter((l) => l.type === "message").map((l) => (l as { uuid: string }).uuid);
    assert.deepEqual(uuids, ["u-0", "u-1", "u-2"]);
    assert.deepEqual((await store.list()).map((i) => [i.id, i.cwd]), [["named", "/work/named"]]);
    await rejectsInput(c.appendMessages(3, [msg(3)], { uuids: [] }), "one uuid short");
    await rejectsInput(c.appendMessages(3, [msg(3)], { uuids: ["bad uuid\n"] }), "a uuid with a space and a newline");
    await rejectsInput(c.appendMessages(3, [msg(3)], { uuids: [7 as unknown as string] }), "a number");
    assert.equal(await c.messageCount(), 3, "nothing was written by a refused call");
  });

  it("the meter: null before the first reply, then the last one saved, from any instance; a bad one is refused", async ({ store, reopen }) => {
    const c = await store.conversation("measured");
    assert.equal(await c.meter(), null);
    await c.saveMeter({ model: "claude-x", factor: 1.18, lastResponseAt: 1_700_000_000_000 });
    const other = await (await reopen()).conversation("measured");
    assert.deepEqual(await other.meter(), { model: "claude-x", factor: 1.18, lastResponseAt: 1_700_000_000_000 });
    await other.saveMeter({ model: "claude-x", factor: 1.2, lastResponseAt: 1_700_000_001_000 });
    assert.deepEqual(await c.meter(), { model: "claude-x", factor: 1.2, lastResponseAt: 1_700_000_001_000 });
    for (const bad of [null, { model: "m", factor: 0, lastResponseAt: 1 }, { model: "m", factor: Number.NaN, lastResponseAt: 1 }, { model: 3, factor: 1, lastResponseAt: 1 }]) {
      await rejectsInput(c.saveMeter(bad as never), `saveMeter(${JSON.stringify(bad)})`);
    }
    assert.equal((await c.meter())?.factor, 1.2, "a refused one changed nothing");
  });

  it("appending the same turn again records nothing twice; an overlapping append adds only what is new", async ({ store }) => {
    const c = await store.conversation("retry");
    const all = Array.from({ length: 6 }, (_, i) => msg(i));
    assert.deepEqual(await c.appendMessages(0, all.slice(0, 3)), { added: 3, existing: 0, rewritten: [] });
    assert.deepEqual(await c.appendMessages(0, all.slice(0, 3)), { added: 0, existing: 3, rewritten: [] }, "a retried turn");
    assert.deepEqual(await c.appendMessages(0, JSON.parse(JSON.stringify(all.slice(0, 3))) as Message[]), { added: 0, existing: 3, rewritten: [] }, "a deserialised copy is the same");
    assert.deepEqual(await c.appendMessages(1, all.slice(1, 5)), { added: 2, existing: 2, rewritten: [] });
    assert.deepEqual(await c.appendMessages(5, []), { added: 0, existing: 0, rewritten: [] });
    assert.deepEqual(await c.appendMessages(5, [all[5]!]), { added: 1, existing: 0, rewritten: [] });
    assert.equal(await c.messageCount(), 6);
    assert.deepEqual(messagesOf(await c.lines()), all);
  });

  it("a rewritten message is reported and kept as an event; the recorded one stays; nothing is lost", async ({ store }) => {
    const c = await store.conversation("rewrite");
    await c.appendMessages(0, [msg(0), msg(1), msg(2)]);
    const r = await c.appendMessages(1, [msg(1, " (edited)"), msg(2), msg(3)]);
    assert.deepEqual(r, { added: 1, existing: 1, rewritten: [1] });
    assert.equal(await c.messageCount(), 4);
    const lines = await c.lines();
    assert.deepEqual(messagesOf(lines), [msg(0), msg(1), msg(2), msg(3)]);
    const events = lines.filter((l) => l.type === "event" && l.name === "rewritten");
    assert.equal(events.length, 1);
    assert.equal(events[0]!.seq, 1);
    assert.deepEqual(events[0]!.message, msg(1, " (edited)"));
    // Reported again when sent again: the host still disagrees with what is recorded.
    assert.deepEqual((await c.appendMessages(0, [msg(0), msg(1, " (edited)")])).rewritten, [1]);
    assert.deepEqual(messagesOf(await c.lines()), [msg(0), msg(1), msg(2), msg(3)]);
  });

  it("appending past the end, at a bad position, a bad message, or a message as an entry is refused in one line and records nothing", async ({ store }) => {
    const c = await store.conversation("gap");
    await c.appendMessages(0, [msg(0), msg(1)]);
    const before = await c.lines();
    await rejectsInput(c.appendMessages(3, [msg(3)]), "from past the end");
    await rejectsInput(c.appendMessages(-1, [msg(0)]), "negative from");
    await rejectsInput(c.appendMessages(1.5, [msg(1)]), "fractional from");
    await rejectsInput(c.appendMessages(Number.NaN, [msg(1)]), "NaN from");
    await rejectsInput(c.appendMessages(2, [{ role: "system", content: "x" } as unknown as Message]), "a bad role");
    await rejectsInput(c.appendMessages(2, [msg(2), { role: "user", content: [{ type: "tool_use", id: "t", name: "n", input: { big: 1n } }] }]), "content JSON cannot hold");
    // A message line outside appendMessages would have no seq: the count and the order would break.
    await rejectsInput(c.appendEntry({ type: "message", message: msg(2) }), "an entry that is not a boundary or an event");
    assert.equal(await c.messageCount(), 2);
    assert.deepEqual(await c.lines(), before);
  });

  it("8 instances appending the same 40 messages in overlapping chunks at once: each seq exactly once, in order", async ({ store, reopen }) => {
    const all = Array.from({ length: 40 }, (_, i) => msg(i));
    const stores = [store, ...(await Promise.all(Array.from({ length: 7 }, () => reopen())))];
    const convs = await Promise.all(stores.map((s) => s.conversation("race")));
    const results = await Promise.all(
      convs.map(async (c, k) => {
        const size = 3 + k;
        let sent = 0;
        const out: AppendResult[] = [];
        for (let from = 0; from < all.length; from += size - 1) {
          const chunk = all.slice(from, from + size);
          sent += chunk.length;
          out.push(await c.appendMessages(from, chunk));
        }
        return { sent, out };
      }),
    );
    const flat = results.flatMap((r) => r.out);
    assert.equal(flat.reduce((n, r) => n + r.added, 0), 40, "each message added once across all appenders");
    assert.deepEqual(flat.flatMap((r) => r.rewritten), []);
    for (const [k, r] of results.entries()) assert.equal(r.out.reduce((n, x) => n + x.added + x.existing, 0), r.sent, `appender ${k}: every message it sent added or existing`);
    const lines = await (await (await reopen()).conversation("race")).lines();
    assert.deepEqual(messagesOf(lines), all);
    assert.equal(lines.length, 41, "the header and 40 messages, no event");
    assert.equal(await convs[0]!.messageCount(), 40);
  });

  it("6 instances appending different messages at the same position at once: one is recorded, the others reported rewritten and kept", async ({ store, reopen }) => {
    const stores = [store, ...(await Promise.all(Array.from({ length: 5 }, () => reopen())))];
    const convs = await Promise.all(stores.map((s) => s.conversation("contested")));
    await convs[0]!.appendMessages(0, [msg(0)]);
    const results = await Promise.all(convs.map((c, k) => c.appendMessages(0, [msg(0), msg(1, ` from ${k}`)])));
    assert.equal(results.filter((r) => r.added === 1).length, 1, "one appender recorded seq 1");
    assert.ok(results.every((r) => r.existing === 1 && (r.added === 1 ? r.rewritten.length === 0 : r.rewritten[0] === 1 && r.rewritten.length === 1)), JSON.stringify(results));
    const lines = await convs[1]!.lines();
    const recorded = messagesOf(lines);
    assert.equal(recorded.length, 2);
    const kept = lines.filter((l) => l.type === "event" && l.name === "rewritten").map((l) => l.message as Message);
    assert.equal(kept.length, 5);
    assert.deepEqual([recorded[1]!, ...kept].map((m) => JSON.stringify(m)).sort(), convs.map((_, k) => JSON.stringify(msg(1, ` from ${k}`))).sort(), "every version kept once");
  });

  it("saveState is a compare-and-set: of two racing saves from 0 exactly one wins, the loser gets the winner's state", async ({ store, reopen }) => {
    const a = await store.conversation("cas");
    const b = await (await reopen()).conversation("cas");
    const [ra, rb] = await Promise.all([a.saveState(0, snapshot(10, "a")), b.saveState(0, snapshot(12, "b"))]);
    assert.equal([ra, rb].filter((r) => r.saved).length, 1, "exactly one saved");
    const winner = ra.saved ? ra : rb;
    const loser = ra.saved ? rb : ra;
    assert.equal(winner.state.version, 1);
    assert.ok(!Number.isNaN(Date.parse(winner.state.saved)), `saved is an ISO time: ${winner.state.saved}`);
    assert.deepEqual(loser.state, winner.state);
    assert.deepEqual(await a.state(), winner.state);
    assert.deepEqual(await b.state(), winner.state);
    const tag = winner === ra ? "a" : "b";
    assert.deepEqual({ ...winner.state, version: 0, saved: "" }, { ...snapshot(tag === "a" ? 10 : 12, tag), version: 0, saved: "" });

    const second = await a.saveState(1, snapshot(20, "second"));
    assert.equal(second.saved, true);
    assert.equal(second.state.version, 2);
    const stale = await b.saveState(1, snapshot(21, "stale"));
    assert.equal(stale.saved, false);
    assert.deepEqual(stale.state, second.state);
    const fromZero = await b.saveState(0, snapshot(22, "zero"));
    assert.equal(fromZero.saved, false);
    assert.equal(fromZero.state.version, 2);
    const third = await b.saveState(2, snapshot(30, "third"));
    assert.deepEqual([third.saved, third.state.version, third.state.covers], [true, 3, 30]);
    assert.deepEqual(await (await (await reopen()).conversation("cas")).state(), third.state);
  });

  it("results: saved, loaded exactly, overwritten idempotently; the reference is known before and stable after", async ({ store, reopen }) => {
    const c = await store.conversation("results");
    const ref = c.resultRef("toolu_01");
    const text = `line one\r\nline "two"\t\u0000 nul, 😀, ${"x".repeat(200_000)}`;
    assert.equal(await c.saveResult("toolu_01", text), ref);
    assert.equal(await c.saveResult("toolu_01", text), ref, "saving again is idempotent");
    assert.equal(await c.loadResult("toolu_01"), text);
    assert.equal(await c.loadResult("toolu_unknown"), undefined);
    const again = await (await reopen()).conversation("results");
    assert.equal(again.resultRef("toolu_01"), ref, "the same reference from another instance");
    assert.equal(await again.loadResult("toolu_01"), text);
    assert.equal(await again.saveResult("toolu_01", "newer"), ref);
    assert.equal(await c.loadResult("toolu_01"), "newer");
    const other = await store.conversation("results-2");
    assert.notEqual(other.resultRef("toolu_01"), ref, "another conversation's result is another");
    assert.equal(await other.loadResult("toolu_01"), undefined);
    await other.saveResult("toolu_01", "theirs");
    assert.equal(await c.loadResult("toolu_01"), "newer");
    assert.equal(await c.saveResult("", "empty id"), c.resultRef(""));
    assert.equal(await c.loadResult(""), "empty id");
  });

  it("lines(): the header first, messages in seq order, boundaries and events where they were appended", async ({ store }) => {
    const c = await store.conversation("lines");
    await c.appendMessages(0, [msg(0), msg(1)]);
    await c.appendEntry({ type: "boundary", kind: "summary", tokens_before: 900, tokens_after: 100, summary: "so far" });
    await c.appendMessages(2, [msg(2)]);
    await c.appendEntry({ type: "event", name: "note", detail: { n: 1 } });
    await c.appendMessages(1, [msg(1, "!"), msg(2), msg(3)]);
    const lines = await c.lines();
    const shape = lines.map((l) => (l.type === "message" ? `message ${(l.message.content as { text: string }[])[0]!.text}` : l.type === "session" ? "session" : `${l.type} ${String(l.name ?? l.kind)}`));
    assert.deepEqual(shape, ["session", "message message 0", "message message 1", "boundary summary", "message message 2", "event note", "event rewritten", "message message 3"]);
    const entries = lines.slice(1);
    for (const e of entries) assert.ok(!Number.isNaN(Date.parse(String(e.ts))), `${e.type} has an ISO ts`);
    const uuids = entries.filter((l) => l.type === "message").map((l) => l.uuid);
    assert.ok(uuids.every((u) => typeof u === "string" && u.length > 0));
    assert.equal(new Set(uuids).size, uuids.length, "distinct uuids");
    assert.deepEqual({ ...entries[2], ts: "" }, { type: "boundary", kind: "summary", tokens_before: 900, tokens_after: 100, summary: "so far", ts: "" });
    assert.deepEqual({ ...entries[4], ts: "" }, { type: "event", name: "note", detail: { n: 1 }, ts: "" });
  });

  it("messages come back exactly: NUL, lone surrogates, newlines, unicode, tool calls, images", async ({ store, reopen }) => {
    const odd: Message[] = [
      { role: "user", content: "plain string \u0000 with NUL, a lone \ud800 surrogate, \r\n and 会话 🙂" },
      { role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature: "sig" }, { type: "tool_use", id: "toolu_9", name: "bash", input: { cmd: "cat /bin/ls", deep: { a: [1, 2, { b: null }] } } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_9", content: "\u0000\u0001\u007f binary-ish", is_error: false }, { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] },
    ];
    const c = await store.conversation("exact");
    assert.deepEqual(await c.appendMessages(0, odd), { added: 3, existing: 0, rewritten: [] });
    assert.deepEqual(await c.appendMessages(0, odd), { added: 0, existing: 3, rewritten: [] });
    assert.deepEqual(messagesOf(await (await (await reopen()).conversation("exact")).lines()), odd);
  });

  it("ids with quotes, slashes, dots, unicode, case and 1,000 characters work and stay distinct", async ({ store, reopen }) => {
    const ids = ["it's \"quoted\"", "a/b", "a\\b", "..", ".", "../escape", "/abs", "會話 🙂 ñ", "Case", "case", " ", "%2F", "x".repeat(1000), Array.from({ length: 1000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20000))).join("")];
    for (const id of ids) {
      const c = await store.conversation(id);
      assert.equal(c.id, id);
      await c.appendMessages(0, [{ role: "user", content: `for ${id}` }]);
    }
    const other = await reopen();
    for (const id of ids) {
      const lines = await (await other.conversation(id)).lines();
      assert.equal(lines[0]?.type === "session" && lines[0].id, id);
      assert.deepEqual(messagesOf(lines), [{ role: "user", content: `for ${id}` }], `the conversation ${JSON.stringify(id.slice(0, 40))}`);
    }
    const listed = (await other.list()).map((i) => i.id);
    assert.deepEqual([...listed].sort(), [...ids].sort());
  });

  it("an id of 1,001 characters, or empty, is refused in one line", async ({ store }) => {
    await rejectsInput(store.conversation("x".repeat(1001)), "1,001 characters");
    await rejectsInput(store.conversation(""), "empty");
    assert.deepEqual(await store.list(), []);
  });

  it("list(): every conversation with its message count, newest change first", async ({ store }) => {
    const [a, b, c] = [await store.conversation("a"), await store.conversation("b"), await store.conversation("c")];
    for (const [conv, n] of [[a, 1], [b, 2], [c, 3]] as const) {
      await sleep(20);
      await conv.appendMessages(0, Array.from({ length: n }, (_, i) => msg(i)));
    }
    assert.deepEqual((await store.list()).map((i) => [i.id, i.messages]), [["c", 3], ["b", 2], ["a", 1]]);
    await sleep(20);
    await a.appendMessages(1, [msg(1)]);
    const list = await store.list();
    assert.deepEqual(list.map((i) => [i.id, i.messages]), [["a", 2], ["c", 3], ["b", 2]]);
    for (const i of list) assert.ok(Math.abs(Date.parse(i.updated) - Date.now()) < 60_000, `updated ${i.updated}`);
    await sleep(20);
    await store.conversation("empty");
    assert.deepEqual((await store.list()).find((i) => i.id === "empty")?.messages, 0);
  });
}
