// SAFETY acceptance: the file tools never read or write outside the workspace — not through ../,
// absolute paths, a symlink inside pointing out, or a symlinked parent folder.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { SECRET, fixture, text } from "./helpers.ts";

function setup() {
  const f = fixture();
  f.write("inside.txt", "hello inside\n");
  // A symlinked file pointing out, a symlinked folder pointing out, a dangling link pointing out.
  symlinkSync(f.secret, join(f.ws, "link.txt"));
  symlinkSync(f.outside, join(f.ws, "linkdir"));
  symlinkSync(join(f.outside, "not-yet.txt"), join(f.ws, "dangling.txt"));
  // A symlink that stays inside: allowed.
  symlinkSync(join(f.ws, "inside.txt"), join(f.ws, "inner-link.txt"));
  return f;
}

function refused(o: { content: unknown; isError?: boolean }, label: string) {
  assert.equal(o.isError, true, `${label}: expected an error, got ${text(o as never)}`);
  assert.match(text(o as never), /outside the workspace/, label);
  assert.ok(!text(o as never).includes("TOP-SECRET"), `${label}: leaked the secret`);
  assert.ok(!text(o as never).includes("\n"), `${label}: one line`);
}

test("read_file refuses ../, absolute paths, symlinks out and symlinked parents; allows inside paths", async () => {
  const f = setup();
  try {
    refused(await f.call("read_file", { path: "../outside/secret.txt" }), "../");
    refused(await f.call("read_file", { path: "sub/../../outside/secret.txt" }), "nested ../");
    refused(await f.call("read_file", { path: f.secret }), "absolute");
    refused(await f.call("read_file", { path: "/etc/passwd" }), "absolute system file");
    refused(await f.call("read_file", { path: "link.txt" }), "symlink to a file outside");
    refused(await f.call("read_file", { path: "linkdir/secret.txt" }), "symlinked parent folder");
    refused(await f.call("read_file", { path: join(f.ws, "linkdir", "secret.txt") }), "absolute through symlinked parent");
    const link = await f.call("read_file", { path: "link.txt" });
    assert.match(text(link), /symbolic link/);

    // Controls: inside paths work, relative, absolute and through an inside symlink.
    assert.match(text(await f.call("read_file", { path: "inside.txt" })), /hello inside/);
    assert.match(text(await f.call("read_file", { path: join(f.ws, "inside.txt"), offset: 1, limit: 10 })), /hello inside/);
    assert.match(text(await f.call("read_file", { path: "inner-link.txt" })), /hello inside/);
  } finally {
    f.cleanup();
  }
});

test("write_file refuses every way out and creates nothing outside", async () => {
  const f = setup();
  try {
    refused(await f.call("write_file", { path: "../outside/evil.txt", content: "x" }), "../");
    refused(await f.call("write_file", { path: join(f.outside, "evil2.txt"), content: "x" }), "absolute");
    refused(await f.call("write_file", { path: "link.txt", content: "overwritten" }), "symlink to a file outside");
    refused(await f.call("write_file", { path: "dangling.txt", content: "x" }), "dangling symlink pointing outside");
    refused(await f.call("write_file", { path: "linkdir/evil3.txt", content: "x" }), "symlinked parent folder");
    refused(await f.call("write_file", { path: "linkdir/deep/er/evil4.txt", content: "x" }), "new folders under a symlinked parent");
    assert.equal(readFileSync(f.secret, "utf8"), SECRET);
    assert.deepEqual(readdirSync(f.outside).sort(), ["secret.txt"]);
    assert.ok(!existsSync(join(f.top, "evil.txt")));

    // Control: writing inside works, also through an inside symlink (the target changes).
    const ok = await f.call("write_file", { path: "inner-link.txt", content: "rewritten\n" });
    assert.equal(ok.isError, undefined, text(ok));
    assert.equal(readFileSync(join(f.ws, "inside.txt"), "utf8"), "rewritten\n");
  } finally {
    f.cleanup();
  }
});

test("edit_file refuses files outside, through ../, absolute paths and symlinks", async () => {
  const f = setup();
  try {
    const edit = { old_string: "TOP-SECRET", new_string: "PWNED" };
    refused(await f.call("edit_file", { path: "../outside/secret.txt", ...edit }), "../");
    refused(await f.call("edit_file", { path: f.secret, ...edit }), "absolute");
    refused(await f.call("edit_file", { path: "link.txt", ...edit }), "symlink to a file outside");
    refused(await f.call("edit_file", { path: "linkdir/secret.txt", ...edit }), "symlinked parent folder");
    assert.equal(readFileSync(f.secret, "utf8"), SECRET);
  } finally {
    f.cleanup();
  }
});

test("glob and grep refuse path arguments and patterns outside, and never walk out through symlinks", async () => {
  const f = setup();
  try {
    mkdirSync(join(f.ws, "src"));
    f.write("src/a.txt", "needle here\n");

    refused(await f.call("glob", { pattern: "*", path: ".." }), "glob path ..");
    refused(await f.call("glob", { pattern: "*", path: f.outside }), "glob absolute path");
    refused(await f.call("glob", { pattern: "*", path: "linkdir" }), "glob symlinked folder");
    refused(await f.call("glob", { pattern: "../outside/*" }), "glob pattern ../");
    refused(await f.call("glob", { pattern: `${f.outside}/*.txt` }), "glob absolute pattern");
    refused(await f.call("glob", { pattern: "{src,../outside}/*.txt" }), "glob brace alternative going out");

    refused(await f.call("grep", { pattern: "SECRET", path: ".." }), "grep path ..");
    refused(await f.call("grep", { pattern: "SECRET", path: f.secret }), "grep absolute file");
    refused(await f.call("grep", { pattern: "SECRET", path: "link.txt" }), "grep symlinked file");
    refused(await f.call("grep", { pattern: "SECRET", path: "linkdir" }), "grep symlinked folder");

    // A whole-workspace search finds nothing outside: linkdir is not followed, link.txt is skipped.
    const all = await f.call("glob", { pattern: "**/*" });
    assert.ok(!text(all).includes("secret.txt"), text(all));
    assert.ok(!/^link\.txt$/m.test(text(all)), text(all));
    assert.match(text(all), /^src\/a\.txt$/m);
    assert.match(text(all), /^inner-link\.txt$/m, "an inside symlink is listed");
    for (const mode of ["content", "files_with_matches", "count"]) {
      const g = await f.call("grep", { pattern: "SECRET", output_mode: mode });
      assert.ok(!text(g).includes("TOP-SECRET"), text(g));
      assert.match(text(g), /^No matches/, text(g));
    }
    // Control: grep inside works.
    assert.match(text(await f.call("grep", { pattern: "needle", output_mode: "content" })), /^src\/a\.txt:1:needle here$/m);
  } finally {
    f.cleanup();
  }
});
