// Benchmark material for the token counters, shared by bench/tokens.ts and
// bench/calibrate-estimator.ts. Everything is deterministic: the same inputs give the same
// documents in the same order, so figures are comparable between runs.
import { readFileSync, readdirSync, statSync, existsSync } from "node:fs";
import { dirname, join, extname } from "node:path";
import { deflateSync, gunzipSync } from "node:zlib";
import { symbolDocs } from "./material/symbols.ts";

export interface Category {
  name: string;
  /** Where the documents come from and what one document is. */
  source: string;
  docs: string[];
}

/** Documents shorter than this are skipped: their error is dominated by rounding. */
export const MIN_DOC_CHARS = 200;
/** Per-category cap (UTF-8 bytes) so the exact counter finishes in time. */
export const CAP_BYTES = 2_000_000;
/** Source files and minified bundles longer than this are cut into slices of about this size. */
const SLICE_CHARS = 12_000;

const CODE_EXT = new Set([".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".c", ".h", ".cc", ".cpp", ".hpp", ".rb", ".sh", ".pyx", ".pyi", ".cfg", ".toml", ".yaml", ".yml", ".ini", ".sql", ".html", ".css"]);
// A command whose output is (a slice of) a source file: cat/head/tail/sed -n/nl/awk of a code path
// (not `cat > f.py`, which writes one).
const READ_CMD = /(^|[;&|(]\s*|\s)(cat|head|tail|nl|sed -n|awk|less|more)\s[^|;&<>]*?[\w./-]+\.(py|js|mjs|cjs|ts|tsx|jsx|go|rs|java|c|h|cc|cpp|rb|sh|pyx|pyi|cfg|toml|ya?ml|ini|sql|html|css)\b/;

/** FNV-1a, for a deterministic order that does not follow the corpus order. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Keep every document if they fit; otherwise a hash-ordered subset up to the cap, in original order. */
function capped(docs: string[]): string[] {
  const total = docs.reduce((n, d) => n + Buffer.byteLength(d), 0);
  if (total <= CAP_BYTES) return docs;
  const order = docs.map((d, i) => ({ i, h: hash(d) })).sort((a, b) => a.h - b.h || a.i - b.i);
  const keep = new Set<number>();
  let bytes = 0;
  for (const { i } of order) {
    const b = Buffer.byteLength(docs[i]!);
    if (bytes + b > CAP_BYTES) continue;
    keep.add(i);
    bytes += b;
  }
  return docs.filter((_, i) => keep.has(i));
}

/** Cut a long text into slices near `size` chars, at a line end (or, for minified text, after `;`/`,`/`}`). */
function slices(text: string, size = SLICE_CHARS): string[] {
  const out: string[] = [];
  let start = 0;
  while (text.length - start > size * 1.5) {
    let cut = text.indexOf("\n", start + size);
    if (cut < 0 || cut - start > size * 1.5) {
      cut = start + size;
      while (cut < text.length && !";,}".includes(text[cut]!)) cut++;
    }
    out.push(text.slice(start, cut + 1));
    start = cut + 1;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

const big = (d: string): boolean => d.length >= MIN_DOC_CHARS;
const distinct = (docs: string[]): string[] => [...new Set(docs)];

interface Block { type: string; text?: string; thinking?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown }

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b: Block) => (b.type === "text" ? b.text ?? "" : "")).join("\n");
}

function looksJson(t: string): boolean {
  const s = t.trim();
  if (!(s.startsWith("{") || s.startsWith("["))) return false;
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** prose, code (tool outputs), JSON and shell output from recorded sessions. */
export function corpusCategories(corpusFile: string): Category[] {
  const prose: string[] = [], code: string[] = [], json: string[] = [], shell: string[] = [];
  for (const line of readFileSync(corpusFile, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const session = JSON.parse(line) as { messages: { role: string; content: string | Block[] }[] };
    const uses = new Map<string, Block>();
    for (const m of session.messages) {
      if (typeof m.content === "string") continue;
      for (const b of m.content) {
        if (m.role === "assistant" && b.type === "text") prose.push(b.text ?? "");
        else if (m.role === "assistant" && b.type === "thinking") prose.push(b.thinking ?? "");
        else if (b.type === "tool_use") {
          uses.set(b.id ?? "", b);
          json.push(JSON.stringify(b.input ?? {}));
        } else if (b.type === "tool_result") {
          const t = resultText(b.content);
          const use = uses.get(b.tool_use_id ?? "");
          const input = (use?.input ?? {}) as Record<string, unknown>;
          const name = use?.name ?? "";
          const path = typeof input.file_path === "string" ? input.file_path : typeof input.path === "string" ? input.path : "";
          const cmd = typeof input.command === "string" ? input.command : "";
          if (looksJson(t)) json.push(t);
          else if ((/^read$|^open$/i.test(name) && CODE_EXT.has(extname(path))) || (cmd && READ_CMD.test(cmd) && !/\bgrep\b|python|pytest|<</.test(cmd))) code.push(t);
          else if (/^(bash|BashOutput)$/i.test(name)) shell.push(t);
          // Other results (markdown reads, todo lists, web pages, edit confirmations) fit no category.
        }
      }
    }
  }
  return [
    { name: "prose", source: "assistant text and thinking blocks, one block per document", docs: capped(distinct(prose).filter(big)) },
    { name: "code_tool", source: "tool results that are source files: Read/open of a code path, or cat/head/sed -n/nl of one (no grep, no script run, no heredoc), one result per document", docs: capped(distinct(code).filter(big)) },
    { name: "json", source: "tool_use inputs as JSON.stringify'd, and tool results that parse as JSON, one per document", docs: capped(distinct(json).filter(big)) },
    { name: "shell", source: "other bash/Bash/BashOutput results, one result per document", docs: capped(distinct(shell).filter(big)) },
  ];
}

/** Japanese and Chinese documents: consecutive paragraphs of the seed chapters grouped to >= 600 chars. */
export function cjkCategories(seedDir: string): Category[] {
  const ja: string[] = [], zh: string[] = [];
  const files = existsSync(seedDir) ? readdirSync(seedDir).filter((f) => f.endsWith(".txt")).sort() : [];
  for (const f of files) {
    const text = readFileSync(join(seedDir, f), "utf8");
    let kana = 0, han = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x3040 && c <= 0x30ff) kana++;
      else if (c >= 0x4e00 && c <= 0x9fff) han++;
    }
    const target = kana > 100 ? ja : han > 100 ? zh : null;
    if (!target) continue; // the English chapter
    // Paragraph groups cut at blank lines; the separators stay inside the groups so nothing is lost.
    const groups: string[] = [];
    let start = 0;
    const re = /\n\s*\n/g;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const end = m.index + m[0].length;
      if (end - start >= 600) {
        groups.push(text.slice(start, end));
        start = end;
      }
    }
    const rest = text.slice(start);
    if (rest.length >= MIN_DOC_CHARS || groups.length === 0) groups.push(rest);
    else groups[groups.length - 1] += rest;
    target.push(...groups);
  }
  return [
    { name: "cjk_ja", source: "Japanese seed chapters (all of them), blank-line paragraphs grouped to >= 600 chars, markdown and code blocks included", docs: ja.filter(big) },
    { name: "cjk_zh", source: "Chinese seed chapter (all of it), blank-line paragraphs grouped to >= 600 chars, markdown and code blocks included", docs: zh.filter(big) },
  ];
}

function walk(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) {
      if (!["bpeRanks", "fixtures", "__snapshots__", "data", "codegen", "scraper"].includes(name)) walk(p, out);
    } else out.push(p);
  }
  return out;
}

const avgLine = (t: string): number => t.length / (t.split("\n").length || 1);

/** Hand-written package sources, minified bundles, and base64 built from package files. */
export function packageCategories(nodeModules: string): Category[] {
  const code: string[] = [], minified: string[] = [];
  const roots = ["zod/src", "fast-check/lib", "@types/node", "gpt-tokenizer/src", "pure-rand/lib", "undici-types", "esbuild/lib", "tsx/dist"];
  for (const root of roots) {
    for (const p of walk(join(nodeModules, root))) {
      if (!/\.(ts|js|mjs|cjs)$/.test(p) || /\.gen\.ts$/.test(p)) continue;
      const text = readFileSync(p, "utf8");
      if (avgLine(text) > 200) minified.push(...slices(text, 8_000));
      else code.push(...slices(text));
    }
  }
  // base64: compressed bytes (random-looking, like images), raw binary, and plain text, some
  // MIME-wrapped at 76 columns. Sources are fixed files, slices at fixed offsets.
  const b64: string[] = [];
  const wrap = (s: string): string => s.replace(/(.{76})/g, "$1\n");
  const sources = walk(join(nodeModules, "zod/src")).filter((p) => p.endsWith(".ts")).slice(0, 60);
  sources.forEach((p, i) => {
    const raw = readFileSync(p);
    const z = deflateSync(raw).toString("base64");
    if (z.length >= MIN_DOC_CHARS) b64.push(i % 3 === 0 ? wrap(z) : z);
    if (i % 4 === 0) b64.push(raw.subarray(0, 3000).toString("base64"));
  });
  const bin = join(nodeModules, "@esbuild/linux-x64/bin/esbuild");
  if (existsSync(bin)) {
    const buf = readFileSync(bin);
    for (let k = 0; k < 40; k++) {
      const off = Math.floor((buf.length - 4096) * (k / 40));
      const s = buf.subarray(off, off + 3072).toString("base64");
      b64.push(k % 3 === 0 ? wrap(s) : s);
    }
  }
  return [
    { name: "code_pkg", source: `hand-written sources under node_modules (${roots.filter((r) => r !== "tsx/dist").join(", ")}), files cut at line ends into ~${SLICE_CHARS}-char slices`, docs: capped(distinct(code).filter(big)) },
    { name: "minified", source: "minified bundles under node_modules (average line > 200 chars: tsx/dist), cut into ~8,000-char slices after ; , or }", docs: capped(distinct(minified).filter(big)) },
    { name: "base64", source: "base64 of deflated zod sources, of raw zod sources (first 3,000 bytes) and of 40 fixed 3 KB slices of the esbuild binary; a third wrapped at 76 columns", docs: capped(distinct(b64).filter(big)) },
  ];
}

/**
 * A flat, sequential copy of a string. Slices and concatenations are views in V8, and a mix of
 * string representations makes the optimizing compiler produce slower code for every counter;
 * messages in an agent arrive flat (JSON.parse), so the documents are flattened the same way.
 */
const flat = (s: string): string => Buffer.from(s, "utf8").toString("utf8");

export function loadAll(opts: { corpus: string; seeds: string; nodeModules: string }): Category[] {
  const cats = [...corpusCategories(opts.corpus), ...cjkCategories(opts.seeds), ...packageCategories(opts.nodeModules)];
  for (const c of cats) c.docs = c.docs.map(flat);
  return cats;
}

/** A document of the unseen material (bench/material/unseen.jsonl.gz, built by bench/material/build-unseen.ts). */
export interface UnseenDoc {
  /** Source family: "docs_ja", "sourcemap", "jwt", "git_log", ... */
  family: string;
  /** Kind reported on: prose, code, data, random, ja, zh, ko. */
  kind: string;
  /** Where it comes from: a repository, a package, a man section, a log file, a generator. */
  source: string;
  /** "fit": the calibration may use it; "held": never fitted on, reported as held-out. */
  split: "fit" | "held";
  text: string;
}

/**
 * The unseen material, in file order (deterministic), flattened like the shared material: the
 * committed file, then, when it is there, the part read from repository snapshots
 * (fetched.jsonl.gz beside it: not committed, rebuilt by build-unseen.ts; PROVENANCE.md), then
 * the generated symbol material (./material/symbols.ts).
 */
export function loadUnseen(file: string): UnseenDoc[] {
  const read = (f: string) =>
    gunzipSync(readFileSync(f)).toString("utf8").split("\n").filter((l) => l.trim()).map((l) => {
      const d = JSON.parse(l) as UnseenDoc;
      return { ...d, text: flat(d.text) };
    });
  const fetched = join(dirname(file), "fetched.jsonl.gz");
  const all = [...read(file), ...(fetched !== file && existsSync(fetched) ? read(fetched) : [])];
  // The same text twice (a man page installed under two names, a package's cjs and esm copies)
  // would count twice in a mean, and could sit on both sides of the split: the first one stands.
  const seen = new Set<string>();
  return [...all, ...symbolDocs()].filter((d) => !seen.has(d.text) && (seen.add(d.text), true));
}
