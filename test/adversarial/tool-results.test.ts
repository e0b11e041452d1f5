// Issue 9, data: tool-result files are unique per id and bounded in length; a full disk never
// publishes a partial file, and the marker never claims a file that is not there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createEngine } from "../../src/engine/index.ts";
import type { Message } from "../../src/messages/types.ts";
import { recall } from "../../src/session/recall.ts";
import { type WriteIO, createFileStore, resultFileName, writeFileAtomic } from "../../src/session/tool-results.ts";
import * as fs from "node:fs";

const realIO: WriteIO = { openSync: fs.openSync, writeSync: (fd, b, o, l) => fs.writeSync(fd, b, o, l), fsyncSync: fs.fsyncSync, closeSync: fs.closeSync, renameSync: fs.renameSync, unlinkSync: fs.unlinkSync };

function tmp() {
  const dir = mkdtempSync(join(tmpdir(), "lethe-adv-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test("ids that differ only in unsafe characters get different files; recall returns each one's own output; long ids are bounded", () => {
  const t = tmp();
  try {
    const store = createFileStore(join(t.dir, "tool-results"));
    const ids = ["call:1", "call_1", "call/1", "../call 1", "x".repeat(300), "toolu_01ABC"];
    const paths = ids.map((id, i) => store.save(id, `output number ${i} for ${id}`));
    assert.equal(new Set(paths).size, ids.length, paths.join("\n"));
    for (const p of paths) assert.ok(Buffer.byteLength(basename(p)) <= 100, basename(p));
    assert.equal(basename(paths[5]!), "toolu_01ABC.txt", "safe ids keep their plain name");
    ids.forEach((id, i) => assert.equal(readFileSync(paths[i]!, "utf8"), `output number ${i} for ${id}`));
    for (const [i, id] of ids.entries()) {
      const r = recall(t.dir, { id });
      assert.ok(!("kind" in r && r.kind === "error"), JSON.stringify(r));
      assert.match(JSON.stringify(r), new RegExp(`output number ${i} for`), id);
    }
    assert.notEqual(resultFileName("call:1"), resultFileName("call_1"));
  } finally {
    t.cleanup();
  }
});

test("prepare with a 300-character tool_use id does not throw (no ENAMETOOLONG)", () => {
  const t = tmp();
  try {
    const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, sessionDir: t.dir });
    const id = `toolu_${"z".repeat(294)}`;
    const history: Message[] = [
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", content: [{ type: "tool_use", id, name: "bash", input: { command: "cat big" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "row of data\n".repeat(8_000) }] },
    ];
    const r = engine.prepare(history);
    assert.ok(r.events.some((e) => e.kind === "budget"));
    assert.equal(readdirSync(join(t.dir, "tool-results")).length, 1);
  } finally {
    t.cleanup();
  }
});

test("full disk: a short write is continued; a failing write throws, leaves no partial file and no temp file", () => {
  const t = tmp();
  try {
    const data = "é0123456789".repeat(10_000);
    // Short writes: at most 777 bytes per call.
    writeFileAtomic(join(t.dir, "short.txt"), data, {}, { ...realIO, writeSync: (fd, b, o, l) => fs.writeSync(fd, b, o, Math.min(l, 777)) });
    assert.equal(readFileSync(join(t.dir, "short.txt"), "utf8"), data);
    // ENOSPC after 4 KB.
    let written = 0;
    const full: WriteIO = {
      ...realIO,
      writeSync: (fd, b, o, l) => {
        if (written >= 4096) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
        const n = fs.writeSync(fd, b, o, Math.min(l, 4096 - written));
        written += n;
        return n;
      },
    };
    assert.throws(() => writeFileAtomic(join(t.dir, "full.txt"), data, {}, full), /ENOSPC/);
    assert.equal(existsSync(join(t.dir, "full.txt")), false);
    assert.deepEqual(readdirSync(t.dir), ["short.txt"], "no temp file left behind");
  } finally {
    t.cleanup();
  }
});

test("full disk in the budget layer: the marker says the result could not be saved and points to the transcript, never to a truncated file", () => {
  const t = tmp();
  try {
    const io: WriteIO = { ...realIO, writeSync: () => { throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }); } };
    const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 4_000, store: createFileStore(join(t.dir, "tool-results"), { io }), transcriptHoldsHistory: true });
    const history: Message[] = [
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "bash", input: { command: "cat big" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "row of data\n".repeat(8_000) }] },
    ];
    const r = engine.prepare(history);
    const marker = JSON.stringify(r.history.at(-1));
    assert.match(marker, /could not be saved to disk \(ENOSPC/);
    assert.match(marker, /stays in the session transcript: recall \\"toolu_1\\"/);
    assert.doesNotMatch(marker, /saved at/);
    assert.deepEqual(readdirSync(join(t.dir, "tool-results")), []);
  } finally {
    t.cleanup();
  }
});
