// Every public export (what the package's entry points reach) has a TSDoc comment.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

const SRC = normalize(join(import.meta.dirname, "..", "..", "src"));
const ENTRIES = ["index.ts", "clients.ts", "agent/index.ts", "adapters/ai-sdk.ts", "adapters/langchain.ts", "adapters/openai.ts"];

test("every declaration the entry points export has a /** … */ comment", () => {
  const whole = new Set<string>(); // files re-exported with `export *`
  const named = new Map<string, Set<string>>(); // file → names re-exported from it
  const follow = (file: string) => {
    if (whole.has(file)) return;
    whole.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^export \*(?: as \w+)? from "(\.[^"]+)"/gm)) follow(normalize(join(dirname(file), m[1]!)));
  };
  for (const e of ENTRIES) {
    const file = join(SRC, e);
    follow(file);
    for (const m of readFileSync(file, "utf8").matchAll(/^export (?:type )?\{([^}]*)\} from "(\.[^"]+)"/gm)) {
      const from = normalize(join(dirname(file), m[2]!));
      const set = named.get(from) ?? new Set<string>();
      for (const n of m[1]!.split(",")) {
        const name = n.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]!.trim();
        if (name) set.add(name);
      }
      named.set(from, set);
    }
  }
  const missing: string[] = [];
  let checked = 0;
  const check = (file: string, only?: Set<string>) => {
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      const m = /^export (?:async )?(?:function|class|const|interface|type) (\w+)/.exec(line);
      if (!m || (only && !only.has(m[1]!))) return;
      checked++;
      if (!lines.slice(Math.max(0, i - 3), i).join("\n").includes("*/")) missing.push(`${file.slice(SRC.length + 1)}:${i + 1} ${m[1]}`);
    });
  };
  for (const f of whole) check(f);
  for (const [f, names] of named) check(f, names);
  assert.ok(checked > 150, `checked ${checked}`);
  assert.deepEqual(missing, []);
});
