import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import fc from "fast-check";
import { estimateTokens } from "../../src/tokens/estimate.ts";
import { countTokens } from "../../src/tokens/exact.ts";

/** Relative error of the estimate against exact o200k. */
const relErr = (s: string): number => (estimateTokens(s) - countTokens(s)) / countTokens(s);
const chars4 = (s: string): number => (Math.ceil(s.length / 4) - countTokens(s)) / countTokens(s);

function within(s: string, tol: number, label: string): void {
  const e = relErr(s);
  assert.ok(Math.abs(e) <= tol, `${label}: estimate ${estimateTokens(s)} vs exact ${countTokens(s)} (${(100 * e).toFixed(1)}%)`);
}

const japanese =
  "エージェントは長い作業の途中でコンテキストウィンドウを使い切ることがある。古いツールの出力を要約し、最近のやり取りはそのまま残すことで、作業を止めずに続けられる。ファイルの一覧と変更履歴は必ず保持する。";
const chinese =
  "智能体在长时间的任务中可能会耗尽上下文窗口。我们把旧的工具输出压缩成摘要，保留最近的对话原文，这样任务就可以继续进行。读取和修改过的文件列表必须保留下来。";
const jsonSamples = [
  JSON.stringify({ type: "tool_use", id: "toolu_01A2b3C4d5E6f7G8h9", name: "bash", input: { command: "cd /repo && npm test -- --grep 'token counter' 2>&1 | tail -40", timeout: 120000 } }),
  JSON.stringify(
    {
      todos: [
        { content: "Add the exact counter", status: "completed", activeForm: "Adding the exact counter" },
        { content: "Calibrate the estimator against o200k", status: "in_progress", activeForm: "Calibrating" },
        { content: "Write the benchmark", status: "pending", activeForm: "Writing the benchmark" },
      ],
    },
    null,
    2,
  ),
];
const codeSamples = [
  `import { readFile } from "node:fs/promises";

export interface Options {
  maxTokens: number;
  keepRecent?: number;
}

export async function loadTranscript(path: string, opts: Options): Promise<string[]> {
  const text = await readFile(path, "utf8");
  const lines = text.split("\\n").filter((l) => l.trim().length > 0);
  if (lines.length > opts.maxTokens) {
    throw new Error(\`transcript too long: \${lines.length} > \${opts.maxTokens}\`);
  }
  return lines.slice(-(opts.keepRecent ?? 20));
}
`,
  `def summarize(messages, keep_recent=5):
    """Replace all but the most recent messages with a summary."""
    if len(messages) <= keep_recent:
        return messages
    older, recent = messages[:-keep_recent], messages[-keep_recent:]
    text = "\\n".join(m["content"] for m in older if isinstance(m.get("content"), str))
    summary = {"role": "user", "content": f"[summary of {len(older)} messages]\\n{text[:2000]}"}
    return [summary] + recent
`,
];

test("empty text is 0 tokens; any other text at least 1", () => {
  assert.equal(estimateTokens(""), 0);
  for (const s of ["a", " ", "\n", "7", "{", "中", "😀", "\u0000"]) assert.ok(estimateTokens(s) >= 1, JSON.stringify(s));
  assert.ok(Number.isInteger(estimateTokens("an integer, always")));
});

test("Japanese and Chinese: near one token per char, unlike chars/4", () => {
  for (const [label, s] of [["ja", japanese], ["zh", chinese]] as const) {
    within(s, 0.1, label);
    const perChar = estimateTokens(s) / s.length;
    assert.ok(perChar > 0.6 && perChar < 1.1, `${label}: ${perChar.toFixed(2)} tokens/char`);
    assert.ok(chars4(s) < -0.5, `${label}: chars/4 would be off by ${(100 * chars4(s)).toFixed(0)}%`);
  }
});

test("JSON and code within 8% of exact", () => {
  jsonSamples.forEach((s, i) => within(s, 0.08, `json ${i}`));
  codeSamples.forEach((s, i) => within(s, 0.08, `code ${i}`));
});

test("a long base64 string within 8% of exact (chars/4 is off by half)", () => {
  let b64 = "";
  for (let i = 0; b64.length < 20_000; i++) b64 += createHash("sha256").update(`block ${i}`).digest("base64").replace(/=+$/, "");
  within(b64, 0.08, "base64");
  assert.ok(chars4(b64) < -0.4);
  const hex = Array.from({ length: 40 }, (_, i) => createHash("sha1").update(`c${i}`).digest("hex")).join("\n");
  within(hex, 0.1, "hex digests");
});

test("Japanese, Chinese and Korean each at their own rate (one CJK rate was 20% over on Japanese, 15% under on Korean)", () => {
  // Documentation prose of about the same length in each script. o200k gives kanji ~0.9,
  // katakana ~0.7, hiragana ~0.6, Chinese han ~0.7 and hangul ~0.65 tokens per char.
  const ja =
    "コンポーネントの状態が変わると、フレームワークは必要な部分だけを再描画します。この仕組みにより、大きなアプリケーションでも画面の更新は速く保たれます。ただし、計算に時間のかかる処理はキャッシュしておくことをおすすめします。詳しくは次の章で説明します。";
  const ko =
    "컴포넌트의 상태가 바뀌면 프레임워크는 필요한 부분만 다시 렌더링합니다. 이 구조 덕분에 큰 애플리케이션에서도 화면 업데이트가 빠르게 유지됩니다. 다만 계산에 시간이 오래 걸리는 처리는 캐시해 두는 것을 권장합니다.";
  within(ja, 0.06, "ja");
  within(chinese, 0.06, "zh");
  within(ko, 0.06, "ko");
});

test("a source map's mappings and JWTs are priced per char (a word model was 29% under on source maps)", () => {
  // standardwebhooks/dist/timing_safe_equal.js.map (MIT).
  const map =
    '{"version":3,"file":"timing_safe_equal.js","sourceRoot":"","sources":["../src/timing_safe_equal.ts"],"names":[],"mappings":";;AAYA,0CAsBC;AA9BD,SAAS,MAAM,CAAC,IAAa,EAAE,GAAG,GAAG,EAAE;IACrC,IAAI,CAAC,IAAI,EAAE,CAAC;QACV,MAAM,IAAI,KAAK,CAAC,GAAG,CAAC,CAAC;IACvB,CAAC;AACH,CAAC;AAID,SAAgB,eAAe,CAC7B,CAA+C,EAC/C,CAA+C;IAE/C,IAAI,CAAC,CAAC,UAAU,KAAK,CAAC,CAAC,UAAU,EAAE,CAAC;QAClC,OAAO,KAAK,CAAC;IACf,CAAC;IACD,IAAI,CAAC,CAAC,CAAC,YAAY,QAAQ,CAAC,EAAE,CAAC;QAC7B,CAAC,GAAG,IAAI,QAAQ,CAAC,WAAW,CAAC,MAAM,CAAC,CAAC,CAAC,CAAC,CAAC,CAAC,CAAC,CAAC,MAAM,CAAC,CAAC,CAAC,CAAC,CAAC,CAAC;IACzD,CAAC;IACD,IAAI,CAAC,CAAC,CAAC,YAAY,QAAQ,CAAC,EAAE,CAAC;QAC7B,CAAC,GAAG,IAAI,QAAQ,CAAC,WAAW,CAAC,MAAM,CAAC,CAAC,CAAC,CAAC,CAAC,CAAC,CAAC,CAAC,MAAM,CAAC,CAAC,CAAC,CAAC,CAAC,CAAC;IACzD,CAAC;IACD,MAAM,CAAC,CAAC,YAAY,QAAQ,CAAC,CAAC;IAC9B,MAAM,CAAC,CAAC,YAAY,QAAQ,CAAC,CAAC;IAC9B,MAAM,MAAM,GAAG,CAAC,CAAC,UAAU,CAAC;IAC5B,IAAI,GAAG,GAAG,CAAC,CAAC;IACZ,IAAI,CAAC,GAAG,CAAC,CAAC,CAAC;IACX,OAAO,EAAE,CAAC,GAAG,MAAM,EAAE,CAAC;QACpB,GAAG,IAAI,CAAC,CAAC,QAAQ,CAAC,CAAC,CAAC,GAAG,CAAC,CAAC,QAAQ,CAAC,CAAC,CAAC,CAAC;IACvC,CAAC;IACD,OAAO,GAAG,KAAK,CAAC,CAAC;AACnB,CAAC"}';
  within(map, 0.1, "source map");
  const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString("base64url");
  const jwts = [0, 1, 2, 3].map((i) => {
    const h = b64({ alg: "HS256", typ: "JWT" });
    const p = b64({ sub: `user-${1000 + i * 7919}`, iat: 1718000000 + i * 3600, exp: 1718003600 + i * 3600, iss: "https://auth.example.com/", scope: "read:orders write:orders" });
    return `${h}.${p}.${createHmac("sha256", `key ${i}`).update(`${h}.${p}`).digest("base64url")}`;
  });
  within(JSON.stringify({ access_token: jwts[0], token_type: "Bearer", expires_in: 3600, id_token: jwts[1] }, null, 2), 0.05, "JWT in JSON");
  within(jwts.map((j, i) => `TOKEN_${i}=${j}`).join("\n"), 0.05, "JWTs in an env file");
});

test("scripts o200k barely merges cost tokens per UTF-8 byte, not per word", () => {
  const tifinagh = "ⴰⵙⴰⵎⴰⵙ_ⴰⵢⵏⴰⵙ_ⴰⵙⵉⵏⴰⵙ_ⴰⴽⵔⴰⵙ_ⴰⴽⵡⴰⵙ_ⴰⵙⵉⵎⵡⴰⵙ_ⴰⵙⵉⴹⵢⴰⵙ"; // moment's tzm weekdays
  assert.ok(estimateTokens(tifinagh) / tifinagh.length >= 2, `${estimateTokens(tifinagh)} for ${tifinagh.length} chars`);
  within(tifinagh, 0.2, "Tifinagh");
});

test("runs of one char are cheap, as in o200k (chars/4 gives 20 for 80 \"=\")", () => {
  assert.ok(estimateTokens("=".repeat(80)) <= 8, `${estimateTokens("=".repeat(80))}`);
  assert.ok(estimateTokens("-".repeat(80)) <= 8);
  assert.ok(estimateTokens("A".repeat(4000)) < 1000);
  // Whitespace runs are one token each, but a huge one is not: ~1 token per 100 spaces.
  const blank = "x" + " ".repeat(20_000) + "y";
  assert.ok(Math.abs(relErr(blank)) < 0.5, `${estimateTokens(blank)} vs ${countTokens(blank)}`);
});

test("property: appending text never lowers the estimate", () => {
  const tricky = ["a", "Z", "s", "t", "1", "22", " ", "  ", "\t", "\n", "\r\n", "'", '"', "\\", "/", "+", "=", "==", "(", "{", "^", "é", "ж", "日", "か", "한", "😀", "→", "─", "\u001b", "AAAA", "iVBOR", "aB3", "don", "HTTP",
    ",", ";", "AAAA,", "SAAS;", "CAAC,", "‐", "ї", "ⴰ", "ອ", "カ", "漢", "，", "f3a9", "0c"];
  const text = fc.oneof(
    fc.string({ unit: "binary", maxLength: 60 }),
    fc.array(fc.constantFrom(...tricky), { maxLength: 40 }).map((a) => a.join("")),
  );
  fc.assert(
    fc.property(text, text, (a, b) => estimateTokens(a + b) >= estimateTokens(a)),
    { numRuns: 2000 },
  );
});

test("spaces that end a text are charged no more than a newline joining them adds (found by the property above: \"\\n  \" was 2, \"\\n  \\n\" 1)", () => {
  for (const [a, b] of [["\n  ", "\n"], ["\r\n  ", "\n"], ["\r\n ", "\n"], ["\n\t", "\r\n"], ["\n  ", "\r"], ["x\n   ", "\n\n"], ["a  ", "\n"], ["a ", "\n"], ["a\t", "\r\n"], ["\n".repeat(15) + "  ", "\n"]] as const) {
    assert.ok(estimateTokens(a + b) >= estimateTokens(a), `${JSON.stringify(a)} + ${JSON.stringify(b)}: ${estimateTokens(a + b)} < ${estimateTokens(a)}`);
  }
  // The whitespace itself is still counted where it stays: before a word, and at the end with no newline in the run.
  assert.ok(estimateTokens("a" + " ".repeat(40)) >= 1);
  assert.ok(estimateTokens("x\n" + " ".repeat(8) + "y") > estimateTokens("x\ny"));
});

test("the scan allocates nothing as it reads: estimating 20 MB of code and base64 runs no garbage collection (the running total was boxed before each char that is not a letter: 40-odd collections)", async () => {
  const { PerformanceObserver } = await import("node:perf_hooks");
  // Code, with a base64 line so that long runs are noted too.
  const lines = ["  if (x.length > 10) { return foo(bar, 12); } // done.\n", `  const key = "${"QmFzZTY0IGVuY29kZWQgc3RyaW5n".repeat(4)}";\n`, "\tfor (let i = 0; i < n; i++) sum += values[i] * 2;\n"];
  const text = Array.from({ length: 2_000 }, (_, i) => lines[i % lines.length]).join("");
  let sink = 0;
  for (let i = 0; i < 50; i++) sink += estimateTokens(text); // optimized by now
  let collections = 0;
  const observer = new PerformanceObserver((list) => void (collections += list.getEntries().length));
  observer.observe({ entryTypes: ["gc"] });
  const rounds = Math.ceil(20e6 / text.length);
  for (let i = 0; i < rounds; i++) sink += estimateTokens(text);
  await new Promise((resolve) => setTimeout(resolve, 20)); // the entries come after the loop
  observer.disconnect();
  assert.ok(sink > 0);
  assert.ok(collections <= 2, `${collections} collections while estimating ${rounds} × ${text.length} chars`);
});

test("the scan calls String.prototype.charCodeAt on the text, never looks it up on it (a lookup met with a host's kinds of string — slices, concatenations, internalized — goes megamorphic: bench:tokens 48 MB/s against 84)", async () => {
  const { readFileSync } = await import("node:fs");
  // The estimator's modules: the scan and what it calls per piece or per char.
  for (const file of ["estimate.ts", "estimate-runs.ts", "estimate-symbols.ts", "vocab.ts", "vocab-cache.ts"]) {
    const source = readFileSync(new URL(`../../src/tokens/${file}`, import.meta.url), "utf8");
    const lookups = source.split("\n").filter((l) => /\btext\.charCodeAt\(/.test(l));
    assert.deepEqual(lookups, [], `${file} looks charCodeAt up on the text`);
    assert.match(source, /charCodeAt\.call\(text, /, `${file}: the scan's reads are charCodeAt.call(text, i)`);
  }
});

test("estimateTokens of anything but a string is a one-line LetheInputError, never an estimate of what it is not (a number was 0 tokens; { length: 1e9 } would be read a billion times)", () => {
  for (const bad of [123, null, undefined, { length: 1e9 }, ["ab"], { toString: () => "hi", length: 2 }]) {
    assert.throws(() => estimateTokens(bad as unknown as string), (e: Error) => e.name === "LetheInputError" && /^lethe: estimateTokens: needs a string, got /.test(e.message) && !e.message.includes("\n"), JSON.stringify(bad));
  }
  assert.equal(estimateTokens(""), 0);
});
