// Issue 26: the viewer shows what was steered as its own events: a preview not applied (and one
// that was, marked so), a switch of window, the agent's save turn, and an undo. The session is
// written by the library (engine + transcript), the page read in Debian's chromium.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { chromium } from "playwright-core";
import { createEngine } from "../../src/engine/index.ts";
import { startViewer } from "../../src/cli/view/server.ts";
import { sessionPaths } from "../../src/session/paths.ts";
import { openTranscript } from "../../src/session/transcript.ts";
import { calls, results, said, user } from "../support/build.ts";
import { SUMMARY_REPLY, scriptedClient } from "../support/scripted-client.ts";
import { makeWorkspace } from "./support.ts";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

test("viewer: previews (not applied, then applied), a window switch, a save turn and an undo each show as their own line", { timeout: 120_000 }, async () => {
  assert.ok(CHROMIUM, "chromium is installed (.ci/run installs Debian's chromium package)");
  const ws = makeWorkspace();
  try {
    const paths = sessionPaths(ws.dir, "steer-session");
    mkdirSync(paths.dir, { recursive: true });
    const transcript = openTranscript(paths.transcript, { header: { id: paths.id, cwd: ws.dir } });
    const engine = createEngine({ contextWindow: 200_000, maxOutputTokens: 32_000, sessionDir: paths.dir, transcript, transcriptHoldsHistory: true, summarizer: { client: scriptedClient([SUMMARY_REPLY]), model: "m" }, config: { micro: { enabled: false }, snip: { enabled: false } } });
    const history = [user("Print the rows")];
    for (let i = 0; i < 12; i++) history.push(calls(["bash", { command: `seq ${i} 900` }, `t${i}`]), results([`t${i}`, `row ${i}\n`.repeat(700)]));
    for (const m of history) transcript.appendMessage(m);
    await engine.preview(history, { focus: "the rows" }); // not applied
    await engine.preview(history); // applied below
    const p = await engine.preview(history);
    const c = await engine.compact(history, { preview: p });
    const next = [...c.history, said("Printed."), user("Go on")];
    for (const m of next.slice(-2)) transcript.appendMessage(m);
    engine.setWindow(100_000, 16_000);
    transcript.appendEvent("summary_deferred", { tokens: 90_000, threshold: 80_000 });
    await engine.uncompact(next);
    transcript.close();

    const viewer = await startViewer(paths);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(viewer.url);
      await page.waitForSelector("body[data-ready='1']");
      await page.waitForSelector(".steer");
      const lines = await page.$$eval(".steer", (xs) => xs.map((x) => `${x.getAttribute("data-name")}: ${x.textContent}`));
      const previews = lines.filter((l) => l.startsWith("compact_preview"));
      assert.equal(previews.length, 2, lines.join("\n"));
      assert.match(previews[0]!, /compaction previewed \(focus: the rows\): [\d,]+ → [\d,]+ tokens · not applied/);
      assert.match(previews[1]!, /compaction previewed: [\d,]+ → [\d,]+ tokens · applied/);
      assert.ok(lines.some((l) => /^window_set: .*window switched: 200,000 → 100,000 tokens/.test(l)), lines.join("\n"));
      assert.ok(lines.some((l) => /^summary_deferred: .*a turn to save its state/.test(l)), lines.join("\n"));
      const boundaries = await page.$$eval(".boundary", (xs) => xs.map((x) => x.textContent ?? ""));
      assert.ok(boundaries.some((b) => /manual compaction \(the previewed one\)/.test(b)), boundaries.join("\n"));
      assert.ok(boundaries.some((b) => /uncompact the last manual compaction undone: [\d,]+ → [\d,]+ tokens/.test(b)), boundaries.join("\n"));
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
      await viewer.close();
    }
  } finally {
    ws.cleanup();
  }
});
