// Builds bench/material/unseen.jsonl.gz: material for the token estimator that the shared
// corpus does not cover, one document per line as {family, kind, source, split, text}.
// Not part of CI or of the benchmark run: the benchmark reads the stored file, offline. This
// script needs this machine's /usr/share/man, /usr/lib/python3.11, /usr/include, /var/log,
// node_modules, `npm pack`/`npm view` of a few packages, and snapshots of a few public
// documentation repositories (bare git directories under --mirror). See PROVENANCE.md.
//
// Usage: tsx bench/material/build-unseen.ts [--mirror DIR] [--packs DIR]
//
// The split is by SOURCE: every source (a repository, a package, a man page, a log file, a
// generator) is wholly "fit" (the calibration may see it) or wholly "held" (never fitted on).
import { execFileSync } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve, relative, basename } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync, gzipSync, deflateSync } from "node:zlib";
import { fnv, rng } from "./random.ts";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const argv = process.argv.slice(2);
const arg = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? resolve(argv[i + 1]!) : dflt;
};
const MIRROR = arg("--mirror", "/work/.mirror");

/** Sources read from repository snapshots (bench/material/fetched.jsonl.gz, not committed); lethe's own git log is not one. */
export const fromSnapshot = (source: string): boolean => /^(git log of )?(reactjs|vitejs|vuejs|vuejs-translations)\//.test(source) || source === "git commit/object ids";
const PACKS = arg("--packs", "/tmp/packs");
const NM = join(root, "node_modules");

export type Split = "fit" | "held";
interface Doc { family: string; kind: string; source: string; split: Split; text: string }
const out: Doc[] = [];

/** Per-source and per-family caps (UTF-8 bytes) keep the file small and the families balanced. */
const SOURCE_CAP = 90_000;
const FAMILY_CAP = 300_000;
const MIN = 200;
const SLICE = 6_000;

const bytes = (s: string): number => Buffer.byteLength(s, "utf8");

/** Cut text into slices near `size` chars at blank lines, else line ends, else after ; , } or a space. */
function slices(text: string, size = SLICE): string[] {
  const res: string[] = [];
  let start = 0;
  while (text.length - start > size * 1.5) {
    let cut = text.indexOf("\n\n", start + size);
    if (cut < 0 || cut - start > size * 1.5) cut = text.indexOf("\n", start + size);
    if (cut < 0 || cut - start > size * 1.5) {
      cut = start + size;
      while (cut < text.length && !";,} ".includes(text[cut]!)) cut++;
    }
    res.push(text.slice(start, cut + 1));
    start = cut + 1;
  }
  if (start < text.length) res.push(text.slice(start));
  return res.filter((d) => d.length >= MIN);
}

/** Add a source's documents (hash-ordered subset up to the source cap, then the family cap). */
function add(family: string, kind: string, source: string, split: Split, docs: string[], cap = SOURCE_CAP): void {
  const famBytes = out.filter((d) => d.family === family).reduce((n, d) => n + bytes(d.text), 0);
  let used = 0;
  const order = docs.map((d, i) => ({ d, i, h: fnv(d) })).sort((a, b) => a.h - b.h || a.i - b.i);
  const keep = new Set<number>();
  for (const { d, i } of order) {
    const b = bytes(d);
    if (d.length < MIN || used + b > cap || famBytes + used + b > FAMILY_CAP) continue;
    keep.add(i);
    used += b;
  }
  let n = 0;
  docs.forEach((text, i) => {
    if (keep.has(i)) (out.push({ family, kind, source, split, text }), n++);
  });
  console.error(`${family.padEnd(14)} ${split.padEnd(4)} ${source.padEnd(40)} ${String(n).padStart(4)} docs ${(used / 1e3).toFixed(0).padStart(4)} kB`);
}

const git = (repo: string, ...a: string[]): string => execFileSync("git", ["-C", repo, ...a], { encoding: "utf8", maxBuffer: 1 << 28 });
const repoDir = (name: string): string => join(MIRROR, name.replace("/", "+"), "repo");
/** Markdown files of a repository snapshot under `prefix`, as (path, text). */
function repoFiles(name: string, re: RegExp): [string, string][] {
  const dir = repoDir(name);
  if (!existsSync(dir)) throw new Error(`no snapshot of ${name} under ${MIRROR}`);
  const paths = git(dir, "ls-tree", "-r", "--name-only", "HEAD").split("\n").filter((p) => re.test(p)).sort();
  return paths.map((p) => [p, git(dir, "show", `HEAD:${p}`)]);
}
function walk(dir: string, acc: string[] = []): string[] {
  if (!existsSync(dir)) return acc;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) walk(p, acc);
    else acc.push(p);
  }
  return acc;
}
/** Emails in git logs are replaced by a fixed-shape stand-in (the token shape of an address stays). */
const maskEmails = (s: string): string => s.replace(/<[^<>\s@]+@[^<>\s]+>/g, (m) => `<user${fnv(m) % 100000}@users.noreply.example.com>`);

// ---------------------------------------------------------------------------------------------
// 1. Documentation in Japanese, Chinese, Korean, French, Russian: translated docs of Vue, Vite,
//    React, Vue Router, Pinia (one markdown file, cut into ~6,000-char slices, per document),
//    and the distribution's translated man pages.
const mdDocs = (name: string, re: RegExp): string[] => repoFiles(name, re).flatMap(([, t]) => slices(t));
function man(file: string): string {
  const cache = join(tmpdir(), "man-cache", String(fnv(file)) + ".txt");
  if (existsSync(cache)) return readFileSync(cache, "utf8");
  execFileSync("mkdir", ["-p", dirname(cache)]);
  const t = renderMan(file);
  writeFileSync(cache, t);
  return t;
}
function renderMan(file: string): string {
  try {
    return execFileSync("sh", ["-c", `MANWIDTH=80 timeout 10 man -l "${file}" 2>/dev/null | col -bx`], { encoding: "utf8", maxBuffer: 1 << 26 });
  } catch {
    return "";
  }
}
const manDocs = (files: string[]): string[] => files.flatMap((f) => slices(man(f)));

const DOCS: [string, string, string, Split, () => string[]][] = [
  ["docs_ja", "ja", "vuejs-translations/docs-ja", "fit", () => mdDocs("vuejs-translations/docs-ja", /^src\/.*\.md$/)],
  ["docs_ja", "ja", "reactjs/ja.react.dev", "held", () => mdDocs("reactjs/ja.react.dev", /^src\/content\/.*\.md$/)],
  ["docs_ja", "ja", "vitejs/docs-ja", "held", () => mdDocs("vitejs/docs-ja", /^(guide|config|plugins)\/.*\.md$/)],
  ["man_ja", "ja", "man pages ja", "held", () => manDocs(walk("/usr/share/man/ja"))],
  ["docs_zh", "zh", "vuejs-translations/docs-zh-cn", "fit", () => mdDocs("vuejs-translations/docs-zh-cn", /^src\/.*\.md$/)],
  ["docs_zh", "zh", "vuejs/pinia (zh)", "fit", () => mdDocs("vuejs/pinia", /\/zh\/.*\.md$/)],
  ["docs_zh", "zh", "reactjs/zh-hans.react.dev", "held", () => mdDocs("reactjs/zh-hans.react.dev", /^src\/content\/.*\.md$/)],
  ["docs_zh", "zh", "vuejs/router (zh)", "held", () => mdDocs("vuejs/router", /docs\/zh\/.*\.md$/)],
  ["man_zh", "zh", "man pages zh_CN", "held", () => manDocs(walk("/usr/share/man/zh_CN"))],
  ["docs_ko", "ko", "vuejs-translations/docs-ko", "fit", () => mdDocs("vuejs-translations/docs-ko", /^src\/.*\.md$/)],
  ["docs_ko", "ko", "reactjs/ko.react.dev", "held", () => mdDocs("reactjs/ko.react.dev", /^src\/content\/.*\.md$/)],
  ["docs_ko", "ko", "vitejs/docs-ko", "held", () => mdDocs("vitejs/docs-ko", /^(guide|config|plugins)\/.*\.md$/)],
  ["man_ko", "ko", "man pages ko", "held", () => manDocs(walk("/usr/share/man/ko"))],
  ["docs_fr", "prose", "vuejs-translations/docs-fr", "fit", () => mdDocs("vuejs-translations/docs-fr", /^src\/.*\.md$/)],
  ["docs_ru", "prose", "reactjs/ru.react.dev", "held", () => mdDocs("reactjs/ru.react.dev", /^src\/content\/.*\.md$/)],
  ["man_de_fr_ru", "prose", "man pages de", "fit", () => manDocs(walk("/usr/share/man/de"))],
  ["man_de_fr_ru", "prose", "man pages fr", "held", () => manDocs(walk("/usr/share/man/fr"))],
  ["man_de_fr_ru", "prose", "man pages ru", "held", () => manDocs(walk("/usr/share/man/ru"))],
];

// 2. English man pages: section by section, sections 1 and 8 fitted, 3, 5 and 7 held out.
function enMan(section: string): string[] {
  const files = walk(`/usr/share/man/${section}`).filter((f) => f.endsWith(".gz"));
  const pick = files.map((f) => ({ f, h: fnv(basename(f)) })).sort((a, b) => a.h - b.h).slice(0, 60).map((x) => x.f).sort();
  return manDocs(pick);
}

// 3. English prose: README/CHANGELOG/docs markdown of packages in node_modules, split by package.
function packages(): string[] {
  const names: string[] = [];
  for (const n of readdirSync(NM).sort()) {
    if (n.startsWith(".")) continue;
    if (n.startsWith("@")) for (const m of readdirSync(join(NM, n)).sort()) names.push(`${n}/${m}`);
    else names.push(n);
  }
  return names;
}
/** Packages the shared material already uses (bench/tokens-material.ts): never held out. */
const SHARED_PKGS = new Set(["zod", "fast-check", "@types/node", "gpt-tokenizer", "pure-rand", "undici-types", "esbuild", "tsx"]);
const pkgSplit = (p: string): Split => (SHARED_PKGS.has(p) ? "fit" : fnv(p) % 2 === 0 ? "fit" : "held");

// ---------------------------------------------------------------------------------------------
// Synthetic but realistic random strings (deterministic): hex hashes and UUIDs, JWTs, base64.
const b64url = (b: Buffer): string => b.toString("base64url");
function randBytes(r: () => number, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}
const hex = (r: () => number, n: number): string => randBytes(r, n).toString("hex");
function uuid(r: () => number): string {
  const h = hex(r, 16).split("");
  h[12] = "4";
  h[16] = "89ab"[Math.floor(r() * 4)]!;
  const s = h.join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}
const WORDS = "user order invoice session account project build deploy cache token request payment customer item event task job report".split(" ");
const pick = <T>(r: () => number, xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
function isoTime(r: () => number, base: number): string {
  return new Date(base + Math.floor(r() * 86_400_000 * 30)).toISOString();
}

function hexDocs(kind: "sha256sum" | "uuid_json" | "git_ids" | "md5sums" | "uuid_log"): string[] {
  const docs: string[] = [];
  const r = rng(fnv(kind));
  if (kind === "sha256sum") {
    // Real sha256 of package files, as `sha256sum` prints them.
    const files = walk(join(NM, "typescript")).concat(walk(join(NM, "playwright-core/lib"))).slice(0, 3000);
    let cur = "";
    for (const f of files) {
      cur += `${createHash("sha256").update(readFileSync(f)).digest("hex")}  ${relative(NM, f)}\n`;
      if (cur.length > 4000) (docs.push(cur), (cur = ""));
    }
  } else if (kind === "md5sums") {
    // dpkg's md5sums lists (real).
    for (const f of walk("/var/lib/dpkg/info").filter((p) => p.endsWith(".md5sums")).slice(0, 400)) docs.push(...slices(readFileSync(f, "utf8"), 4000));
  } else if (kind === "git_ids") {
    // `git rev-list --objects` and `git log --format='%H %P'` of a repository (real ids).
    const dir = repoDir("vuejs/router");
    docs.push(...slices(git(dir, "log", "--format=%H %P", "-n", "400"), 4000));
    docs.push(...slices(git(dir, "rev-list", "--objects", "-n", "30", "HEAD"), 4000));
  } else if (kind === "uuid_json") {
    for (let d = 0; d < 60; d++) {
      const items = Array.from({ length: 12 + Math.floor(r() * 20) }, () => ({
        id: uuid(r),
        type: pick(r, WORDS),
        owner_id: uuid(r),
        created_at: isoTime(r, 1.7e12),
        etag: hex(r, 16),
        checksum: `sha256:${hex(r, 32)}`,
      }));
      docs.push(d % 2 ? JSON.stringify({ data: items }) : JSON.stringify({ data: items }, null, 2));
    }
  } else {
    for (let d = 0; d < 60; d++) {
      let s = "";
      for (let i = 0; i < 30; i++) {
        s += `${isoTime(r, 1.7e12)} ${pick(r, ["INFO", "INFO", "WARN", "DEBUG"])} [${pick(r, WORDS)}-worker] request_id=${uuid(r)} trace=${hex(r, 16)} span=${hex(r, 8)} ${pick(r, ["started", "completed in " + Math.floor(r() * 900) + "ms", "retrying", "cache miss"])}\n`;
      }
      docs.push(s);
    }
  }
  return docs;
}

function jwt(r: () => number, big: boolean): string {
  const header = { alg: big ? "RS256" : "HS256", typ: "JWT", ...(big ? { kid: hex(r, 20) } : {}) };
  const now = 1_700_000_000 + Math.floor(r() * 5e7);
  const payload: Record<string, unknown> = { sub: uuid(r), iat: now, exp: now + 3600, iss: `https://auth.${pick(r, WORDS)}.example.com/`, aud: pick(r, WORDS) + "-api" };
  if (big) Object.assign(payload, { scope: WORDS.filter(() => r() < 0.4).map((w) => `${w}:read`).join(" "), email: `${pick(r, WORDS)}${Math.floor(r() * 999)}@example.com`, roles: WORDS.filter(() => r() < 0.2), sid: hex(r, 16), nonce: b64url(randBytes(r, 12)) });
  const h = b64url(Buffer.from(JSON.stringify(header)));
  const p = b64url(Buffer.from(JSON.stringify(payload)));
  const sig = big ? b64url(randBytes(r, 256)) : b64url(createHmac("sha256", hex(r, 16)).update(`${h}.${p}`).digest());
  return `${h}.${p}.${sig}`;
}
function jwtDocs(kind: "json" | "curl" | "env"): string[] {
  const r = rng(fnv("jwt" + kind));
  const docs: string[] = [];
  for (let d = 0; d < 50; d++) {
    if (kind === "json") {
      const tok = jwt(r, false);
      docs.push(JSON.stringify({ access_token: tok, token_type: "Bearer", expires_in: 3600, refresh_token: b64url(randBytes(r, 32)), id_token: jwt(r, r() < 0.5), scope: "openid profile email" }, null, d % 2 ? 2 : 0));
    } else if (kind === "curl") {
      const host = `api.${pick(r, WORDS)}.example.com`;
      docs.push(
        `* Connected to ${host} (203.0.113.${Math.floor(r() * 250)}) port 443\n> GET /v1/${pick(r, WORDS)}s?limit=50 HTTP/2\n> Host: ${host}\n> user-agent: curl/8.5.0\n> accept: */*\n> authorization: Bearer ${jwt(r, true)}\n>\n< HTTP/2 200\n< content-type: application/json\n< x-request-id: ${uuid(r)}\n< set-cookie: session=${jwt(r, false)}; Path=/; HttpOnly; Secure\n<\n`,
      );
    } else {
      let s = "";
      for (let i = 0; i < 4; i++) s += `${pick(r, ["API_TOKEN", "AUTH_JWT", "SERVICE_TOKEN", "ID_TOKEN"])}_${i}=${jwt(r, r() < 0.5)}\n`;
      docs.push(s);
    }
  }
  return docs;
}

function base64Docs(kind: "png" | "gz" | "text"): string[] {
  const docs: string[] = [];
  const wrap = (s: string): string => s.replace(/(.{76})/g, "$1\n");
  if (kind === "png") {
    const files = walk(NM).filter((p) => /\.(png|jpg|gif|woff2?|ttf)$/.test(p)).slice(0, 80);
    files.forEach((f, i) => {
      const b = readFileSync(f).subarray(0, 3000).toString("base64");
      docs.push(i % 2 ? `data:image/png;base64,${b}` : wrap(b));
    });
  } else if (kind === "gz") {
    // gzip'd man pages as they are on disk: random bytes.
    const files = walk("/usr/share/man/man1").slice(0, 400).filter((_, i) => i % 5 === 0);
    files.forEach((f, i) => {
      const b = readFileSync(f).subarray(0, 3000).toString("base64");
      docs.push(i % 3 === 0 ? wrap(b) : b);
    });
  } else {
    // base64 of plain text (license files, python sources): the character mix of encoded text.
    const files = walk("/usr/lib/python3.11/email").filter((f) => f.endsWith(".py")).slice(0, 40);
    files.forEach((f, i) => {
      const raw = readFileSync(f);
      docs.push(raw.subarray(0, 2500).toString("base64"));
      if (i % 2) docs.push(deflateSync(raw).subarray(0, 2000).toString("base64"));
    });
  }
  return docs;
}

function syntheticLogs(kind: "nginx" | "jsonl"): string[] {
  const r = rng(fnv("log" + kind));
  const docs: string[] = [];
  for (let d = 0; d < 60; d++) {
    let s = "";
    for (let i = 0; i < 25; i++) {
      const ip = `${Math.floor(r() * 223) + 1}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}`;
      const path = `/${pick(r, ["api", "static", "v2", "assets"])}/${pick(r, WORDS)}s/${Math.floor(r() * 99999)}`;
      if (kind === "nginx") {
        const t = new Date(1.7e12 + Math.floor(r() * 8.64e8));
        s += `${ip} - - [${t.toUTCString().slice(5, 25).replace(/ /g, "/").replace(/\/(\d\d:)/, ":$1")} +0000] "${pick(r, ["GET", "GET", "POST", "PUT"])} ${path} HTTP/1.1" ${pick(r, [200, 200, 200, 304, 404, 500])} ${Math.floor(r() * 50000)} "-" "${pick(r, ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", "curl/8.5.0", "python-requests/2.31.0", "Go-http-client/1.1"])}"\n`;
      } else {
        s += JSON.stringify({ level: pick(r, [30, 30, 40, 50]), time: 1.7e12 + Math.floor(r() * 8.64e8), pid: 1000 + Math.floor(r() * 9000), hostname: `${pick(r, WORDS)}-${hex(r, 4)}`, reqId: `req-${Math.floor(r() * 1e5).toString(36)}`, req: { method: pick(r, ["GET", "POST"]), url: path, remoteAddress: ip }, responseTime: Math.round(r() * 90000) / 100, msg: pick(r, ["request completed", "incoming request", "route not found", "upstream timeout"]) }) + "\n";
      }
    }
    docs.push(s);
  }
  return docs;
}

// ---------------------------------------------------------------------------------------------
function main(): void {
  const tmp = mkdtempSync(join(tmpdir(), "unseen-"));
  for (const [family, kind, source, split, get] of DOCS) add(family, kind, source, split, get());

  for (const [sec, split] of [["man1", "fit"], ["man8", "fit"], ["man3", "held"], ["man5", "held"], ["man7", "held"]] as const) add("man_en", "prose", `man pages ${sec}`, split, enMan(sec));

  // Package docs (English), code, minified bundles and source maps, by package.
  const pkgs = packages();
  const fams: Record<string, string[][]> = {};
  for (const p of pkgs) {
    const files = walk(join(NM, p)).filter((f) => !f.includes("/node_modules/", join(NM, p).length));
    const md = files.filter((f) => /\.(md|markdown|txt)$/i.test(f) && !/license/i.test(f));
    const ts = files.filter((f) => /\.(ts|mts|cts)$/.test(f) && !/\.d\.[mc]?ts$/.test(f));
    const dts = files.filter((f) => /\.d\.[mc]?ts$/.test(f));
    const js = files.filter((f) => /\.(js|mjs|cjs)$/.test(f));
    const maps = files.filter((f) => f.endsWith(".map"));
    const read = (f: string): string => readFileSync(f, "utf8");
    const long = (t: string): boolean => t.length / (t.split("\n").length || 1) > 200;
    const split = pkgSplit(p);
    if (SHARED_PKGS.has(p)) continue; // already in the shared material
    add("docs_en", "prose", p, split, md.flatMap((f) => slices(read(f))), 25_000);
    add("code_ts", "code", p, split, [...ts, ...dts].map(read).filter((t) => !long(t)).flatMap((t) => slices(t)), 25_000);
    add("code_js", "code", p, split, js.map(read).filter((t) => !long(t)).flatMap((t) => slices(t)), 25_000);
    add("minified", "code", p, split, js.map(read).filter(long).flatMap((t) => slices(t, 5000)), 30_000);
    add("sourcemap", "data", p, split, maps.map(read).flatMap((t) => slices(t, 5000)), 30_000);
    const pj = join(NM, p, "package.json");
    if (existsSync(pj)) (fams[split] ??= []).push([read(pj)]);
  }
  add("json_tool", "data", "node_modules package.json (fit packages)", "fit", (fams.fit ?? []).flat());
  add("json_tool", "data", "node_modules package.json (held packages)", "held", (fams.held ?? []).flat());
  add("json_tool", "data", "node_modules/.package-lock.json", "fit", slices(readFileSync(join(NM, ".package-lock.json"), "utf8")));
  // `npm view --json` of a few packages (registry metadata: versions, dist, maintainers).
  const view = (name: string): string => execFileSync("npm", ["view", name, "--json"], { encoding: "utf8", cwd: tmp, maxBuffer: 1 << 26 });
  add("json_tool", "data", "npm view --json", "held", ["react", "vue", "lodash", "express", "typescript", "vite"].flatMap((n) => slices(view(n))));
  add("json_tool", "data", "npm ls --json", "held", slices(execFileSync("npm", ["ls", "--json", "--all", "--long"], { encoding: "utf8", cwd: root, maxBuffer: 1 << 28 }).replaceAll(root, "/home/dev/lethe")));

  // Code in other languages.
  const py = walk("/usr/lib/python3.11").filter((f) => f.endsWith(".py") && !f.includes("site-packages") && !f.includes("/test"));
  const pyBy = (re: RegExp): string[] => py.filter((f) => re.test(relative("/usr/lib/python3.11", f))).map((f) => readFileSync(f, "utf8")).flatMap((t) => slices(t));
  add("code_py", "code", "python3.11 stdlib a-m", "fit", pyBy(/^[a-m]/));
  add("code_py", "code", "python3.11 stdlib n-z", "held", pyBy(/^[n-z_]/));
  const hdr = walk("/usr/include").filter((f) => f.endsWith(".h"));
  const hBy = (re: RegExp): string[] => hdr.filter((f) => re.test(relative("/usr/include", f))).map((f) => readFileSync(f, "latin1")).flatMap((t) => slices(t));
  add("code_c", "code", "/usr/include (linux, x86_64-linux-gnu)", "fit", hBy(/^(linux|x86_64-linux-gnu)\//));
  add("code_c", "code", "/usr/include (other)", "held", hBy(/^(?!linux\/|x86_64-linux-gnu\/)/));

  // Translation catalogues: moment and dayjs locales (npm pack), yargs locales (node_modules).
  const untar = (tgz: string): string => {
    const d = join(tmp, basename(tgz));
    execFileSync("mkdir", ["-p", d]);
    execFileSync("tar", ["xzf", tgz, "-C", d]);
    return join(d, "package");
  };
  const tgz = (n: string): string => join(PACKS, readdirSync(PACKS).find((f) => f.startsWith(n + "-") && f.endsWith(".tgz"))!);
  const moment = untar(tgz("moment"));
  const dayjs = untar(tgz("dayjs"));
  add("catalogue", "data", "moment locales (npm pack moment)", "fit", walk(join(moment, "src/locale")).map((f) => readFileSync(f, "utf8")));
  add("catalogue", "data", "dayjs locales (npm pack dayjs)", "held", walk(join(dayjs, "esm/locale")).filter((f) => f.endsWith(".js")).map((f) => readFileSync(f, "utf8")));
  add("catalogue", "data", "yargs + y18n locales (node_modules)", "held", walk(join(NM, "yargs/locales")).map((f) => readFileSync(f, "utf8")));

  // git log text of documentation repositories (emails masked): --stat and -p.
  const logs: [string, Split][] = [["vuejs-translations/docs-ja", "fit"], ["vitejs/docs-ko", "fit"], ["vuejs/pinia", "fit"], ["reactjs/zh-hans.react.dev", "held"], ["vuejs/router", "held"], ["vuejs-translations/docs-fr", "held"]];
  for (const [name, split] of logs) {
    const dir = repoDir(name);
    // One commit at a time: a snapshot lacks blobs of 4 MiB and more, so some commits fail.
    let stat = "";
    for (const sha of git(dir, "log", "--format=%H", "-n", "150", "--no-merges").split("\n").filter(Boolean)) {
      try {
        stat += maskEmails(git(dir, "show", "--stat", sha)) + "\n";
      } catch {
        /* a missing blob */
      }
    }
    // Patches one commit at a time: a snapshot lacks blobs of 4 MiB and more, so some fail.
    let patch = "";
    for (const sha of git(dir, "log", "--format=%H", "-n", "40", "--no-merges").split("\n").filter(Boolean)) {
      try {
        patch += maskEmails(git(dir, "show", "-p", sha)).slice(0, 6000) + "\n";
      } catch {
        /* a missing blob */
      }
    }
    add("git_log", "data", `git log of ${name}`, split, [...slices(stat, 4000), ...slices(patch, 4000)], 45_000);
  }
  // This repository's own history (English, long messages), held out.
  add("git_log", "data", "git log of lethe (this repository)", "held", slices(maskEmails(git(root, "log", "--stat", "-n", "80", "b92ad90")), 4000), 45_000);

  // System logs (real, this machine) and synthetic web-server logs.
  const log = (f: string): string[] => (existsSync(f) ? slices(readFileSync(f, "utf8"), 4000) : []);
  add("logs", "data", "/var/log/dpkg.log", "fit", log("/var/log/dpkg.log"));
  add("logs", "data", "/var/log/apt/term.log", "held", log("/var/log/apt/term.log"));
  add("logs", "data", "/var/log/apt/history.log + alternatives.log", "held", [...log("/var/log/apt/history.log"), ...log("/var/log/alternatives.log")]);
  add("logs", "data", "synthetic nginx access log", "fit", syntheticLogs("nginx"));
  add("logs", "data", "synthetic JSON lines (pino-style)", "held", syntheticLogs("jsonl"));

  // Random strings.
  add("hex_uuid", "random", "sha256sum of package files", "fit", hexDocs("sha256sum"));
  add("hex_uuid", "random", "dpkg md5sums", "held", hexDocs("md5sums"));
  add("hex_uuid", "random", "git commit/object ids", "held", hexDocs("git_ids"));
  add("hex_uuid", "random", "synthetic UUID JSON", "fit", hexDocs("uuid_json"));
  add("hex_uuid", "random", "synthetic log lines with UUIDs and trace ids", "held", hexDocs("uuid_log"));
  add("jwt", "random", "synthetic OAuth token responses (JSON)", "fit", jwtDocs("json"));
  add("jwt", "random", "synthetic curl -v with bearer tokens", "held", jwtDocs("curl"));
  add("jwt", "random", "synthetic .env with tokens", "held", jwtDocs("env"));
  add("base64", "random", "base64 of images and fonts in node_modules", "fit", base64Docs("png"));
  add("base64", "random", "base64 of gzip'd man pages", "held", base64Docs("gz"));
  add("base64", "random", "base64 of python sources (plain and deflated)", "held", base64Docs("text"));

  // What comes from repository snapshots (under --mirror) is kept apart and not committed: the
  // workplace's rule for fetched data. The rest (this machine, the npm registry, generators) is.
  for (const [file, docs] of [["unseen.jsonl.gz", out.filter((d) => !fromSnapshot(d.source))], ["fetched.jsonl.gz", out.filter((d) => fromSnapshot(d.source))]] as const) {
    const lines = docs.map((d) => JSON.stringify(d)).join("\n") + "\n";
    const gz = gzipSync(Buffer.from(lines), { level: 9 });
    writeFileSync(join(here, file), gz);
    const tot = docs.reduce((n, d) => n + bytes(d.text), 0);
    console.error(`${file}: ${docs.length} docs, ${(tot / 1e6).toFixed(2)} MB text, ${(gz.length / 1e6).toFixed(2)} MB gz`);
  }
  void gunzipSync;
}
main();
