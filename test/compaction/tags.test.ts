// Compaction state carried in message text: one module owns every tag, each with its
// render/parse pair, and what one compaction writes the next one reads back.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseLedger, renderLedger } from "../../src/compaction/state/ledger.ts";
import { persistedMarker, clearedPlaceholder } from "../../src/compaction/layers/markers.ts";
import { todosOf, userMessagesOf, carryAttachments } from "../../src/compaction/state/retain.ts";
import { isLetheText, latestRequest, persisted, cleared, tagOf, userMessage } from "../../src/compaction/state/tags.ts";
import { createTokenCounter } from "../../src/tokens/count.ts";
import type { Message } from "../../src/messages/types.ts";

test("user messages and the latest request: parse(render(x)) = x for any text, and each is classified", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), (text) => {
      assert.equal(userMessage.parse(userMessage.render(text)), text);
      assert.equal(latestRequest.parse(latestRequest.render(text)), text);
      assert.equal(tagOf(userMessage.render(text)), "user_message");
      assert.equal(tagOf(latestRequest.render(text)), "latest_request");
    }),
    { numRuns: 300 },
  );
  // And the next compaction reads them back as the user's own messages.
  const history: Message[] = [{ role: "user", content: [{ type: "text", text: userMessage.render("first") }, { type: "text", text: latestRequest.render("second") }] }];
  assert.deepEqual(userMessagesOf(history), ["first", "second"]);
});

test("the ledger: parse(render(l)) = l", () => {
  fc.assert(
    fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z0-9_/.-]{1,40}$/), { maxLength: 20 }), fc.uniqueArray(fc.stringMatching(/^[a-z0-9_/.-]{1,40}$/), { maxLength: 20 }), (read, modified) => {
      const l = { read: new Set(read), modified: new Set(modified) };
      const text = renderLedger(l);
      assert.equal(tagOf(text), "ledger");
      const back = parseLedger(text);
      assert.deepEqual([...back.read].sort(), [...read].sort());
      assert.deepEqual([...back.modified].sort(), [...modified].sort());
    }),
    { numRuns: 200 },
  );
});

test("markers write numbers as en-US does, digit groups and all", async () => {
  const { snipBoundary } = await import("../../src/compaction/layers/markers.ts");
  fc.assert(
    fc.property(fc.oneof(fc.nat(), fc.integer({ min: 1_000, max: 10_000_000 }), fc.constant(0)), fc.nat(), (n, m) => {
      const fmt = (x: number) => x.toLocaleString("en-US");
      assert.ok(persistedMarker({ toolUseId: "t", path: "/p", chars: n, tokens: m, preview: "p".repeat(m % 50) }).includes(`(${fmt(n)} chars, ~${fmt(m)} tokens)`));
      assert.ok(clearedPlaceholder({ toolUseId: "t", call: "bash", tokens: n }).includes(`~${fmt(n)} tokens`));
      assert.ok(snipBoundary({ removed: n, from: m, to: m + n + 1 }).includes(`${fmt(n)} earlier messages (#${m}-#${m + n})`));
    }),
    { numRuns: 300 },
  );
});

test("the todo list, the persisted marker's path, the cleared placeholder and the attachments note are read back", () => {
  const written: Message[] = [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "todo_write", input: { todos: [{ content: "ship it", status: "in_progress" }] } }] }];
  const carried = todosOf(written)!;
  assert.equal(tagOf(carried), "todos");
  assert.equal(todosOf([{ role: "user", content: [{ type: "text", text: carried }] }]), carried, "a carried list is found again as it is");

  const marker = persistedMarker({ toolUseId: "toolu_1", path: "/s/tool-results/toolu_1.txt", chars: 100_000, tokens: 25_000, preview: "head" });
  assert.ok(persisted.is(marker) && tagOf(marker) === "persisted");
  assert.equal(persisted.path(marker), "/s/tool-results/toolu_1.txt");

  const placeholder = clearedPlaceholder({ toolUseId: "toolu_2", call: "bash \"ls\"", tokens: 900, savedPath: "/s/tool-results/toolu_2.txt" });
  assert.ok(cleared.is(placeholder) && tagOf(placeholder) === "cleared");

  const scope: Message[] = [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }] }];
  const note = carryAttachments(scope, 0, createTokenCounter(), " (transcript.jsonl)").blocks[0] as { text: string };
  assert.equal(tagOf(note.text), "attachments");
  // A second compaction carries the first one's "not in context now" line.
  const again = carryAttachments([{ role: "user", content: [note as never] }], 0, createTokenCounter(), "").blocks[0] as { text: string };
  assert.match(again.text, /url https:\/\/example\.com\/a\.png - not in context now/);
});

test("the user's own words are never taken for lethe's", () => {
  for (const text of ["please fix [lethe] issues", "lethe: what is it?", "<lethe is a river>", "[an earlier message", "the user's latest request"]) {
    assert.equal(isLetheText(text), false, text);
    assert.equal(tagOf(text), undefined, text);
  }
});

test("the summary and restored files: parse(render(x)) = x; a summary reply's notes are read without its analysis", async () => {
  const { summary, restoredFile, ledgerTag } = await import("../../src/compaction/state/tags.ts");
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }).filter((s) => !s.includes("</summary>") && s.trim() !== ""), fc.stringMatching(/^[a-z0-9_/.-]{1,40}$/), (text, path) => {
      assert.equal(summary.parse(`[lethe: note]\n\n${summary.render(text)}`), text.trim());
      assert.equal(restoredFile.path(restoredFile.render(path, text)), path);
      assert.equal(restoredFile.path(restoredFile.render(path, text, "1-10 of 20")), path);
    }),
    { numRuns: 200 },
  );
  assert.equal(summary.ofReply("<analysis>x</analysis><summary>notes</summary>"), "notes");
  assert.equal(summary.ofReply("<summary>cut off"), "cut off");
  assert.equal(summary.ofReply("no tags"), undefined);
  assert.ok(ledgerTag.in(`[lethe: snipped]\n${renderLedger({ read: new Set(["a"]), modified: new Set() })}`));
});
