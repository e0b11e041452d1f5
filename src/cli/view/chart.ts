// The viewer's chart (part of /assets/view.js, see page.ts): input tokens per request, and each
// compaction as the drop it made, its tokens before and after both plotted at its place between
// two requests (a request after a compaction often reports what the one before it did, so the
// requests alone hide the peak). Compaction markers closer than MARK_GAP merge into one marker with
// a count, so hundreds stay readable; drag across the chart to zoom, double-click or "reset zoom"
// to see it all again. Request numbers on the axis are whole numbers only.
// For tests (test/cli/viewer-browser.test.ts): #chart's `uplot` property is the chart, its
// data-markers the markers drawn ([css px from the plot's left, compactions], left to right) and
// data-xticks the x axis labels.

export const CHART_SCRIPT = `
/** Markers nearer than this (css px, between centres) are one marker with a count. */
const MARK_GAP = 24;
const WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6];
const tok = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** The plotted columns: request r at x = r, the compactions between requests r and r + 1 spread over (r, r + 1), each twice: before, then after. */
function chartSeries(requests, boundaries) {
  const count = requests.i.length;
  const x = [], tokens = [], threshold = [], win = [], cost = [], drops = [];
  let r = 0, b = 0, total = 0;
  while (r < count || b < boundaries.length) {
    if (r < count && (b >= boundaries.length || requests.i[r] < boundaries[b].i)) {
      total += requests.cost_usd[r] || 0;
      x.push(r + 1); tokens.push(requests.input_tokens[r]); threshold.push(requests.threshold[r]); win.push(requests.context_window[r]); cost.push(total);
      r++;
      continue;
    }
    let end = b;
    while (end < boundaries.length && (r >= count || boundaries[end].i < requests.i[r])) end++;
    // The threshold and window lines carry on through a compaction (the neighbouring request's).
    const near = r > 0 ? r - 1 : r;
    for (let j = b; j < end; j++) {
      const at = r + (j - b + 1) / (end - b + 1);
      drops.push({ x: at, b: boundaries[j] });
      for (const y of [boundaries[j].tokens_before, boundaries[j].tokens_after]) {
        x.push(at); tokens.push(tok(y)); threshold.push(requests.threshold[near] ?? null); win.push(requests.context_window[near] ?? null); cost.push(total);
      }
    }
    b = end;
  }
  return { data: [x, tokens, threshold, win, cost], drops };
}

/** The markers in view, left to right: a compaction joins the marker before it when within MARK_GAP of its centre. */
function markerGroups(u, drops) {
  const { min, max } = u.scales.x;
  const groups = [];
  for (const d of drops) {
    if (d.x < min || d.x > max) continue;
    const px = u.valToPos(d.x, "x");
    const g = groups[groups.length - 1];
    if (g && px - g.c < MARK_GAP) {
      g.c = (g.c * g.n + px) / (g.n + 1);
      g.n++;
      g.hi = px;
      g.kinds[d.b.kind] = (g.kinds[d.b.kind] || 0) + 1;
    } else groups.push({ c: px, lo: px, hi: px, n: 1, kinds: { [d.b.kind]: 1 } });
  }
  return groups;
}

function drawMarkers(u, groups) {
  const ctx = u.ctx, pr = uPlot.pxRatio, top = u.bbox.top, h = u.bbox.height;
  const at = (px) => Math.round(u.bbox.left + px * pr);
  ctx.save();
  ctx.font = 10 * pr + "px system-ui, sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  for (const g of groups) {
    const kinds = Object.keys(g.kinds);
    const kind = kinds.reduce((a, k) => (g.kinds[k] > g.kinds[a] ? k : a), kinds[0]);
    const color = kinds.length === 1 ? COLORS[kind] || "#999" : "#475467";
    const x = at(g.c);
    if (g.n > 1) {
      // The span the merged compactions cover, faint; the count on a badge at the top.
      ctx.globalAlpha = 0.15;
      ctx.fillStyle = color;
      ctx.fillRect(at(g.lo) - pr, top, Math.max(at(g.hi) - at(g.lo), 0) + 2 * pr, h);
      ctx.globalAlpha = 1;
    }
    ctx.fillStyle = color;
    ctx.fillRect(x - pr, top, 2 * pr, h);
    if (g.n > 1) {
      const label = String(g.n), w = ctx.measureText(label).width + 6 * pr;
      ctx.fillRect(x - w / 2, top, w, 14 * pr);
      ctx.fillStyle = "#fff";
      ctx.fillText(label, x, top + 7 * pr);
    }
  }
  ctx.restore();
}

function drawChart(el, requests, boundaries) {
  const { data, drops } = chartSeries(requests, boundaries);
  let xticks = [];
  let full = null;
  const plugin = { hooks: {
    ready: [(u) => { full = { min: u.scales.x.min, max: u.scales.x.max }; }],
    setScale: [(u, key) => { if (key === "x" && full) $("#unzoom").hidden = u.scales.x.min <= full.min && u.scales.x.max >= full.max; }],
    draw: [(u) => {
      const groups = markerGroups(u, drops);
      drawMarkers(u, groups);
      el.dataset.markers = JSON.stringify(groups.map((g) => [Math.round(g.c), g.n]));
      el.dataset.xticks = JSON.stringify(xticks);
      if (!performance.getEntriesByName("chart").length) performance.mark("chart");
    }],
  } };
  const whole = (v) => (v == null ? "—" : Number.isInteger(v) ? String(v) : "compaction after request " + Math.floor(v));
  const u = new uPlot({
    width: Math.max(300, el.clientWidth), height: 300, plugins: [plugin],
    scales: { x: { time: false }, cost: {} },
    axes: [
      { label: "request", incrs: WHOLE, values: (u, splits) => (xticks = splits.map((v) => (Number.isInteger(v) ? v.toLocaleString("en-US") : ""))) },
      { label: "input tokens", size: 70 },
      { side: 1, scale: "cost", label: "cost $", size: 60 },
    ],
    series: [{ label: "request", value: (u, v) => whole(v) }, { label: "input tokens", stroke: "#2f6fed", width: 2 }, { label: "auto-compact threshold", stroke: "#f79009", dash: [6, 4], points: { show: false } }, { label: "window", stroke: "#d92d20", dash: [2, 4], points: { show: false } }, { label: "cumulative cost", stroke: "#12b76a", scale: "cost", points: { show: false } }],
  }, data, el);
  el.uplot = u;
  $("#unzoom").addEventListener("click", () => full && u.setScale("x", full));
}
`;
