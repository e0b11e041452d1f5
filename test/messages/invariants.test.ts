import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  CONTINUATION_TEXT,
  isValid,
  repair,
  validate,
  type FixKind,
  type Violation,
  type ViolationKind,
} from "../../src/messages/invariants.ts";
import type { ContentBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock } from "../../src/messages/types.ts";
import {
  applyDamage,
  arbBrokenHistory,
  arbBrokenHistoryWithDamages,
  arbHistory,
  DAMAGE_KINDS,
} from "../support/arbitraries.ts";

// ---------------------------------------------------------------------------------------------
// helpers

const txt = (text: string): TextBlock => ({ type: "text", text });
const tu = (id: string, name = "bash"): ToolUseBlock => ({ type: "tool_use", id, name, input: { command: "ls" } });
const tr = (id: string, content: ToolResultBlock["content"] = "ok"): ToolResultBlock => ({
  type: "tool_result",
  tool_use_id: id,
  content,
});
const u = (...content: Array<ContentBlock | string>): Message => ({
  role: "user",
  content: content.length === 1 && typeof content[0] === "string" ? content[0] : content.map(toBlock),
});
const a = (...content: Array<ContentBlock | string>): Message => ({ role: "assistant", content: content.map(toBlock) });
const toBlock = (b: ContentBlock | string): ContentBlock => (typeof b === "string" ? txt(b) : b);

const kinds = (vs: Violation[]): ViolationKind[] => vs.map((v) => v.kind);
const fixKinds = (h: readonly Message[]): FixKind[] => repair(h).fixes.map((f) => f.kind);
const pick = (vs: Violation[]) => vs.map(({ kind, index, blockIndex }) => ({ kind, index, blockIndex }));

function deepFreeze<T>(x: T): T {
  if (x !== null && typeof x === "object" && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const v of Object.values(x as object)) deepFreeze(v);
  }
  return x;
}

/** Non-blank top-level text (string content and text blocks) with multiplicities. */
function textCounts(h: readonly Message[]): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (s: string) => {
    if (s.trim() !== "") counts.set(s, (counts.get(s) ?? 0) + 1);
  };
  for (const m of h) {
    if (typeof m.content === "string") add(m.content);
    else if (Array.isArray(m.content)) for (const b of m.content) if (b.type === "text") add(b.text);
  }
  return counts;
}

const RUNS = 1000;

// ---------------------------------------------------------------------------------------------
// validate: one test per kind

describe("validate", () => {
  test("a valid history has no violations (string and block content, parallel calls)", () => {
    const h = [u("fix the bug"), a("looking", tu("t1"), tu("t2", "grep")), u(tr("t2", []), tr("t1", ""), "also this"), a("done"), u("thanks")];
    assert.deepEqual(validate(h), []);
    assert.equal(isValid(h), true);
    assert.deepEqual(validate([]), []);
  });

  test("orphan_tool_result: result whose tool_use is not in the preceding assistant message", () => {
    const h = [u("go"), a(tu("t1")), u(tr("t1"), tr("tX"))];
    assert.deepEqual(pick(validate(h)), [{ kind: "orphan_tool_result", index: 2, blockIndex: 1 }]);
    assert.equal(validate(h)[0]!.toolUseId, "tX");
    // tool_use two messages back does not count
    const h2 = [u("go"), a(tu("t1")), u(tr("t1")), a("hm"), u(tr("t1"))];
    assert.deepEqual(pick(validate(h2)), [{ kind: "orphan_tool_result", index: 4, blockIndex: 0 }]);
    // a result in the first message
    assert.deepEqual(kinds(validate([u(tr("t0"))])), ["orphan_tool_result"]);
  });

  test("unanswered_tool_use: no result in the next user message", () => {
    const h = [u("go"), a("two calls", tu("t1"), tu("t2")), u(tr("t1"))];
    const vs = validate(h);
    assert.deepEqual(pick(vs), [{ kind: "unanswered_tool_use", index: 1, blockIndex: 2 }]);
    assert.equal(vs[0]!.toolUseId, "t2");
    // next message is plain text
    assert.deepEqual(pick(validate([u("go"), a(tu("t1")), u("hello")])), [
      { kind: "unanswered_tool_use", index: 1, blockIndex: 0 },
    ]);
  });

  test("unanswered_tool_use: a trailing tool_use counts unless allowTrailingToolUse", () => {
    const h = [u("go"), a("let me look", tu("t1"))];
    assert.deepEqual(pick(validate(h)), [{ kind: "unanswered_tool_use", index: 1, blockIndex: 1 }]);
    assert.deepEqual(validate(h, { allowTrailingToolUse: true }), []);
    // the option only concerns the LAST message
    const h2 = [u("go"), a(tu("t1")), u("x"), a(tu("t2"))];
    assert.deepEqual(pick(validate(h2, { allowTrailingToolUse: true })), [
      { kind: "unanswered_tool_use", index: 1, blockIndex: 0 },
    ]);
  });

  test("role_order: first message not user, two same-role neighbours", () => {
    assert.deepEqual(pick(validate([a("hi"), u("yo")])), [{ kind: "role_order", index: 0, blockIndex: undefined }]);
    assert.deepEqual(pick(validate([u("a"), u("b"), a("c"), a("d")])), [
      { kind: "role_order", index: 1, blockIndex: undefined },
      { kind: "role_order", index: 3, blockIndex: undefined },
    ]);
  });

  test("empty_content: empty string, blank string, empty list, all-blank text, one blank block", () => {
    assert.deepEqual(pick(validate([u("")])), [{ kind: "empty_content", index: 0, blockIndex: undefined }]);
    assert.deepEqual(pick(validate([u(" \n")])), [{ kind: "empty_content", index: 0, blockIndex: undefined }]);
    assert.deepEqual(pick(validate([u("x"), { role: "assistant", content: [] }])), [
      { kind: "empty_content", index: 1, blockIndex: undefined },
    ]);
    assert.deepEqual(pick(validate([u("x"), a(txt(""), txt("  "))])), [
      { kind: "empty_content", index: 1, blockIndex: undefined },
    ]);
    assert.deepEqual(pick(validate([u("x"), a("ok", txt(""))])), [{ kind: "empty_content", index: 1, blockIndex: 1 }]);
  });

  test("duplicate_tool_use_id: reported once; the result still pairs with the later use", () => {
    const h = [u("go"), a(tu("t1")), u(tr("t1")), a(tu("t1")), u(tr("t1"))];
    assert.deepEqual(pick(validate(h)), [{ kind: "duplicate_tool_use_id", index: 3, blockIndex: 0 }]);
    const same = [u("go"), a(tu("t1"), tu("t1")), u(tr("t1"))];
    assert.deepEqual(pick(validate(same)), [{ kind: "duplicate_tool_use_id", index: 1, blockIndex: 1 }]);
  });

  test("duplicate_tool_result: two results for one tool_use", () => {
    const h = [u("go"), a(tu("t1")), u(tr("t1"), tr("t1"))];
    assert.deepEqual(pick(validate(h)), [{ kind: "duplicate_tool_result", index: 2, blockIndex: 1 }]);
  });

  test("tool_result_not_first: a result after text or image", () => {
    const h = [u("go"), a(tu("t1"), tu("t2")), u(tr("t1"), "note", tr("t2"))];
    assert.deepEqual(pick(validate(h)), [{ kind: "tool_result_not_first", index: 2, blockIndex: 2 }]);
  });

  test("misplaced_block: tool_use in a user message, tool_result in an assistant message", () => {
    const h = [u("go", tu("t9")), a("ok", tr("t9"))];
    assert.deepEqual(pick(validate(h)), [
      { kind: "misplaced_block", index: 0, blockIndex: 1 },
      { kind: "misplaced_block", index: 1, blockIndex: 1 },
    ]);
  });

  test("several violations at once are all reported, in index order", () => {
    const h: Message[] = [
      a("I start"), // 0 role_order
      a(tu("t1"), tu("t2")), // 1 role_order; t2 unanswered
      u("note", tr("t1"), tr("zz")), // 2 not_first (1), orphan zz (2, also not first)
      { role: "user", content: "" }, // 3 role_order + empty
      a(tu("t1")), // 4 duplicate id; unanswered (trailing)
    ];
    assert.deepEqual(pick(validate(h)), [
      { kind: "role_order", index: 0, blockIndex: undefined },
      { kind: "role_order", index: 1, blockIndex: undefined },
      { kind: "unanswered_tool_use", index: 1, blockIndex: 1 },
      { kind: "tool_result_not_first", index: 2, blockIndex: 1 },
      { kind: "tool_result_not_first", index: 2, blockIndex: 2 },
      { kind: "orphan_tool_result", index: 2, blockIndex: 2 },
      { kind: "role_order", index: 3, blockIndex: undefined },
      { kind: "empty_content", index: 3, blockIndex: undefined },
      { kind: "duplicate_tool_use_id", index: 4, blockIndex: 0 },
      { kind: "unanswered_tool_use", index: 4, blockIndex: 0 },
    ]);
    for (const v of validate(h)) assert.ok(v.message.length > 0 && !v.message.includes("\n"));
  });

  test("does not serialise: 10k messages with 300 KB results take about as long as with 1-char results", () => {
    // Serialising the huge history would handle 3 GB of text (or fail on V8's string limit);
    // the same shape with tiny results is the yardstick, timed in the same run (best of 3 each).
    const history = (text: string): Message[] => {
      const h: Message[] = [u("start")];
      for (let i = 0; i < 5_000; i++) {
        h.push(a(tu(`t${i}`), tu(`s${i}`)));
        h.push(u(tr(`t${i}`, text), tr(`s${i}`, [txt(text), txt("y")])));
      }
      return h;
    };
    const best = (h: Message[]) => {
      let ms = Infinity;
      for (let r = 0; r < 3; r++) {
        const t0 = performance.now();
        assert.deepEqual(validate(h), []);
        ms = Math.min(ms, performance.now() - t0);
      }
      return ms;
    };
    const huge = best(history("x".repeat(300_000)));
    const tiny = best(history("x"));
    assert.ok(huge < 10 * tiny + 20, `validate took ${huge.toFixed(1)} ms with huge results, ${tiny.toFixed(1)} ms with tiny ones`);
  });
});

// ---------------------------------------------------------------------------------------------
// repair: one test per fix

describe("repair", () => {
  test("a valid history is returned as is (same array, same messages)", () => {
    const h = [u("go"), a(tu("t1")), u(tr("t1")), a("done")];
    const r = repair(h);
    assert.equal(r.history, h);
    assert.deepEqual(r.fixes, []);
  });

  test("answers an unanswered tool_use with an is_error result, placed first", () => {
    const h = deepFreeze([u("go"), a(tu("t1"), tu("t2", "read_file")), u(tr("t1"), "and then?")]);
    const r = repair(h);
    assert.deepEqual(validate(r.history), []);
    assert.deepEqual(kinds(validate(h)), ["unanswered_tool_use"]);
    const last = r.history[2]!.content as ContentBlock[];
    assert.equal(last.length, 3);
    assert.deepEqual(last[0], tr("t1"));
    const synthetic = last[1] as ToolResultBlock;
    assert.equal(synthetic.type, "tool_result");
    assert.equal(synthetic.tool_use_id, "t2");
    assert.equal(synthetic.is_error, true);
    assert.match(String(synthetic.content), /no result was recorded/);
    assert.deepEqual(last[2], txt("and then?"));
    assert.deepEqual(r.fixes.map((f) => [f.kind, f.index, f.toolUseId]), [["answered_tool_use", 1, "t2"]]);
    // untouched messages keep their identity
    assert.equal(r.history[0], h[0]);
    assert.equal(r.history[1], h[1]);
  });

  test("a trailing tool_use gets a result message, unless allowTrailingToolUse", () => {
    const h = [u("go"), a(tu("t1"))];
    const r = repair(h);
    assert.equal(r.history.length, 3);
    assert.equal(r.history[2]!.role, "user");
    assert.deepEqual(validate(r.history), []);
    assert.equal(repair(h, { allowTrailingToolUse: true }).history, h);
  });

  test("drops an orphan tool_result; a message left empty goes and its neighbours merge", () => {
    const r1 = repair([u("go"), a(tu("t1")), u(tr("t1"), tr("zz"), "text stays")]);
    assert.deepEqual(r1.history[2]!.content, [tr("t1"), txt("text stays")]);
    assert.deepEqual(fixKinds([u("go"), a(tu("t1")), u(tr("t1"), tr("zz"))]), ["dropped_orphan_tool_result"]);

    const h = [u("go"), a("first"), u(tr("zz")), a("second")];
    const r2 = repair(h);
    assert.deepEqual(r2.history, [u("go"), a("first", "second")]);
    assert.deepEqual(
      r2.fixes.map((f) => f.kind),
      ["dropped_orphan_tool_result", "dropped_empty_message", "merged_messages"],
    );
  });

  test("moves tool_result blocks first", () => {
    const img: ContentBlock = { type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } };
    const r = repair([u("go"), a(tu("t1"), tu("t2")), u(img, tr("t2"), "note", tr("t1"))]);
    assert.deepEqual(r.history[2]!.content, [tr("t2"), tr("t1"), img, txt("note")]);
    assert.deepEqual(r.fixes.map((f) => f.kind), ["moved_tool_result_first"]);
  });

  test("merges same-role neighbours by concatenating blocks", () => {
    const r = repair([u("one"), u(txt("two")), a("three"), a(tu("t1")), u(tr("t1"))]);
    assert.deepEqual(r.history, [u("one", "two"), a("three", tu("t1")), u(tr("t1"))]);
    assert.deepEqual(r.fixes.map((f) => f.kind), ["merged_messages", "merged_messages"]);
    assert.deepEqual(r.fixes.map((f) => f.message), [
      "merged user message 1 into the user message before it (0)",
      "merged assistant message 3 into the assistant message before it (2)",
    ]);
    // Two runs into different rows stay two fixes, each naming its own run.
    const runs = repair([u("a"), u("b"), u("c"), a("x"), u("d"), u("e")]);
    assert.deepEqual(runs.fixes.map((f) => f.message), [
      "merged user messages 1–2 into the user message before them (0)",
      "merged user message 5 into the user message before it (4)",
    ]);
  });

  test("results split from their message by a duplicated user role are merged back", () => {
    const r = repair([u("go"), a(tu("t1"), tu("t2")), u(tr("t1")), u(tr("t2"))]);
    assert.deepEqual(r.history, [u("go"), a(tu("t1"), tu("t2")), u(tr("t1"), tr("t2"))]);
  });

  test("drops empty messages and empty text blocks", () => {
    const r = repair([u("go"), { role: "assistant", content: [] }, a(txt(""), "hi", txt(" ")), u(""), u("next")]);
    assert.deepEqual(r.history, [u("go"), a("hi"), u("next")]);
    assert.deepEqual(
      r.fixes.map((f) => f.kind).sort(),
      ["dropped_empty_message", "dropped_empty_message", "dropped_empty_text", "dropped_empty_text"],
    );
  });

  test("prepends a user message when the first message is an assistant", () => {
    const r = repair([a("I was saying"), u("go on")]);
    assert.deepEqual(r.history, [u(txt(CONTINUATION_TEXT)), a("I was saying"), u("go on")]);
    assert.deepEqual(r.fixes.map((f) => f.kind), ["prepended_user_message"]);
    assert.deepEqual(repair([a("x")], { continuationText: "[resumed]" }).history[0], u(txt("[resumed]")));
  });

  test("renames a duplicate tool_use id, together with its result", () => {
    const r = repair([u("go"), a(tu("t1")), u(tr("t1", "first")), a(tu("t1")), u(tr("t1", "second"))]);
    assert.deepEqual(validate(r.history), []);
    const use = (r.history[3]!.content as ToolUseBlock[])[0]!;
    const res = (r.history[4]!.content as ToolResultBlock[])[0]!;
    assert.equal(use.id, "t1_dup1");
    assert.equal(res.tool_use_id, "t1_dup1");
    assert.equal(res.content, "second");
    assert.deepEqual(r.fixes.map((f) => f.kind), ["renamed_duplicate_tool_use_id"]);
  });

  test("drops a second result for one tool_use", () => {
    const r = repair([u("go"), a(tu("t1")), u(tr("t1", "a"), tr("t1", "b"))]);
    assert.deepEqual(r.history[2]!.content, [tr("t1", "a")]);
    assert.deepEqual(r.fixes.map((f) => f.kind), ["dropped_duplicate_tool_result"]);
  });

  test("moves a tool_result found in an assistant message into the next user message", () => {
    const r = repair([u("go"), a(tu("t1"), tr("t1", "out")), u("next")]);
    assert.deepEqual(r.history, [u("go"), a(tu("t1")), u(tr("t1", "out"), "next")]);
    assert.deepEqual(r.fixes.map((f) => f.kind), ["moved_misplaced_tool_result"]);
    // with no matching tool_use it is an orphan
    assert.deepEqual(repair([u("go"), a("hm", tr("zz"))]).history, [u("go"), a("hm")]);
  });

  test("drops a tool_use found in a user message", () => {
    const r = repair([u("go", tu("t1")), a("ok")]);
    assert.deepEqual(r.history, [u(txt("go")), a("ok")]);
    assert.deepEqual(r.fixes.map((f) => f.kind), ["dropped_misplaced_tool_use"]);
  });

  test("does not mutate its input and keeps untouched messages", () => {
    const h = deepFreeze([u("go"), u("more"), a(tu("t1")), u("x", tr("t1")), a("bye")]);
    const before = structuredClone(h);
    const r = repair(h);
    assert.deepEqual(h, before);
    assert.deepEqual(validate(r.history), []);
    assert.equal(r.history.at(-1), h[4]);
  });

  test("every damage kind is repaired", () => {
    const base = [u("go"), a("t", tu("t1"), tu("t2")), u(tr("t1"), tr("t2")), a("x"), u("y"), a(tu("t3")), u(tr("t3"))];
    for (const kind of DAMAGE_KINDS) {
      for (let n = 0; n < 7; n++) {
        const h = structuredClone(base);
        applyDamage(h, { kind, a: n, b: n * 3 + 1 });
        const r = repair(h);
        assert.deepEqual(validate(r.history), [], `${kind} ${n}`);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// properties

describe("properties", () => {
  test("arbHistory() is valid", () => {
    fc.assert(
      fc.property(arbHistory(), (h) => {
        assert.deepEqual(validate(h), []);
      }),
      { numRuns: RUNS },
    );
  });

  test("arbHistory({endWith}) variants: assistant/any valid; tool_use valid only with allowTrailingToolUse", () => {
    fc.assert(
      fc.property(arbHistory({ endWith: "any", maxRounds: 10 }), (h) => {
        assert.deepEqual(validate(h), []);
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(arbHistory({ endWith: "tool_use", maxRounds: 10 }), (h) => {
        assert.deepEqual(validate(h, { allowTrailingToolUse: true }), []);
        const vs = validate(h);
        assert.ok(vs.length > 0);
        assert.ok(vs.every((v) => v.kind === "unanswered_tool_use" && v.index === h.length - 1));
      }),
      { numRuns: 200 },
    );
  });

  test("validate(repair(broken).history) is empty, and repair does not mutate its input", () => {
    fc.assert(
      fc.property(arbBrokenHistoryWithDamages(), ({ history }) => {
        const frozen = deepFreeze(history);
        const r = repair(frozen);
        assert.deepEqual(validate(r.history), []);
        // fixes are reported exactly when something was wrong
        assert.equal(r.fixes.length > 0, validate(frozen).length > 0);
      }),
      { numRuns: RUNS },
    );
  });

  test("repair with allowTrailingToolUse satisfies validate with the same option", () => {
    fc.assert(
      fc.property(arbBrokenHistory({ maxRounds: 10 }), (h) => {
        const opts = { allowTrailingToolUse: true };
        assert.deepEqual(validate(repair(h, opts).history, opts), []);
      }),
      { numRuns: RUNS },
    );
  });

  test("repair is idempotent", () => {
    fc.assert(
      fc.property(arbBrokenHistory(), (h) => {
        const once = repair(h).history;
        const twice = repair(once);
        assert.equal(twice.history, once);
        assert.deepEqual(twice.fixes, []);
      }),
      { numRuns: RUNS },
    );
  });

  test("repair of a valid history is the identity", () => {
    fc.assert(
      fc.property(arbHistory({ endWith: "any" }), (h) => {
        const r = repair(h);
        assert.equal(r.history, h);
        assert.deepEqual(r.fixes, []);
      }),
      { numRuns: RUNS },
    );
  });

  test("repair never loses non-empty text", () => {
    fc.assert(
      fc.property(arbBrokenHistory(), (h) => {
        const before = textCounts(h);
        const after = textCounts(repair(h).history);
        for (const [text, n] of before) {
          assert.ok((after.get(text) ?? 0) >= n, `lost text ${JSON.stringify(text.slice(0, 80))}`);
        }
      }),
      { numRuns: RUNS },
    );
  });

  test("repair keeps every real tool_result that answers a tool_use of the preceding message", () => {
    fc.assert(
      fc.property(arbBrokenHistory(), (h) => {
        const out = repair(h).history;
        // results in the output are either from the input (same content) or synthetic errors
        const inputContents = new Set<unknown>();
        for (const m of h) {
          if (typeof m.content !== "string") for (const b of m.content) if (b.type === "tool_result") inputContents.add(b.content);
        }
        for (const m of out) {
          if (typeof m.content === "string") continue;
          for (const b of m.content) {
            if (b.type !== "tool_result") continue;
            const synthetic = b.is_error === true && typeof b.content === "string" && b.content.includes("no result was recorded");
            assert.ok(synthetic || inputContents.has(b.content));
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
