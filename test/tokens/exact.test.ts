import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { countTokens, forcedCuts, isPieceBoundary, MAX_SPAN } from "../../src/tokens/exact.ts";

const plain = { disallowedSpecial: new Set<string>() };

const prose = "The summary request reuses the conversation as it was sent, so it reads the prompt cache. ";
const code = "export function add(a: number, b: number): number {\n  return a + b; // sum\n}\n";
const json = JSON.stringify({ tool: "bash", input: { command: "ls -la /tmp && cat notes.txt" }, ok: true, n: [1, 22, 333] });
const cjk = "コンテキストウィンドウは有限である。上下文窗口是有限的，需要压缩。";

const russian = "Агент читает файлы, запускает тесты и правит код; контекст растёт с каждым шагом. ";

test("ordinary text: exactly gpt-tokenizer's o200k count", () => {
  for (const s of ["", "a", prose, code, json, cjk, russian, "emoji 😀🎉 and accents: café, naïve", "  indented\n\n\ttabs\r\n"]) {
    assert.equal(countTokens(s), o200k(s), JSON.stringify(s.slice(0, 40)));
  }
  // Longer than MAX_SPAN but with ordinary piece boundaries: counted whole, never cut.
  const long = (prose + code + json + cjk).repeat(200) + russian.repeat(100);
  assert.ok(long.length > 20 * MAX_SPAN);
  assert.deepEqual(forcedCuts(long), []);
  assert.equal(countTokens(long), o200k(long));
});

test("special-token text in content is counted as text, not rejected", () => {
  const s = "a tool printed <|endoftext|> and <|im_start|> literally";
  assert.throws(() => o200k(s)); // gpt-tokenizer's default
  assert.equal(countTokens(s), o200k(s, plain));
});

test("a 200 KB run of one letter is cut into bounded spans and counted", () => {
  const s = "a".repeat(200_000);
  const cuts = forcedCuts(s);
  assert.ok(cuts.length >= 200_000 / MAX_SPAN - 1);
  const n = countTokens(s);
  // o200k merges runs of "a" into tokens of up to 8 chars or so; any count in this range is sane.
  assert.ok(n > 200_000 / 64 && n < 200_000 / 2, `count ${n}`);
  for (const filler of [" ", "=", "中"]) {
    const m = countTokens(filler.repeat(50_000));
    assert.ok(m > 0 && m <= 50_000 + 100, `${JSON.stringify(filler)}: ${m}`);
  }
});

test("the inexactness of a forced cut is at most about a token per cut", () => {
  const s = prose + "x".repeat(5 * MAX_SPAN + 123) + " " + code;
  const cuts = forcedCuts(s).length;
  assert.ok(cuts >= 5);
  assert.ok(Math.abs(countTokens(s) - o200k(s)) <= cuts, `${countTokens(s)} vs ${o200k(s)}`);
});

test("cuts never split a surrogate pair", () => {
  const s = "😀".repeat(3 * MAX_SPAN);
  for (const cut of forcedCuts(s)) assert.notEqual(s.charCodeAt(cut) & 0xfc00, 0xdc00, `cut at ${cut}`);
  assert.ok(countTokens(s) >= 3 * MAX_SPAN / 2);
});

test("property: splitting at a recognised piece boundary keeps the count exact", () => {
  const alphabet = ["a", "Z", "s", "t", "ll", "1", "22", "333", " ", "  ", "\n", "\r\n", "\t", "/", "'", "(", ")", ".", "-", "=", ";", "{", "}", "中", "文", "。", "、", "か", "é", "ж", "слово", "كلمة", "\u0301", "→", "😀", "\u00a0", "_", '"'];
  const text = fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 30 }).map((a) => a.join(""));
  fc.assert(
    fc.property(text, (s) => {
      const whole = o200k(s, plain);
      for (let i = 1; i < s.length; i++) {
        if (isPieceBoundary(s, i) && o200k(s.slice(0, i), plain) + o200k(s.slice(i), plain) !== whole) return false;
      }
      return true;
    }),
    { numRuns: 1000 },
  );
});
