#!/usr/bin/env node
// Runs every test/**/*.test.ts with node's test runner (Node 20 has no glob support in --test).
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...find(p));
    else if (name.endsWith(".test.ts")) out.push(p);
  }
  return out;
}

const files = find("test").sort();
if (files.length === 0) {
  console.error("no test files found under test/");
  process.exit(1);
}
// The spec reporter ends with the failing tests, each with its error: CI keeps only the tail of
// the output, and TAP's tail (the last files' tests) does not say which test failed.
const args = process.argv.slice(2);
const reporter = args.some((a) => a.startsWith("--test-reporter")) ? [] : ["--test-reporter=spec"];
const r = spawnSync(process.execPath, ["--import", "tsx", "--test", ...reporter, ...args, ...files], { stdio: "inherit" });
process.exit(r.status ?? 1);
