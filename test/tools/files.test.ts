// read_file, write_file, edit_file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { replacementDiff } from "../../src/tools/diff.ts";
import { READ_MAX_OUTPUT_CHARS } from "../../src/tools/read-file.ts";
import { fixture, text } from "./helpers.ts";

const numbered = (n: number, s: string) => `${String(n).padStart(6)}\t${s}`;

test("read_file: line numbers, offset/limit, continuation note, long lines cut, CRLF", async () => {
  const f = fixture();
  try {
    f.write("ten.txt", Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
    const all = await f.call("read_file", { path: "ten.txt" });
    assert.equal(all.isError, undefined);
    assert.equal(text(all), Array.from({ length: 10 }, (_, i) => numbered(i + 1, `line ${i + 1}`)).join("\n"));

    const part = await f.call("read_file", { path: "ten.txt", offset: 4, limit: 3 });
    assert.equal(text(part), [numbered(4, "line 4"), numbered(5, "line 5"), numbered(6, "line 6"), "[showing lines 4–6 of 10; continue with offset 7]"].join("\n"));

    const past = await f.call("read_file", { path: "ten.txt", offset: 50 });
    assert.equal(past.isError, true);
    assert.match(text(past), /offset 50 is past the end of ten\.txt \(10 lines\)/);

    f.write("long.txt", `short\n${"x".repeat(5_000)}\nend\n`);
    const long = text(await f.call("read_file", { path: "long.txt" }));
    assert.match(long, /x{2000}… \[line cut: 5,000 chars\]/);
    assert.ok(!long.includes("x".repeat(2_001)));
    assert.match(long, /1 line\(s\) longer than 2,000 chars were cut/);
    assert.match(long, /\t end$|\tend\n/);

    f.write("crlf.txt", "a\r\nb\r\n");
    assert.equal(text(await f.call("read_file", { path: "crlf.txt" })), [numbered(1, "a"), numbered(2, "b")].join("\n"));

    f.write("empty.txt", "");
    assert.match(text(await f.call("read_file", { path: "empty.txt" })), /empty \(0 bytes\)/);
  } finally {
    f.cleanup();
  }
});

test("read_file: one call returns a bounded amount even for a huge file", async () => {
  const f = fixture();
  try {
    const line = "y".repeat(1_500);
    f.write("big.txt", `${Array.from({ length: 5_000 }, () => line).join("\n")}\n`);
    const r = text(await f.call("read_file", { path: "big.txt" }));
    assert.ok(r.length <= READ_MAX_OUTPUT_CHARS + 500, `${r.length} chars`);
    const m = /\[showing lines 1–(\d+) of 5,000 \(the 100,000-char bound of one call was reached\); continue with offset (\d+)\]/.exec(r);
    assert.ok(m, r.slice(-300));
    assert.equal(Number(m[2]), Number(m[1]) + 1);
    const next = text(await f.call("read_file", { path: "big.txt", offset: Number(m[2]), limit: 2 }));
    assert.ok(next.startsWith(numbered(Number(m[2]), line)));
  } finally {
    f.cleanup();
  }
});

test("read_file: unchanged-since-last-read stub, only for the same range and same file state", async () => {
  const f = fixture();
  try {
    const p = f.write("a.txt", "one\ntwo\n");
    const first = await f.call("read_file", { path: "a.txt" });
    assert.match(text(first), /one/);
    const again = await f.call("read_file", { path: "a.txt" });
    assert.equal(again.isError, undefined);
    assert.match(text(again), /unchanged since your last read/);
    assert.doesNotMatch(text(again), /one/);
    // Another range is read for real.
    assert.equal(text(await f.call("read_file", { path: "a.txt", offset: 2 })), numbered(2, "two"));
    // A changed file is read for real.
    await f.call("read_file", { path: "a.txt" });
    writeFileSync(p, "one\ntwo\nthree\n");
    assert.match(text(await f.call("read_file", { path: "a.txt" })), /three/);
    // Same size but a new modification time: read for real.
    writeFileSync(p, "ONE\ntwo\nthree\n");
    const t = statSync(p).mtime;
    const { utimesSync } = await import("node:fs");
    utimesSync(p, t, new Date(t.getTime() + 5_000));
    assert.match(text(await f.call("read_file", { path: "a.txt" })), /ONE/);
    // An edit forgets the earlier read; the next read shows the new text.
    await f.call("edit_file", { path: "a.txt", old_string: "ONE", new_string: "uno" });
    assert.match(text(await f.call("read_file", { path: "a.txt" })), /uno/);
    // A file the model wrote itself counts as read.
    await f.call("write_file", { path: "b.txt", content: "fresh\n" });
    assert.match(text(await f.call("read_file", { path: "b.txt" })), /unchanged since your last read/);
    // A fresh context (e.g. after compaction the host clears readState) reads for real.
    assert.match(text(await f.call("read_file", { path: "b.txt" }, { readState: new Map() })), /fresh/);
  } finally {
    f.cleanup();
  }
});

test("read_file: binary files and images are refused with size and type; directories point to glob", async () => {
  const f = fixture();
  try {
    f.write("blob.bin", Buffer.from([0x01, 0x02, 0x00, 0x03, ...Buffer.from("some text")]));
    const bin = await f.call("read_file", { path: "blob.bin" });
    assert.equal(bin.isError, true);
    assert.match(text(bin), /blob\.bin is a binary file \(binary data \(contains NUL bytes\), 13 bytes\)/);

    f.write("latin.dat", Buffer.from(Array.from({ length: 400 }, (_, i) => 0x80 + (i % 100))));
    assert.match(text(await f.call("read_file", { path: "latin.dat" })), /binary file \(binary data \(not valid UTF-8 text\), 400 bytes\)/);

    f.write("pic.png", Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2_000, 1)]));
    const png = await f.call("read_file", { path: "pic.png" });
    assert.equal(png.isError, true);
    assert.match(text(png), /pic\.png is an image \(PNG image, 2\.0 KB \(2,008 bytes\)\)/);

    f.write("elf", Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), Buffer.alloc(100)]));
    assert.match(text(await f.call("read_file", { path: "elf" })), /ELF executable/);

    // UTF-8 text with multi-byte characters is text.
    f.write("utf8.txt", "héllo wörld 日本語 🎉\n".repeat(1_000));
    assert.match(text(await f.call("read_file", { path: "utf8.txt", limit: 1 })), /日本語 🎉/);

    f.write("dir/x.txt", "x");
    const dir = await f.call("read_file", { path: "dir" });
    assert.equal(dir.isError, true);
    assert.match(text(dir), /dir is a directory.*use glob/);

    f.write("Readme.md", "x");
    assert.match(text(await f.call("read_file", { path: "README.md" })), /does not exist; similar names in that folder: Readme\.md/);
  } finally {
    f.cleanup();
  }
});

test("write_file: creates parent folders, reports lines and bytes, overwrites atomically, keeps the mode", async () => {
  const f = fixture();
  try {
    const r = await f.call("write_file", { path: "deep/er/new.txt", content: "a\nb\nc\n" });
    assert.equal(r.isError, undefined);
    assert.equal(text(r), "Wrote 3 lines (6 bytes) to deep/er/new.txt (new file).");
    assert.equal(readFileSync(join(f.ws, "deep/er/new.txt"), "utf8"), "a\nb\nc\n");

    const p = f.write("script.sh", "#!/bin/sh\necho old\n");
    chmodSync(p, 0o755);
    const o = await f.call("write_file", { path: "script.sh", content: "#!/bin/sh\necho new — ünïcode\n" });
    assert.match(text(o), /^Wrote 2 lines \(\d+ bytes\) to script\.sh \(replaced the previous 19 bytes\)\.$/);
    assert.equal(statSync(p).mode & 0o777, 0o755);
    assert.equal(readFileSync(p, "utf8"), "#!/bin/sh\necho new — ünïcode\n");
    // No temp files left behind.
    assert.deepEqual(readdirSync(f.ws).sort(), ["deep", "script.sh"]);

    const d = await f.call("write_file", { path: "deep", content: "x" });
    assert.equal(d.isError, true);
    assert.match(text(d), /deep is a directory/);
  } finally {
    f.cleanup();
  }
});

test("write_file asks permission with the content; a refusal writes nothing", async () => {
  const f = fixture();
  try {
    const asked: { tool: string; summary: string; detail?: string }[] = [];
    const r = await f.call("write_file", { path: "x.txt", content: "hello\n" }, {
      askPermission: async (q) => {
        asked.push(q);
        return false;
      },
    });
    assert.equal(r.isError, true);
    assert.match(text(r), /denied permission to write x\.txt/);
    assert.deepEqual(asked.map(({ tool, summary, detail }) => ({ tool, summary, detail })), [{ tool: "write_file", summary: "Create x.txt (1 lines, 6 bytes)", detail: "hello\n" }]);
    assert.equal((asked[0] as { input?: { path?: string } }).input?.path, "x.txt");
    assert.ok(!existsSync(join(f.ws, "x.txt")));
  } finally {
    f.cleanup();
  }
});

test("edit_file: a unique exact match is replaced and the result shows a diff", async () => {
  const f = fixture();
  try {
    const src = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    const p = f.write("f.txt", src);
    const r = await f.call("edit_file", { path: "f.txt", old_string: "line 10\n", new_string: "LINE TEN\nextra\n" });
    assert.equal(r.isError, undefined, text(r));
    assert.equal(
      text(r),
      [
        "Edited f.txt: 1 replacement (−1 +2 lines).",
        "@@ -7,7 +7,8 @@",
        " line 7",
        " line 8",
        " line 9",
        "-line 10",
        "+LINE TEN",
        "+extra",
        " line 11",
        " line 12",
        " line 13",
      ].join("\n"),
    );
    assert.equal(readFileSync(p, "utf8"), src.replace("line 10\n", "LINE TEN\nextra\n"));
    // "$&" and friends are inserted literally.
    await f.call("edit_file", { path: "f.txt", old_string: "line 3\n", new_string: "cost $& $1 $$\n" });
    assert.match(readFileSync(p, "utf8"), /^cost \$& \$1 \$\$$/m);
    assert.deepEqual(readdirSync(f.ws), ["f.txt"], "no temp files left");
  } finally {
    f.cleanup();
  }
});

test("edit_file: a non-unique match is refused with the count and lines; replace_all replaces every one", async () => {
  const f = fixture();
  try {
    const p = f.write("dup.ts", "let a = 1;\nfoo();\nlet b = 2;\nfoo();\nfoo();\n");
    const r = await f.call("edit_file", { path: "dup.ts", old_string: "foo();", new_string: "bar();" });
    assert.equal(r.isError, true);
    assert.equal(text(r), "old_string occurs 3 times in dup.ts (lines 2, 4, 5); include more surrounding context to make it unique, or set replace_all to true to replace every occurrence.");
    assert.equal(readFileSync(p, "utf8"), "let a = 1;\nfoo();\nlet b = 2;\nfoo();\nfoo();\n", "file untouched");

    const all = await f.call("edit_file", { path: "dup.ts", old_string: "foo();", new_string: "bar();", replace_all: true });
    assert.equal(all.isError, undefined);
    assert.match(text(all), /^Edited dup\.ts: 3 replacements \(−3 \+3 lines\)\./);
    assert.match(text(all), /^-foo\(\);\n\+bar\(\);$/m);
    assert.equal(readFileSync(p, "utf8"), "let a = 1;\nbar();\nlet b = 2;\nbar();\nbar();\n");
  } finally {
    f.cleanup();
  }
});

test("edit_file: not found, identical strings, line-number prefixes, CRLF files, permission", async () => {
  const f = fixture();
  try {
    f.write("a.txt", "  indented\nplain\n");
    const nf = await f.call("edit_file", { path: "a.txt", old_string: "missing", new_string: "x" });
    assert.equal(nf.isError, true);
    assert.match(text(nf), /old_string was not found in a\.txt/);
    assert.match(text(await f.call("edit_file", { path: "a.txt", old_string: "     1\t  indented", new_string: "x" })), /line-number prefixes/);
    assert.match(text(await f.call("edit_file", { path: "a.txt", old_string: "plain", new_string: "plain" })), /identical/);
    assert.match(text(await f.call("edit_file", { path: "a.txt", old_string: "", new_string: "x" })), /old_string is empty/);

    const crlf = f.write("win.txt", "one\r\ntwo\r\nthree\r\n");
    const w = await f.call("edit_file", { path: "win.txt", old_string: "one\ntwo", new_string: "uno\ndos" });
    assert.equal(w.isError, undefined, text(w));
    assert.equal(readFileSync(crlf, "utf8"), "uno\r\ndos\r\nthree\r\n");

    const asked: string[] = [];
    const d = await f.call("edit_file", { path: "a.txt", old_string: "plain", new_string: "changed" }, {
      askPermission: async (q) => {
        asked.push(`${q.summary}|${q.detail}`);
        return false;
      },
    });
    assert.equal(d.isError, true);
    assert.deepEqual(asked, ["Edit a.txt (1 replacement)|@@ -1,2 +1,2 @@\n   indented\n-plain\n+changed"]);
    assert.equal(readFileSync(join(f.ws, "a.txt"), "utf8"), "  indented\nplain\n");
  } finally {
    f.cleanup();
  }
});

test("replacementDiff merges nearby changes into one hunk and keeps distant ones apart", () => {
  const before = Array.from({ length: 40 }, (_, i) => `l${i + 1}`).join("\n") + "\n";
  const at = [before.indexOf("l5\n"), before.indexOf("l8\n"), before.indexOf("l30\n")];
  const d = replacementDiff(before, at, "l", "L");
  const hunks = d.text.split("\n").filter((l) => l.startsWith("@@"));
  assert.deepEqual(hunks, ["@@ -2,10 +2,10 @@", "@@ -27,7 +27,7 @@"]);
  assert.equal(d.removed, 3);
  assert.equal(d.added, 3);
  // Two replacements on one line make one changed line.
  const one = replacementDiff("a a\n", [0, 2], "a", "b");
  assert.equal(one.text, "@@ -1,1 +1,1 @@\n-a a\n+b b");
  // Deleting whole lines.
  const del = replacementDiff("x\ny\nz\n", [2], "y\n", "");
  assert.equal(del.text, "@@ -1,3 +1,2 @@\n x\n-y\n z");
});
