// Held-out material for the token estimator that no stored file has: text dense in symbols
// (emoji, flags, ZWJ sequences, skin tones, arrows, math, box drawing) and text with lone
// surrogates. Generated at load time from seeded PRNGs (the same documents every run), held out
// (never fitted on). Families: "symbols" and "lone_surrogates", kind "symbols". Issue 25, item 6.
import type { UnseenDoc } from "../tokens-material.ts";
import { fnv, rng } from "./random.ts";

type R = () => number;
const pick = <T>(r: R, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: R, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const cp = (r: R, from: number, to: number): string => String.fromCodePoint(int(r, from, to));

const COMMON = [..."😀😂🤣😅😊😍🥲😎🤔😴😭😡👍👎👏🙏💪🔥✨🎉🚀💯✅❌💔👀🤝💡📌📝🐛🧪🔧📦🌍☕🍕", "⚠️", "❤️", "☀️", "✌️"];
const PEOPLE = [..."👨👩🧑👧👦👶"];
const JOBS = [..."💻🔬🎨🚀🍳🏫🔧🌾🎤", "⚕️"];
const SKIN = [..."🏻🏼🏽🏾🏿"];
const FLAGS = ["FR", "DE", "JP", "US", "GB", "BR", "IN", "KR", "ES", "IT", "CA", "MX", "NG", "UA", "SE"];
const flag = (code: string): string => String.fromCodePoint(...[...code].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
const WORDS = "the build passed again after we fixed flaky tests in the deploy pipeline thanks for the quick review see you tomorrow".split(" ");
const words = (r: R, n: number): string => Array.from({ length: n }, () => pick(r, WORDS)).join(" ");

/** An emoji from several blocks: common ones, or any of pictographs, emoticons, transport, supplemental. */
function emoji(r: R): string {
  const x = r();
  if (x < 0.5) return pick(r, COMMON);
  if (x < 0.6) return pick(r, PEOPLE) + pick(r, SKIN);
  if (x < 0.7) return pick(r, PEOPLE) + "\u200d" + pick(r, JOBS);
  if (x < 0.75) return ["👨‍👩‍👧‍👦", "👩‍👩‍👦", "🏳️‍🌈", "🏴‍☠️", "🧑‍🤝‍🧑", "👁️‍🗨️"][int(r, 0, 5)]!;
  return pick(r, [() => cp(r, 0x1f300, 0x1f5ff), () => cp(r, 0x1f600, 0x1f64f), () => cp(r, 0x1f680, 0x1f6ff), () => cp(r, 0x1f900, 0x1f9ff)])();
}

function chat(r: R): string {
  const lines: string[] = [];
  for (let n = int(r, 8, 30); n > 0; n--) {
    const e = Array.from({ length: int(r, 1, 5) }, () => emoji(r)).join(r() < 0.5 ? "" : " ");
    const x = r();
    if (x < 0.3) lines.push(`${words(r, int(r, 3, 12))} ${e}`);
    else if (x < 0.5) lines.push(`${e} ${words(r, int(r, 2, 8))}`);
    else if (x < 0.65) lines.push(pick(r, COMMON).repeat(int(r, 2, 12)));
    else if (x < 0.8) lines.push(`${pick(r, FLAGS.map(flag))} ${words(r, 2)} ${Array.from({ length: int(r, 2, 6) }, () => flag(pick(r, FLAGS))).join("")}`);
    else lines.push(`Great job! ${Array.from({ length: int(r, 2, 6) }, () => emoji(r)).join("")}`);
  }
  return lines.join("\n");
}

function cli(r: R): string {
  const out: string[] = [];
  for (let n = int(r, 3, 8); n > 0; n--) {
    const x = r();
    if (x < 0.25) {
      for (let k = int(r, 3, 10); k > 0; k--) out.push(`  ${pick(r, ["✓", "✔", "✗", "✖", "↓", "⚠️", "ℹ", "●", "○"])} ${words(r, int(r, 2, 6))} (${int(r, 1, 900)} ms)`);
    } else if (x < 0.45) {
      const w = [int(r, 6, 16), int(r, 6, 16), int(r, 6, 16)];
      const rule = (a: string, m: string, b: string): string => a + w.map((n) => "─".repeat(n)).join(m) + b;
      out.push(rule("┌", "┬", "┐"));
      for (let k = int(r, 2, 6); k > 0; k--) out.push("│" + w.map((n) => ` ${pick(r, WORDS)}`.padEnd(n)).join("│") + "│");
      out.push(rule("└", "┴", "┘"));
    } else if (x < 0.6) {
      for (let k = int(r, 2, 6); k > 0; k--) {
        const done = int(r, 0, 30);
        out.push(`${pick(r, [..."⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"])} ${pick(r, WORDS)} ${"█".repeat(done)}${"░".repeat(30 - done)} ${Math.round((100 * done) / 30)}%`);
      }
    } else if (x < 0.8) {
      for (let k = int(r, 3, 9); k > 0; k--) out.push(`${pick(r, ["├── ", "└── ", "│   ├── ", "│   └── "])}${pick(r, WORDS)}.ts`);
    } else {
      out.push(`  ➜  Local:   http://localhost:${int(r, 3000, 9000)}/`, `  ➜  ${words(r, 2)} → ${words(r, 2)} ⇒ ${pick(r, ["✅", "❌", "🚀", "⏱️"])}`);
      out.push("═".repeat(int(r, 20, 60)), `  ${pick(r, ["★", "☆", "♦", "♣", "♠", "♥"]).repeat(int(r, 1, 5))} ${words(r, 3)}`, "━".repeat(int(r, 20, 60)));
    }
  }
  return out.join("\n");
}

function math(r: R): string {
  const sym = (): string =>
    pick(r, [() => cp(r, 0x2200, 0x22ff), () => cp(r, 0x2190, 0x21ff), () => cp(r, 0x27f0, 0x27ff), () => cp(r, 0x2900, 0x297f), () => cp(r, 0x1d400, 0x1d433), () => pick(r, [..."≤≥≠≈∞∑∏∫√∂∇∈∉⊂⊆∩∪∀∃⇒⇔→↦⟶"])])();
  const lines: string[] = [];
  for (let n = int(r, 6, 20); n > 0; n--) {
    const x = r();
    if (x < 0.4) lines.push(`∀ε>0 ∃δ>0: |x−a| < δ ⇒ |f(x)−f(a)| < ε, ${pick(r, ["x ∈ ℝ", "n ∈ ℕ", "A ⊆ B ∩ C", "𝔼[X] = ∑ p·x"])}`);
    else if (x < 0.7) lines.push(`${pick(r, WORDS)} ${Array.from({ length: int(r, 1, 4) }, sym).join("")} ${pick(r, WORDS)} ${sym()} ${pick(r, WORDS)}`);
    else lines.push(Array.from({ length: int(r, 3, 12) }, sym).join(r() < 0.5 ? "" : " "));
  }
  return lines.join("\n");
}

function runs(r: R): string {
  const lines: string[] = [];
  for (let n = int(r, 5, 15); n > 0; n--) {
    const x = r();
    if (x < 0.3) lines.push(emoji(r).repeat(int(r, 3, 40)));
    else if (x < 0.5) lines.push(Array.from({ length: int(r, 5, 30) }, () => emoji(r)).join(""));
    else if (x < 0.65) lines.push(FLAGS.slice(0, int(r, 3, FLAGS.length)).map((c) => `${flag(c)} ${c}`).join(", "));
    else if (x < 0.8) lines.push(Array.from({ length: int(r, 3, 10) }, (_, i) => `${i % 10}\ufe0f\u20e3`).join(" "));
    else lines.push(pick(r, ["→", "⇒", "➜", "⟶", "↔", "⬆️", "🔁"]).repeat(int(r, 3, 20)));
  }
  return lines.join("\n");
}

/** Log lines whose messages were cut mid-emoji (UTF-16 cut at a code unit: a lone surrogate). */
function lone(r: R): string {
  const lines: string[] = [];
  for (let n = int(r, 10, 30); n > 0; n--) {
    let msg = `${words(r, int(r, 2, 8))} ${emoji(r)}${emoji(r)} ${words(r, int(r, 1, 4))}`;
    const units = msg.split("");
    for (let i = 0; i < units.length; i++) {
      const c = units[i]!.charCodeAt(0);
      if (c >= 0xd800 && c <= 0xdfff && r() < 0.3) units[i] = ""; // drop one half of a pair
    }
    msg = units.join("");
    lines.push(`2024-05-${String(int(r, 10, 28))}T12:${String(int(r, 10, 59))}:00Z INFO ${pick(r, WORDS)}: ${msg}`);
  }
  return lines.join("\n");
}

/** The documents, flat strings (lone surrogates kept: UTF-8 would turn them into U+FFFD). */
export function symbolDocs(): UnseenDoc[] {
  const docs: UnseenDoc[] = [];
  const sources: [string, string, (r: R) => string][] = [
    ["symbols", "synthetic chat messages with emoji, flags, ZWJ sequences and skin tones", chat],
    ["symbols", "synthetic CLI output: check marks, box-drawing tables, progress bars, trees, arrows", cli],
    ["symbols", "synthetic notes in math symbols and arrows", math],
    ["symbols", "synthetic runs of emoji, flags, keycaps and arrows", runs],
    ["lone_surrogates", "synthetic log lines cut mid-emoji (lone surrogates)", lone],
  ];
  for (const [family, source, gen] of sources) {
    const r = rng(fnv(source));
    for (let d = 0; d < 40; d++) {
      const text = Buffer.from(gen(r), "utf16le").toString("utf16le");
      if (text.length >= 200) docs.push({ family, kind: "symbols", source, split: "held", text });
    }
  }
  return docs;
}
