// Issue 12: the viewer in a real browser (Debian's chromium, driven by playwright-core; .ci/run
// installs it), on a session an end-to-end CLI run produced against the fake server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startViewer } from "../../src/cli/view/server.ts";
import { sessionPaths } from "../../src/session/paths.ts";
import { startFakeAnthropic } from "../support/fakes/anthropic.ts";
import { cliEnv, isSummaryRequest, makeWorkspace, onlySession, runCli } from "./support.ts";

export const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
const NEEDLE = "needle-only-in-an-archived-result-4b1d";
const STEPS = 30;

function script() {
  let n = 0;
  return (body: any) => {
    if (isSummaryRequest(body)) return { text: "<summary>\n1. Goal — print the rows.\n8. Current work — batch after batch.\n9. Next step — the next batch.\n</summary>" };
    n++;
    if (n > STEPS) return { text: `Done: printed ${STEPS} batches.` };
    // Step 15: the model compacts on its own (the compact tool: a manual compaction).
    if (n === 15) return { text: "Compacting before the next batches.", toolUses: [{ name: "compact", input: { focus: "the batches printed so far" } }] };
    // Step 3 prints a huge log with the needle deep inside: budget archives it.
    const command = n === 3 ? `for i in $(seq 1 2500); do echo "log line $i: nothing to see"; done; echo ${NEEDLE}` : `seq 1 110 | awk '{print "batch ${n} row " $1 ": value=" ($1*7919)%10007}'`;
    return { text: `Batch ${n}.`, toolUses: [{ name: "bash", input: { command } }] };
  };
}

test("viewer in chromium: every boundary in a chart marker, no request fails, a summary opens to its removed items and text, search finds an archived result; screenshots", { timeout: 180_000 }, async () => {
  assert.ok(CHROMIUM, "chromium is installed (.ci/run installs Debian's chromium package)");
  const fake = await startFakeAnthropic({ script: script(), contextWindow: 16_000 });
  // micro off: at 16k it would keep this session under the threshold, and the page must show a summary.
  const ws = makeWorkspace({ compaction: { micro: { enabled: false } } });
  const shots = process.env.LETHE_SCREENSHOTS ?? join(ws.dir, "screenshots");
  mkdirSync(shots, { recursive: true });
  try {
    const r = await runCli(["--provider", "anthropic", "--base-url", fake.url, "--model", "claude-sonnet-4-6", "--context-window", "16000", "--max-output-tokens", "2000", "--yes", "--cwd", ws.dir, "-p", "Print every batch of rows."], { env: cliEnv(ws, { ANTHROPIC_API_KEY: "k" }) });
    assert.equal(r.code, 0, r.stderr);
    const s = onlySession(ws);
    const boundaries = s.transcript.entries.filter((e) => e.type === "boundary") as any[];
    const kinds = new Set(boundaries.map((b) => b.kind));
    assert.ok(kinds.size >= 3, `compactions of at least three kinds: ${[...kinds]}`);

    const viewer = await startViewer(sessionPaths(ws.dir, s.id));
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      const external: string[] = [];
      page.on("request", (q) => {
        if (!q.url().startsWith(viewer.url)) external.push(q.url());
      });
      // Every request the page makes succeeds (as the server answered it, and as the page saw it).
      const failed: string[] = [];
      viewer.server.on("request", (req, res) => res.on("finish", () => res.statusCode >= 400 && failed.push(`${req.url} ${res.statusCode}`)));
      page.on("requestfailed", (q) => failed.push(`${q.url()} failed`));
      // The page runs under its Content-Security-Policy without tripping it.
      const violations: string[] = [];
      page.on("console", (m) => {
        if (/Content.Security.Policy|Refused to/i.test(m.text())) violations.push(m.text());
      });
      page.on("pageerror", (e) => violations.push(`page error: ${e.message}`));
      await page.addInitScript(`document.addEventListener("securitypolicyviolation", (e) => console.error("Content-Security-Policy: " + e.violatedDirective + " " + e.blockedURI));`);
      const response = await page.goto(viewer.url);
      assert.match((await response?.allHeaders())?.["content-security-policy"] ?? "", /default-src 'none'/);
      await page.waitForSelector("body[data-ready='1']");
      assert.deepEqual(external, [], "nothing loaded from outside");
      // Markers as drawn: [x, compactions merged into it]; every boundary is in one.
      const markers: [number, number][] = JSON.parse((await page.getAttribute("#chart", "data-markers")) ?? "[]");
      assert.equal(markers.reduce((a, [, n]) => a + n, 0), boundaries.length, "every boundary in a marker");
      assert.ok(await page.$("#chart canvas"), "the chart is drawn");
      await page.screenshot({ path: join(shots, "overview.png") });

      // Open a summary compaction: what it removed, what it kept, the summary.
      const summary = boundaries.findIndex((b) => b.kind === "summarize");
      await page.click(`#compactions button:nth-child(${summary + 1})`);
      await page.waitForSelector("#detail .summary");
      assert.match((await page.textContent("#detail .summary")) ?? "", /Goal — print the rows/);
      assert.ok((await page.$$("#detail ul.removed li")).length > 0, "removed items listed");
      assert.match((await page.textContent("#detail")) ?? "", /Kept/);
      await page.screenshot({ path: join(shots, "summary.png") });

      // Search for a string that only an archived tool result holds.
      await page.fill("#q", NEEDLE);
      await page.waitForSelector("#hits .hit");
      const hits = await page.$$eval("#hits .hit", (xs) => xs.map((x) => x.textContent ?? ""));
      assert.ok(hits.some((h) => h.includes(NEEDLE)), hits.join("\n"));
      await page.screenshot({ path: join(shots, "search.png") });
      assert.deepEqual(violations, [], "no CSP violations, no page errors");
      assert.deepEqual(failed, [], "no request failed");
    } finally {
      await browser.close();
      await viewer.close();
    }
  } finally {
    await fake.close();
    if (!process.env.LETHE_SCREENSHOTS) ws.cleanup();
  }
});
