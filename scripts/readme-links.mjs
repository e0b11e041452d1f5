#!/usr/bin/env node
// The README is the package's page on the registry, and the registry resolves no relative link
// (package.json has no repository to resolve it against). So the README links the files the
// package ships (docs/, examples/) at a CDN that serves the published tarball, pinned to this
// version: the page of 0.1.0 shows 0.1.0's docs. This rewrites every such link, and any relative
// one, to the version in package.json; npm's `version` script runs it on every bump.
//
//   node scripts/readme-links.mjs [--check]
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

/** Where the published tarball's files are served: `${cdnBase(name, version)}docs/cli.md`. */
export function cdnBase(name, version) {
  return `https://cdn.jsdelivr.net/npm/${name}@${version}/`;
}

/** The README with every relative link, and every link into an earlier version's tarball, pointing at this version's. */
export function pinLinks(text, name, version) {
  const base = cdnBase(name, version);
  const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const pinned = new RegExp(`\\]\\(https://cdn\\.jsdelivr\\.net/npm/${escaped}@[^/)]+/`, "g");
  return text.replace(pinned, `](${base}`).replace(/\]\((?!https?:|mailto:|#)\.?\/?([^)\s]+)\)/g, (_m, path) => `](${base}${path})`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = join(ROOT, "README.md");
  const before = readFileSync(file, "utf8");
  const after = pinLinks(before, pkg.name, pkg.version);
  if (process.argv.includes("--check")) {
    if (after !== before) {
      console.error(`README.md: links are not pinned to ${pkg.name}@${pkg.version}; run node scripts/readme-links.mjs`);
      process.exit(1);
    }
  } else if (after !== before) {
    writeFileSync(`${file}.tmp`, after);
    renameSync(`${file}.tmp`, file);
  }
}
