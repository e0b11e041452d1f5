// The reactive layer on its own (src/compaction/layers/reactive.ts): what it shrinks after a
// "prompt too long" (the freshest oversized results, harder than budget, nothing older) and after
// a 413 (bulky attachments, oldest first, until the byte target), and the event it reports.
import { test } from "node:test";
import assert from "node:assert/strict";
import { byteTarget, shrinkBytes, shrinkFresh, shrinkOnlyEvent } from "../../src/compaction/layers/reactive.ts";
import { isPersistedMarker } from "../../src/compaction/layers/markers.ts";
import { validate } from "../../src/messages/invariants.ts";
import type { Message } from "../../src/messages/types.ts";
import { bashSession, calls, context, contentOf, results, user } from "../support/build.ts";

const image = (kb: number) => ({ type: "image" as const, source: { type: "base64" as const, media_type: "image/png" as const, data: "A".repeat(kb * 1024) } });

test("shrinkFresh: the newest oversized result goes to the store, an older one of the same size stays; the history stays valid", () => {
  // 16k window: an eighth is 2k tokens; results of ~12k chars (~3k tokens) are over it.
  const h = bashSession(6, 12_000);
  const ctx = context({ window: 16_000, maxOutput: 2_000, config: { budget: { perResultChars: 200_000, perMessageChars: 400_000, maxWindowShare: 0.9 } } });
  const r = shrinkFresh(h, ctx);
  assert.ok(r.event, "something was shrunk");
  assert.ok(r.freedTokens > 0);
  assert.deepEqual(validate(r.history), []);
  const last = r.history.at(-1)!;
  assert.ok(isPersistedMarker(String(contentOf(last, 0))), "the freshest result was moved");
  assert.equal(contentOf(r.history[2]!, 0), contentOf(h[2]!, 0), "an old result is left to the summary");
  assert.equal(ctx.store.files.size, r.event!.persisted.length);
  // Nothing fresh and big: the same array back, no event.
  const small = bashSession(3, 100);
  const none = shrinkFresh(small, ctx);
  assert.equal(none.history, small);
  assert.equal(none.event, null);
});

test("shrinkFresh: the bar a result must pass is an eighth of the window, or the overage when that is smaller (never under 2%)", () => {
  const h = bashSession(4, 9_000);
  const mk = () => context({ window: 32_000, maxOutput: 2_000, config: { budget: { perResultChars: 200_000, perMessageChars: 400_000, maxWindowShare: 0.9 } } });
  const gentle = shrinkFresh(h, mk(), 50);
  const hard = shrinkFresh(h, mk(), 20_000);
  // ~2.2k-token results on a 32k window: under an eighth (4k), over a 50-token overage's 2% floor (640).
  assert.equal(hard.freedTokens, 0, "a large overage: only results over an eighth of the window");
  assert.ok(gentle.freedTokens > 0, "a small overage: any fresh result bigger than it");
});

test("shrinkBytes: attachments go oldest first until the target, each named in its place; text is never taken", () => {
  const h: Message[] = [
    user("look at these"),
    calls(["screenshot", {}, "s1"]),
    results(["s1", [{ type: "text", text: "first" }, image(300)]]),
    calls(["screenshot", {}, "s2"]),
    results(["s2", [{ type: "text", text: "second" }, image(300)]]),
    { role: "assistant", content: [{ type: "text", text: "x".repeat(20_000) }] },
    user("and this one"),
  ];
  const before = Buffer.byteLength(JSON.stringify(h));
  const target = before - 200 * 1024; // less than one image's worth
  const r = shrinkBytes(h, target);
  assert.equal(r.removed.length, 1, "only as many as the target needs");
  assert.match(r.removed[0]!, /^\[image image\/png.*KB: taken out of the request/);
  assert.ok(r.bytesAfter <= target && r.bytesBefore === before);
  assert.equal(Buffer.byteLength(JSON.stringify(r.history)), r.bytesAfter, "the byte count is the history's");
  const first = (r.history[2]!.content as { content: { type: string; text?: string }[] }[])[0]!.content;
  assert.equal(first[1]!.type, "text", "the oldest image was replaced");
  assert.equal(first[0]!.text, "first", "its text stayed");
  assert.equal((h[2]!.content as { content: { type: string }[] }[])[0]!.content[1]!.type, "image", "the input is not mutated");
  assert.deepEqual(validate(r.history), []);
  // A target it cannot reach by attachments: all of them go, and it says how far it got.
  const all = shrinkBytes(h, 1_000);
  assert.equal(all.removed.length, 2);
  assert.ok(all.bytesAfter > 1_000);
});

test("byteTarget and the shrink-only event", () => {
  const h: Message[] = [user("x".repeat(1_000))];
  assert.equal(byteTarget(h, 10_000), 8_500);
  assert.equal(byteTarget(h), Buffer.byteLength(JSON.stringify(h)) / 2);
  const e = shrinkOnlyEvent({ tokensBefore: 900, tokensAfter: 400, messagesBefore: 7, messagesAfter: 7 });
  assert.deepEqual([e.kind, e.summarizer, e.freedTokens, e.attachmentsRemoved], ["reactive", "none", 500, undefined]);
  const withBytes = shrinkOnlyEvent({ tokensBefore: 10, tokensAfter: 20, messagesBefore: 1, messagesAfter: 1, bytes: { history: h, bytesBefore: 9, bytesAfter: 3, removed: ["a", "b"] } });
  assert.deepEqual([withBytes.freedTokens, withBytes.bytesBefore, withBytes.bytesAfter, withBytes.attachmentsRemoved], [0, 9, 3, 2]);
});
