import { test } from "node:test";
import assert from "node:assert/strict";
import { budget } from "../../src/compaction/layers/budget.ts";
import { isPersistedMarker } from "../../src/compaction/layers/markers.ts";
import { bashSession, calls, context, contentOf, results, user } from "../support/build.ts";

test("a result over its tool's limit goes to disk byte for byte; the context keeps a marker with path and preview", () => {
  const big = "x".repeat(40_000) + "END";
  const h = [user("go"), calls(["bash", { command: "yes" }, "a"]), results(["a", big])];
  const ctx = context();
  const r = budget(h, ctx);
  assert.ok(r.event);
  assert.equal(r.event.persisted.length, 1);
  const marker = contentOf(r.history[2]) as string;
  assert.ok(isPersistedMarker(marker));
  const path = r.event.persisted[0]!.path;
  assert.ok(marker.includes(path));
  assert.ok(marker.includes("x".repeat(100)), "preview present");
  assert.equal(ctx.store.files.get(path), big);
  assert.ok(r.freedTokens > 0);
  assert.equal(r.freedTokens, r.event.freedTokens);
  // Input untouched.
  assert.equal(contentOf(h[2]), big);
});

test("per-tool limits: bash 30k and grep 20k, others 50k", () => {
  const ctx = context();
  const h = [
    user("go"),
    calls(["bash", {}, "b"], ["grep", {}, "g"], ["read_file", {}, "r"]),
    results(["b", "a ".repeat(16_000)], ["g", "b ".repeat(11_000)], ["r", "c ".repeat(20_000)]),
  ];
  const r = budget(h, ctx);
  assert.deepEqual(r.event?.persisted.map((p) => p.toolUseId).sort(), ["b", "g"]);
});

test("a batch over the per-message limit is persisted largest first until under it", () => {
  const ctx = context({ config: { budget: { perMessageChars: 100_000, perResultChars: 60_000, perToolChars: { bash: 60_000 } } } });
  const sizes = [45_000, 30_000, 40_000];
  const h = [user("go"), calls(...sizes.map((_, i) => ["bash", {}, `r${i}`] as [string, unknown, string])), results(...sizes.map((s, i) => [`r${i}`, "z".repeat(s)] as [string, string]))];
  const r = budget(h, ctx);
  // 115k > 100k: the largest (45k) goes; 70k + marker is under 100k, so the rest stay.
  assert.deepEqual(r.event?.persisted.map((p) => p.toolUseId), ["r0"]);
});

test("on a small window no single result may take more than a quarter of it", () => {
  const ctx = context({ window: 8_000, maxOutput: 2_000 });
  const text = "word ".repeat(3_000); // ~3k tokens > 2k = a quarter of 8k, but only 15k chars
  const r = budget([user("go"), calls(["read_file", {}, "a"]), results(["a", text])], ctx);
  assert.equal(r.event?.persisted.length, 1);
  assert.ok(ctx.tokens.block((r.history[2]!.content as never[])[0]!) <= 2_000);
});

test("block-list results are saved as their exact JSON; is_error is kept", () => {
  const ctx = context();
  const content = [{ type: "text" as const, text: "e".repeat(60_000) }];
  const r = budget([user("go"), calls(["bash", {}, "a"]), results(["a", content, true])], ctx);
  const p = r.event!.persisted[0]!;
  assert.equal(ctx.store.files.get(p.path), JSON.stringify(content));
  assert.equal((r.history[2]!.content as { is_error?: boolean }[])[0]!.is_error, true);
});

test("small results, and a second run, change nothing", () => {
  const ctx = context();
  const h = bashSession(5, 1_000);
  const r = budget(h, ctx);
  assert.equal(r.event, null);
  assert.equal(r.history, h);
  const big = budget([user("go"), calls(["bash", {}, "a"]), results(["a", "q".repeat(90_000)])], ctx);
  const again = budget(big.history, ctx);
  assert.equal(again.event, null);
  assert.equal(again.history, big.history);
});

test("unchanged messages keep their identity (memoised counts and the prompt cache rely on it)", () => {
  const ctx = context();
  const h = [...bashSession(3, 100), calls(["bash", {}, "z"]), results(["z", "w".repeat(80_000)])];
  const r = budget(h, ctx);
  for (let i = 0; i < h.length - 1; i++) assert.equal(r.history[i], h[i]);
  assert.notEqual(r.history.at(-1), h.at(-1));
});

test("a screenshot in a tool result is budgeted by its token cost, not its base64 length: it stays in context", async () => {
  const { png } = await import("../support/media.ts");
  const shot = png(1280, 800, 200_000).toString("base64"); // ~270k base64 characters, ~1,366 tokens
  const image = { type: "image" as const, source: { type: "base64", media_type: "image/png", data: shot } };
  const h = [user("go"), calls(["browser_screenshot", {}, "s"]), results(["s", [{ type: "text", text: "Screenshot taken" }, image]])];
  const r = budget(h, context());
  assert.equal(r.event, null, "nothing persisted");
  assert.deepEqual(contentOf(r.history[2]), contentOf(h[2]));
  // Twenty of them in one result are over the result's token share and do go to disk, with a readable preview.
  const many = [user("go"), calls(["browser_screenshot", {}, "m"]), results(["m", [{ type: "text", text: "Screenshots" }, ...Array.from({ length: 40 }, () => image)]])];
  const ctx = context();
  const r2 = budget(many, ctx);
  assert.equal(r2.event?.persisted.length, 1);
  assert.match(contentOf(r2.history[2]) as string, /\[image image\/png 1280×800\]/);
});

test("budget's memory of what it moved: the same id with the same size and start but other text is saved again (local servers reuse ids like call_0)", () => {
  const ctx = context();
  ctx.persisted = new Map();
  const start = "row ".repeat(1_000);
  const first = `${start}${"a".repeat(60_000)}`;
  const second = `${start}${"b".repeat(60_000)}`;
  const one = budget([user("go"), calls(["bash", { command: "run" }, "call_0"]), results(["call_0", first])], ctx);
  assert.equal(one.event?.persisted.length, 1);
  // The same history rebuilt as new objects: the marker comes back, nothing is written, no event.
  const again = budget(structuredClone([user("go"), calls(["bash", { command: "run" }, "call_0"]), results(["call_0", first])]), ctx);
  assert.equal(again.event, null);
  assert.ok(isPersistedMarker(String(contentOf(again.history[2]))));
  // Later, another call_0 whose output differs only past its start.
  const other = budget([user("go"), calls(["bash", { command: "run" }, "call_0"]), results(["call_0", second])], ctx);
  assert.equal(other.event?.persisted.length, 1, "saved as new");
  assert.ok([...ctx.store.files.values()].includes(second), "the new text is on disk");
});
