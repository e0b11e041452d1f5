// README.md and docs/cli.md describe exactly what the program does: every flag the CLI accepts is in
// the options table of docs/cli.md (and nothing else is), every flag the README or docs mention
// exists, and every REPL command in /help is in the interactive-mode table.
import { SESSION_COMMAND_FLAGS } from "../../src/cli/sessions.ts";
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { OPTIONS, usageText } from "../../src/cli/args.ts";
import { HELP } from "../../src/cli/repl.ts";
import { ROOT } from "./support.ts";

const docs = readFileSync(join(ROOT, "docs", "cli.md"), "utf8");
const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const known = new Set(OPTIONS.map((o) => o.name));
// Flags of the subcommands (lethe sessions, lethe export), mentioned with them in the docs.
const subcommand = new Set<string>(SESSION_COMMAND_FLAGS);

/** The rows of the first table under a "## heading". */
function tableUnder(text: string, heading: string): string[] {
  const at = text.indexOf(`\n## ${heading}\n`);
  assert.ok(at >= 0, `docs/cli.md has a "## ${heading}" section`);
  const rest = text.slice(at + heading.length + 5);
  const end = rest.search(/\n## /);
  return (end >= 0 ? rest.slice(0, end) : rest).split("\n").filter((l) => l.startsWith("|") && !/^\|\s*-/.test(l));
}

const flagsIn = (text: string) => new Set([...text.matchAll(/(?<![\w-])--([a-z][a-zA-Z-]+)/g)].map((m) => m[1]!));

test("docs/cli.md's options table lists every flag of the CLI, with its short form, and no other", () => {
  const rows = tableUnder(docs, "Options");
  const documented = new Set<string>();
  for (const row of rows) {
    const first = row.split("|")[1] ?? "";
    for (const f of flagsIn(first)) documented.add(f);
  }
  for (const o of OPTIONS) {
    assert.ok(documented.has(o.name), `--${o.name} is in the options table of docs/cli.md`);
    if (o.short) {
      const row = rows.find((r) => flagsIn(r.split("|")[1] ?? "").has(o.name))!;
      assert.ok(row.includes(`-${o.short}`), `the row of --${o.name} shows -${o.short}`);
    }
  }
  for (const f of documented) assert.ok(known.has(f), `docs/cli.md documents --${f}, which the CLI does not accept`);
});

test("every flag the README, docs/cli.md and docs/quickstart.md mention is one the CLI accepts", () => {
  const quick = readFileSync(join(ROOT, "docs", "quickstart.md"), "utf8");
  // Commands of other programs (npm, tmux, git, claude's own) are not lethe flags.
  // "preview" is /compact's own option in the REPL (`/compact --preview`), not a flag of the CLI.
  const others = new Set(["save-exact", "import", "test", "no-verify", "version", "help", "preview"]);
  for (const [name, text] of [["README.md", readme], ["docs/cli.md", docs], ["docs/quickstart.md", quick]] as const) {
    // Lines that list other programs' flags lethe does not support say so ("not supported").
    const said = text.split("\n").filter((l) => !/not supported/.test(l)).join("\n");
    for (const f of flagsIn(said)) {
      if ((others.has(f) || subcommand.has(f)) && !known.has(f)) continue;
      assert.ok(known.has(f), `${name} mentions --${f}, which the CLI does not accept`);
    }
  }
});

test("--help lists every option, and every REPL command of /help is in docs/cli.md", () => {
  const help = usageText("0.0.0");
  for (const o of OPTIONS) assert.ok(help.includes(`--${o.name}`), `--help shows --${o.name}`);
  const commands = [...HELP.matchAll(/^\s+(\/[a-z]+)/gm)].map((m) => m[1]!);
  assert.ok(commands.length >= 5);
  const rows = tableUnder(docs, "Interactive mode").join("\n");
  for (const c of commands) assert.ok(rows.includes(`\`${c}`), `${c} is in the interactive-mode table of docs/cli.md`);
});
