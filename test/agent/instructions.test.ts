// Loading AGENTS.md / CLAUDE.md: order (user, repository root … workspace), the repository root as
// the stop, caps, and files that cannot be read.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_FILE_CHARS, MAX_TOTAL_CHARS, loadInstructions, renderInstructions } from "../../src/agent/instructions.ts";
import { systemPrompt } from "../../src/agent/prompt.ts";

function tree() {
  const base = mkdtempSync(join(tmpdir(), "lethe-instr-"));
  const home = join(base, "home");
  const outer = join(base, "outer");
  const repo = join(outer, "repo");
  const ws = join(repo, "packages", "app");
  mkdirSync(join(home, ".lethe"), { recursive: true });
  mkdirSync(ws, { recursive: true });
  mkdirSync(join(repo, ".git"));
  return { base, home, outer, repo, ws, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

test("order: the user's file, then the repository root down to the workspace; nothing above the repository root", () => {
  const t = tree();
  try {
    writeFileSync(join(t.home, ".lethe", "AGENTS.md"), "user rule");
    writeFileSync(join(t.outer, "AGENTS.md"), "outside the repository");
    writeFileSync(join(t.repo, "CLAUDE.md"), "repo claude rule");
    writeFileSync(join(t.repo, "AGENTS.md"), "repo agents rule");
    writeFileSync(join(t.ws, "AGENTS.md"), "workspace rule");
    const r = loadInstructions(t.ws, t.home);
    assert.deepEqual(r.files.map((f) => f.text), ["user rule", "repo agents rule", "repo claude rule", "workspace rule"]);
    assert.deepEqual(r.warnings, []);
    const text = renderInstructions(r.files, t.ws);
    assert.ok(text.indexOf("user rule") < text.indexOf("workspace rule"));
    assert.match(text, /file="~\/\.lethe\/AGENTS\.md"/);
    assert.match(text, /file="\.\.\/\.\.\/AGENTS\.md"/);
    assert.match(systemPrompt({ workspace: t.ws, instructions: text }), /<project-instructions>[\s\S]*workspace rule[\s\S]*<\/project-instructions>$/);
  } finally {
    t.cleanup();
  }
});

test("without a repository only the workspace's own files are read", () => {
  const t = tree();
  try {
    rmSync(join(t.repo, ".git"), { recursive: true });
    writeFileSync(join(t.repo, "AGENTS.md"), "parent rule");
    writeFileSync(join(t.ws, "CLAUDE.md"), "workspace rule");
    assert.deepEqual(loadInstructions(t.ws, t.home).files.map((f) => f.text), ["workspace rule"]);
  } finally {
    t.cleanup();
  }
});

test("caps per file and in total, with a warning naming the file; unreadable, binary, folder and looping files are skipped with a warning", () => {
  const t = tree();
  try {
    writeFileSync(join(t.repo, "AGENTS.md"), "a".repeat(MAX_FILE_CHARS + 10));
    writeFileSync(join(t.repo, "CLAUDE.md"), "b".repeat(MAX_FILE_CHARS + 10));
    writeFileSync(join(t.ws, "AGENTS.md"), "c".repeat(100));
    let r = loadInstructions(t.ws, t.home);
    assert.equal(r.files[0]!.text.length, MAX_FILE_CHARS);
    assert.ok(r.files[0]!.truncated);
    assert.equal(r.files.reduce((n, f) => n + f.text.length, 0), MAX_TOTAL_CHARS);
    assert.ok(r.warnings.some((w) => w.includes(join(t.repo, "AGENTS.md")) && /cut to/.test(w)));
    assert.ok(r.warnings.some((w) => w.includes(join(t.ws, "AGENTS.md")) && /skipped/.test(w)));

    writeFileSync(join(t.repo, "AGENTS.md"), Buffer.from([0x41, 0, 0x42]));
    rmSync(join(t.repo, "CLAUDE.md"));
    mkdirSync(join(t.repo, "CLAUDE.md"));
    rmSync(join(t.ws, "AGENTS.md"));
    symlinkSync(join(t.ws, "AGENTS.md"), join(t.ws, "AGENTS.md"));
    r = loadInstructions(t.ws, t.home);
    assert.deepEqual(r.files, []);
    assert.equal(r.warnings.length, 3, r.warnings.join("\n"));
    assert.match(r.warnings.join("\n"), /not a text file[\s\S]*not a regular file[\s\S]*symlink loop/);
  } finally {
    t.cleanup();
  }
});
