// What a compaction's boundary line records (removed messages and tool results, carried state):
// boundaryDetails against a plain reading of its definition, on histories of every shape.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { type MessageLine, boundaryDetails, expandRemoved, headCarried, snipDetails, snipLines } from "../../src/compaction/state/boundary.ts";
import { parseLedger, renderLedger } from "../../src/compaction/state/ledger.ts";
import { persistedMarker, snipBoundary } from "../../src/compaction/layers/markers.ts";
import { latestRequest, persisted, restoredFile, tagOf, ledgerTag, userMessage } from "../../src/compaction/state/tags.ts";
import type { ContentBlock, Message } from "../../src/messages/types.ts";
import { repair } from "../../src/messages/invariants.ts";

const blocks = (m: Message) => (typeof m.content === "string" ? [{ type: "text" as const, text: m.content }] : m.content);

/** The definition, read plainly: every message and block of both histories looked at. */
function reference(before: readonly Message[], after: readonly Message[], uuidOf?: (m: Message) => string | undefined) {
  const kept = new Set<Message>(after);
  const removedMessages = before.filter((m) => !kept.has(m));
  const keptIds = new Set<string>();
  for (const m of after) for (const b of blocks(m)) if (b.type === "tool_use") keptIds.add(b.id);
  const names = new Map<string, string>();
  const results = new Map<string, { where: string; uuid?: string }>();
  for (const m of before) {
    for (const b of blocks(m)) {
      if (b.type === "tool_use") names.set(b.id, b.name);
      else if (b.type === "tool_result") {
        const where = typeof b.content === "string" && persisted.is(b.content) ? (persisted.path(b.content) ?? "transcript") : "transcript";
        const uuid = uuidOf?.(m);
        results.set(b.tool_use_id, uuid ? { where, uuid } : { where });
      }
    }
  }
  const tool_results = [];
  for (const [id, r] of results) {
    if (!keptIds.has(id)) tool_results.push({ tool_use_id: id, ...(names.has(id) ? { name: names.get(id)! } : {}), full_text: r.where, ...(r.uuid ? { message_uuid: r.uuid } : {}) });
  }
  const carried = { user_messages: 0, latest_request: false, ledger: { read: 0, modified: 0 }, restored_files: [] as string[], todos: false, attachments: 0 };
  const was = new Set<Message>(before);
  for (const m of after) {
    if (was.has(m)) continue;
    for (const b of blocks(m)) {
      if (b.type !== "text") continue;
      const tag = tagOf(b.text);
      if (tag === "user_message") carried.user_messages++;
      else if (tag === "latest_request") carried.latest_request = true;
      else if (tag === "todos") carried.todos = true;
      else if (tag === "attachments") carried.attachments += b.text.split("\n").filter((l) => l.startsWith("- ")).length;
      else if (tag === "ledger") {
        const l = parseLedger(b.text);
        carried.ledger = { read: l.read.size, modified: l.modified.size };
      } else {
        const restored = new RegExp(`^<lethe-restored-file path="([^"]+)"`).exec(b.text)?.[1];
        if (restored !== undefined) carried.restored_files.push(restored);
        if (tag === "lethe_note" && ledgerTag.in(b.text)) {
          const l = parseLedger(b.text);
          carried.ledger = { read: l.read.size, modified: l.modified.size };
        }
      }
    }
  }
  const uuids = uuidOf ? removedMessages.map((m) => uuidOf(m)).filter((u): u is string => typeof u === "string") : [];
  return { removed: { messages: removedMessages.length, uuids, tool_results }, carried };
}

const id = fc.constantFrom("a", "b", "c", "d", "e", "f");
const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ maxLength: 20 }).map((t) => userMessage.render(t)),
  fc.string({ maxLength: 20 }).map((t) => latestRequest.render(t)),
  fc.constant("<lethe-todos>\n- [ ] x\n</lethe-todos>"),
  fc.constant("[lethe: attachments from the compacted part of this conversation: 2 in all]\n- a\n- b"),
  fc.uniqueArray(fc.string({ maxLength: 8 }), { maxLength: 4 }).map((r) => renderLedger({ read: new Set(r), modified: new Set(r.slice(1)) })),
  fc.stringMatching(/^[a-z/.]{1,12}$/).map((p) => restoredFile.render(p, "body")),
  fc.constant(`${snipBoundary({ removed: 3, from: 2, to: 5 })}\n${renderLedger({ read: new Set(["x"]), modified: new Set() })}`),
);
const block: fc.Arbitrary<ContentBlock> = fc.oneof(
  text.map((t) => ({ type: "text" as const, text: t })),
  fc.record({ id, name: fc.constantFrom("bash", "read_file") }).map(({ id, name }) => ({ type: "tool_use" as const, id, name, input: {} })),
  fc.record({ id, saved: fc.boolean() }).map(({ id, saved }) => ({ type: "tool_result" as const, tool_use_id: id, content: saved ? persistedMarker({ toolUseId: id, path: `/r/${id}.txt`, chars: 10, tokens: 3, preview: "" }) : "out" })),
);
const message: fc.Arbitrary<Message> = fc.oneof(
  fc.record({ role: fc.constantFrom("user" as const, "assistant" as const), content: fc.array(block, { maxLength: 4 }) }),
  fc.record({ role: fc.constant("user" as const), content: fc.string({ maxLength: 10 }) }),
);

test("boundaryDetails records what a plain reading of its definition does", () => {
  fc.assert(
    fc.property(fc.array(message, { maxLength: 12 }), fc.array(fc.boolean(), { maxLength: 12 }), fc.array(message, { maxLength: 4 }), fc.nat(), fc.boolean(), (before, keep, added, at, withUuids) => {
      // After: some of the messages before (in order), with new ones put in somewhere.
      const kept = before.filter((_, i) => keep[i] ?? true);
      const after = [...kept.slice(0, at % (kept.length + 1)), ...added, ...kept.slice(at % (kept.length + 1))];
      const uuids = new Map(before.map((m, i) => [m, i % 3 === 0 ? undefined : `u${i}`]));
      const uuidOf = withUuids ? (m: Message) => uuids.get(m) : undefined;
      assert.deepEqual(boundaryDetails(before, after, uuidOf), reference(before, after, uuidOf));
    }),
    { numRuns: 1_000 },
  );
});

/**
 * A snip of a history as repair leaves it (calls unique and answered, results after their calls),
 * as the engine's snips see it: cut after a user message and before an assistant one (`a`, `b`
 * pick where), `added` appended to the message before the cut. Undefined when it has no such cut.
 */
function snipCase(raw: Message[], a: number, b: number, added: ContentBlock[]) {
  const before = repair(raw).history;
  const heads = before.flatMap((m, i) => (m.role === "user" && i + 1 < before.length ? [i + 1] : []));
  if (heads.length === 0) return undefined;
  const from = heads[a % heads.length]!;
  const tails = before.flatMap((m, i) => (i > from && m.role === "assistant" ? [i] : []));
  if (tails.length === 0) return undefined;
  const to = tails[b % tails.length]!;
  const last = before[from - 1]!;
  const bounded: Message = { ...last, content: [...(typeof last.content === "string" ? [{ type: "text" as const, text: last.content }] : last.content), ...added] } as Message;
  return { before, from, to, last, after: [...before.slice(0, from - 1), bounded, ...before.slice(to)] };
}

test("snipDetails, given what a snip removed and rewrote, records what boundaryDetails does (and falls back to it when the histories are not that shape)", () => {
  let fast = 0;
  fc.assert(
    fc.property(fc.array(message, { minLength: 2, maxLength: 14 }), fc.nat(), fc.nat(), fc.array(block, { maxLength: 4 }), fc.boolean(), fc.nat({ max: 5 }), (raw, a, b, added, withUuids, disturb) => {
      const c = snipCase(raw, a, b, added);
      if (!c) return;
      const { before, from, to, after } = c;
      // Now and then a history a snip alone would not give: another message replaced too.
      if (disturb === 0 && after.length > 1) after[after.length - 1] = { ...after[after.length - 1]! };
      const uuids = new Map(before.map((m, i) => [m, i % 3 === 0 ? undefined : `u${i}`]));
      const uuidOf = withUuids ? (m: Message) => uuids.get(m) : undefined;
      const expected = boundaryDetails(before, after, uuidOf);
      assert.deepEqual(snipDetails(before, after, from, to, uuidOf), expected);
      if (JSON.stringify(expected.removed.tool_results).length > 2) fast++;
    }),
    { numRuns: 2_000 },
  );
  assert.ok(fast > 100, `${fast} cases with removed results`);
});

test("a snip's removed lines, as its boundary line writes them (runs of transcript lines), read back as what boundaryDetails records: every uuid and result, where each is kept, and what the head carried", () => {
  let compact = 0, split = 0, saved = 0;
  fc.assert(
    fc.property(fc.array(message, { minLength: 2, maxLength: 14 }), fc.nat(), fc.nat(), fc.array(block, { maxLength: 4 }), fc.array(fc.nat({ max: 9 }), { maxLength: 14 }), fc.nat({ max: 7 }), (raw, a, b, added, gaps, unknown) => {
      // Snip adds text (its note, what it carries) to the message it rewrites, never a call or a result.
      const c = snipCase(raw, a, b, added.filter((k) => k.type === "text"));
      if (!c) return;
      const { before, from, to, last, after } = c;
      // The transcript: each message a line, in order, with now and then other lines (not messages
      // of this context) between them, now and then one the writer does not know, and now and then
      // two written in the other order (a host that reordered its list).
      const file: { uuid: string; message: Message; line: MessageLine }[] = [];
      let ord = 0, at = 0;
      const order = before.map((_, i) => i);
      if (unknown === 1 && to - from >= 2) [order[from], order[from + 1]] = [from + 1, from];
      order.forEach((i) => {
        const m = before[i]!;
        for (let g = 0; g < (gaps[i] ?? 0) % 3; g++) file.push({ uuid: `x${i}.${g}`, message: { role: "user", content: "other" }, line: { uuid: `x${i}.${g}`, ord: ord++, at, end: (at += 10) } });
        file.push({ uuid: `u${i}`, message: m, line: { uuid: `u${i}`, ord: ord++, at, end: (at += 10) } });
      });
      const byMessage = new Map(file.map((f) => [f.message, f.line]));
      const lineOf = (m: Message) => (unknown === 0 && m === before[to - 1] ? undefined : byMessage.get(m));
      const uuidOf = (m: Message) => byMessage.get(m)?.uuid;
      const expected = boundaryDetails(before, after, uuidOf);
      const d = snipLines(before, from, to, lineOf);
      if (!d) {
        assert.ok(unknown === 0 || (typeof last.content !== "string" && last.content.some((k) => k.type === "tool_use")), "runs unless a removed message has no line (or the rewritten one holds a call)");
        assert.deepEqual(snipDetails(before, after, from, to, uuidOf), expected);
        return;
      }
      compact++;
      if (d.removed.lines.length > 1) split++;
      if (d.removed.persisted) saved++;
      // A reader: each run's lines from the file, first to last, in order.
      const lines = d.removed.lines.flatMap((run) => {
        const i = file.findIndex((f) => f.uuid === run.first), j = file.findIndex((f) => f.uuid === run.last);
        assert.ok(i >= 0 && j >= i && file[i]!.line.at === run.at && file[j]!.line.end === run.end, "a run names its first and last line and their bytes");
        return file.slice(i, j + 1);
      });
      assert.deepEqual({ removed: expandRemoved(d.removed, lines), carried: headCarried(after.slice(0, from)) }, expected);
    }),
    { numRuns: 3_000 },
  );
  assert.ok(compact > 200 && split > 30 && saved > 10, `compact ${compact}, split into runs ${split}, with results in files ${saved}`);
});

test("snipDetails looks at the removed part and the rewritten message only", () => {
  // Messages outside them that would throw if their content were read.
  const trap = (role: "user" | "assistant"): Message => ({ role, get content(): never { throw new Error("read a kept message"); } }) as unknown as Message;
  const head = [trap("user"), trap("assistant")];
  const last: Message = { role: "user", content: [{ type: "text", text: "go on" }] };
  const removed: Message[] = [
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
  ];
  const tail = [trap("assistant"), trap("user")];
  const before = [...head, last, ...removed, ...tail];
  const bounded: Message = { role: "user", content: [{ type: "text", text: "go on" }, { type: "text", text: userMessage.render("fix it") }] };
  const after = [...head, bounded, ...tail];
  const d = snipDetails(before, after, 3, 5);
  assert.deepEqual(d.removed, { messages: 3, uuids: [], tool_results: [{ tool_use_id: "t1", name: "bash", full_text: "transcript" }] });
  assert.equal(d.carried.user_messages, 1);
});

test("snipDetails given a range that is not a snip's (fractional, reversed, past the end) answers as boundaryDetails", () => {
  const before: Message[] = [
    { role: "user", content: "task" },
    { role: "assistant", content: [{ type: "text", text: "a" }] },
    { role: "user", content: [{ type: "text", text: "b" }] },
    { role: "assistant", content: [{ type: "text", text: "c" }] },
  ];
  const after = [before[0]!, before[3]!];
  for (const [from, to] of [[1.5, 3], [3, 1], [1, 9], [0, 2], [Number.NaN, 3]] as const) assert.deepEqual(snipDetails(before, after, from, to), boundaryDetails(before, after));
});
