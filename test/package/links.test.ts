// The shipped README is the package's registry page: its links must work from there, where no
// relative link resolves (package.json names no repository). Every link into the package points
// at this version's published files; the docs the package ships link only what it ships.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; version: string };

/** The files `npm pack` would put in the tarball (no scripts run, nothing written). */
function shipped(): string[] {
  const r = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}

const linksOf = (md: string): string[] => [...md.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);

/** Whether `path` (a file, or a folder ending in /) is in the package. */
const ships = (files: readonly string[], path: string): boolean => files.includes(path) || (path.endsWith("/") && files.some((f) => f.startsWith(path)));

test("the README links work from the registry page: no relative link; links into the package name this version and a file it ships", () => {
  const files = shipped();
  const links = linksOf(readFileSync(join(ROOT, "README.md"), "utf8"));
  const relative = links.filter((l) => !/^(https?:|mailto:|#)/.test(l));
  assert.deepEqual(relative, [], "a relative link in the README resolves nowhere on the registry page");
  const base = `https://cdn.jsdelivr.net/npm/${pkg.name}@`;
  const intoPackage = links.filter((l) => l.startsWith(base));
  assert.ok(intoPackage.length >= 5, `the README links the docs and examples it ships (found ${intoPackage.length})`);
  for (const l of intoPackage) {
    const rest = l.slice(base.length);
    const slash = rest.indexOf("/");
    assert.equal(rest.slice(0, slash), pkg.version, `${l} names another version than package.json's`);
    const path = rest.slice(slash + 1).replace(/#.*$/, "");
    assert.ok(ships(files, path), `${l}: the package does not ship ${path}`);
  }
});

test("the docs the package ships link only files it ships", () => {
  const files = shipped();
  const docs = files.filter((f) => /^docs\/.*\.md$/.test(f));
  assert.ok(docs.length >= 3);
  for (const doc of docs) {
    for (const l of linksOf(readFileSync(join(ROOT, doc), "utf8"))) {
      if (/^(https?:|mailto:|#)/.test(l)) continue;
      const target = normalize(join(dirname(doc), l.replace(/#.*$/, "")));
      assert.ok(ships(files, target) || ships(files, `${target}/`), `${doc} links ${l}, which the package does not ship`);
    }
  }
});

test("scripts/readme-links.mjs pins relative links and earlier versions to this one, and leaves other links alone", async () => {
  const { pinLinks } = (await import(join(ROOT, "scripts/readme-links.mjs"))) as { pinLinks: (t: string, n: string, v: string) => string };
  const md = "[a](docs/cli.md) [b](./examples/) [c](https://cdn.jsdelivr.net/npm/lethe@0.0.9/docs/x.md) [d](#usage) [e](https://example.com/y) [f](https://cdn.jsdelivr.net/npm/lethe-other@1.0.0/z)";
  assert.equal(
    pinLinks(md, "lethe", "1.2.3"),
    "[a](https://cdn.jsdelivr.net/npm/lethe@1.2.3/docs/cli.md) [b](https://cdn.jsdelivr.net/npm/lethe@1.2.3/examples/) [c](https://cdn.jsdelivr.net/npm/lethe@1.2.3/docs/x.md) [d](#usage) [e](https://example.com/y) [f](https://cdn.jsdelivr.net/npm/lethe-other@1.0.0/z)",
  );
});
