#!/usr/bin/env node
// The `lethe` command. In a checkout (src/ present, tsx installed by `npm ci`) it runs the
// TypeScript sources through tsx's loader, so it is never stale; an installed package runs
// the compiled dist/ (built by `npm run build`, which `prepack` runs before packing).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src", "cli", "main.ts");
const dist = join(root, "dist", "cli", "main.js");

async function load() {
  if (existsSync(src) && process.env.LETHE_USE_DIST !== "1") {
    try {
      const { register } = await import("tsx/esm/api");
      // lethe's own tsconfig, not whatever the workspace (the current folder) has.
      register({ tsconfig: join(root, "tsconfig.json") });
      return await import(pathToFileURL(src).href);
    } catch (e) {
      if (!existsSync(dist)) throw e;
    }
  }
  if (existsSync(dist)) return import(pathToFileURL(dist).href);
  throw new Error(`lethe: neither the sources with tsx nor a build (${dist}) were found; run npm ci, or npm run build`);
}

try {
  const cli = await load();
  await cli.run(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`${e instanceof Error ? e.message.split("\n")[0] : String(e)}\n`);
  process.exit(1);
}
