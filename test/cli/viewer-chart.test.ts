// Issue 25, item 9: the viewer's chart and times in chromium, on a session of 760 compactions whose
// requests all report about the same input tokens (the peaks are seen only in the compactions):
// each compaction is plotted as its drop, the markers stay readable (merged with counts; drag to
// zoom, reset), the x axis has whole request numbers only, times are local, no request fails.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type Page, chromium } from "playwright-core";
import { type Viewer, startViewer } from "../../src/cli/view/server.ts";
import { sessionPaths } from "../../src/session/paths.ts";
import { makeWorkspace } from "./support.ts";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
const KINDS = ["budget", "snip", "micro", "summarize", "reactive", "manual"];
const START = Date.UTC(2026, 0, 1, 0, 0, 0);

interface Fixture {
  /** Per request, its input tokens; per compaction, the requests before it, its tokens and ts. */
  requests: number[];
  boundaries: { after: number; before: number; after_tokens: number; ts: string }[];
}

/** A session of `compactions` compactions: 0, 1, 2 or 3 between two requests. */
function writeSession(dir: string, id: string, compactions: number): Fixture {
  const s = join(dir, ".lethe", "sessions", id);
  mkdirSync(join(s, "tool-results"), { recursive: true });
  const lines: unknown[] = [{ type: "session", id, cwd: dir, created: new Date(START).toISOString(), version: 1 }];
  const fx: Fixture = { requests: [], boundaries: [] };
  for (let k = 0; fx.boundaries.length < compactions || k < 3; k++) {
    const ts = (s: number) => new Date(START + (k * 60 + s) * 1000).toISOString();
    lines.push({ type: "message", uuid: `m${k}`, ts: ts(1), message: { role: "user", content: `step ${k}` } });
    const tokens = 50_000 + (k % 4) * 100;
    fx.requests.push(tokens);
    lines.push({ type: "event", ts: ts(2), name: "request", input_tokens: tokens, threshold: 80_000, context_window: 100_000, cost_usd: 0.01 });
    for (let j = 0; j < [1, 0, 2, 3][k % 4]! && fx.boundaries.length < compactions; j++) {
      const b = { after: k + 1, before: 90_000 + j * 1_000 + (k % 10), after_tokens: 50_000 + j * 10, ts: ts(3 + j) };
      fx.boundaries.push(b);
      lines.push({ type: "boundary", ts: b.ts, kind: KINDS[fx.boundaries.length % KINDS.length], tokens_before: b.before, tokens_after: b.after_tokens });
    }
  }
  writeFileSync(join(s, "transcript.jsonl"), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  return fx;
}

/** A viewer and a page on it (German, in Tokyo), every request's status recorded on the server. */
async function open(ws: string, id: string, browser: Browser): Promise<{ viewer: Viewer; page: Page; failed: string[] }> {
  const viewer = await startViewer(sessionPaths(ws, id));
  const failed: string[] = [];
  viewer.server.on("request", (req, res) => res.on("finish", () => res.statusCode >= 400 && failed.push(`${req.url} ${res.statusCode}`)));
  const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 }, locale: "de-DE", timezoneId: "Asia/Tokyo" })).newPage();
  page.on("requestfailed", (q) => failed.push(`${q.url()} failed`));
  page.on("response", (r) => r.status() >= 400 && failed.push(`${r.url()} ${r.status()}`));
  page.on("console", (m) => m.type() === "error" && failed.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => failed.push(`page error: ${e.message}`));
  await page.goto(viewer.url);
  await page.waitForSelector("body[data-ready='1']");
  return { viewer, page, failed };
}

const markers = async (page: Page): Promise<[number, number][]> => JSON.parse((await page.getAttribute("#chart", "data-markers")) ?? "null");
const xticks = async (page: Page): Promise<string[]> => JSON.parse((await page.getAttribute("#chart", "data-xticks")) ?? "null");
// (The test has no DOM types: what runs in the page takes `any`.)
const xScale = (page: Page) => page.$eval("#chart", (el: any) => ({ min: el.uplot.scales.x.min as number, max: el.uplot.scales.x.max as number, width: el.uplot.bbox.width / (globalThis as any).devicePixelRatio }));

let browser: Browser;
let ws: ReturnType<typeof makeWorkspace>;
let fx: Fixture;
let big: Awaited<ReturnType<typeof open>>;
before(async () => {
  assert.ok(CHROMIUM, "chromium is installed (.ci/run installs Debian's chromium package)");
  ws = makeWorkspace();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  fx = writeSession(ws.dir, "20260101-000000-chart1", 760);
  big = await open(ws.dir, "20260101-000000-chart1", browser);
});
after(async () => {
  await big?.viewer.close();
  await browser?.close();
  ws?.cleanup();
});

test("each compaction is plotted as its drop: tokens before, then after, at one x between its two requests; the peaks are in range", async () => {
  const drawn = await big.page.$eval("#chart", (el: any) => ({ x: el.uplot.data[0] as number[], y: el.uplot.data[1] as number[], yMax: el.uplot.scales.y.max as number }));
  const expected: number[] = [];
  let b = 0;
  fx.requests.forEach((tokens, r) => {
    expected.push(tokens);
    for (; b < fx.boundaries.length && fx.boundaries[b]!.after === r + 1; b++) expected.push(fx.boundaries[b]!.before, fx.boundaries[b]!.after_tokens);
  });
  assert.deepEqual(drawn.y, expected, "requests and drops in transcript order");
  assert.deepEqual(drawn.x.filter((x) => Number.isInteger(x)), fx.requests.map((_, r) => r + 1), "request k at x = k");
  for (let j = 0; j < drawn.x.length; j++) {
    if (Number.isInteger(drawn.x[j])) continue;
    assert.equal(drawn.x[j], drawn.x[j + 1], `a drop's before and after at one x (${j})`);
    assert.ok(drawn.x[j]! > drawn.x[j - 1]! || j === 0, "x in order");
    assert.ok(drawn.y[j]! > drawn.y[j + 1]!, "a drop");
    j++;
  }
  assert.ok(drawn.yMax >= Math.max(...fx.boundaries.map((x) => x.before)), "the peaks are in the y range");
});

test("760 markers stay readable: merged with counts, 24 px apart at least; dragging zooms in (fewer per marker), reset zoom shows all again", async () => {
  const { page } = big;
  const all = await markers(page);
  assert.ok(Array.isArray(all), `data-markers: ${JSON.stringify(all)}`);
  const { width } = await xScale(page);
  assert.equal(all.reduce((a, [, n]) => a + n, 0), 760);
  assert.ok(all.length <= width / 24 + 1 && all.length > 5, `${all.length} markers on ${width} px`);
  for (let k = 1; k < all.length; k++) assert.ok(all[k]![0] - all[k - 1]![0] >= 23, `markers ${k - 1} and ${k} apart: ${JSON.stringify(all.slice(k - 1, k + 1))}`);
  assert.equal(await page.isVisible("#unzoom"), false, "nothing to reset yet");

  // Drag across a sliver: a request or two fill the chart, one compaction per marker, whole numbers on the axis.
  const box = (await (await page.$("#chart .u-over"))!.boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.403, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  const zoomed = await xScale(page);
  assert.ok(zoomed.max - zoomed.min < 10, `zoomed to ${zoomed.min}–${zoomed.max}`);
  const some = await markers(page);
  assert.ok(some.length > 0 && some.every(([, n]) => n === 1), JSON.stringify(some));
  const ticks = await xticks(page);
  assert.ok(ticks.length > 0 && ticks.every((t) => /^\d[\d,]*$/.test(t)), `zoomed in, whole numbers: ${JSON.stringify(ticks)}`);
  assert.ok(await page.isVisible("#unzoom"), "reset zoom offered");
  await page.click("#unzoom");
  assert.deepEqual(await markers(page), all, "reset: the whole session again");
  assert.equal(await page.isVisible("#unzoom"), false);
});

test("the x axis has whole request numbers only (three requests on a wide chart: no 0.5, 1.5)", async () => {
  writeSession(ws.dir, "20260101-000000-chart2", 2);
  const small = await open(ws.dir, "20260101-000000-chart2", browser);
  try {
    const ticks = await xticks(small.page);
    assert.ok(Array.isArray(ticks) && ticks.length >= 2 && ticks.every((t) => /^\d+$/.test(t)), JSON.stringify(ticks));
    assert.deepEqual(small.failed, []);
  } finally {
    await small.viewer.close();
  }
});

test("times are local (Tokyo, UTC+9, in German), the ISO timestamp the title; no raw ISO text", async () => {
  const { page } = big;
  const times = await page.$$eval("#transcript time", (ts: any[]) => ts.slice(0, 3).map((t) => ({ text: t.textContent as string, title: t.getAttribute("title") as string })));
  assert.equal(times[0]?.title, "2026-01-01T00:00:01.000Z");
  assert.match(times[0]!.text, /01\.01\.2026.*09:00:01/);
  assert.equal(times[1]?.title, "2026-01-01T00:00:03.000Z", "a compaction's time too");
  assert.doesNotMatch((await page.textContent("#transcript")) ?? "", /\d{4}-\d\d-\d\dT/, "no raw ISO timestamps");
});

test("no request fails: the page names its icon, which loads as an image under the page's CSP", async () => {
  const { page, failed } = big;
  const href = await (await page.$("link[rel~=icon]"))?.getAttribute("href");
  const icon = await page.evaluate((src) => new Promise((done) => { const i = new (globalThis as any).Image(); i.onload = () => done(src); i.onerror = () => done(`${src} did not load`); i.src = src; }), href ?? "/favicon.ico");
  assert.equal(icon, "/favicon.svg");
  assert.deepEqual(failed, []);
});
