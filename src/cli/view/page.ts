// The viewer page: one HTML document, its script and styles at /assets/view.js|css, the chart library
// from /assets (uPlot, served from the package). No fonts, scripts or styles from anywhere else, and
// nothing inline (no <style>, no style= attributes): the CSP allows only this server's files.
// Long lists render in pages as they scroll into view, fetched a page at a time (/api/entries?from=),
// so a 50,000-message session stays usable. The chart is ./chart.ts. Times show in the browser's
// locale and time zone, the ISO timestamp as the element's title.

import { CHART_SCRIPT } from "./chart.ts";

/** A compaction's colour by kind: the chart draws with them, the stylesheet has a class for each. */
const COLORS: Record<string, string> = { budget: "#8e9aaf", snip: "#f79009", micro: "#12b76a", summarize: "#2f6fed", reactive: "#d92d20", manual: "#7a5af8", subagent: "#0ba5ec", uncompact: "#344054" };

/** The page's styles, served as /assets/view.css. */
export const STYLE = `
:root { --fg:#1d2330; --muted:#667085; --line:#e4e7ec; --bg:#fff; --panel:#f8f9fb; --accent:#2f6fed; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:var(--fg); background:var(--bg); }
header { padding:12px 20px; border-bottom:1px solid var(--line); display:flex; gap:16px; align-items:baseline; flex-wrap:wrap; }
header h1 { font-size:16px; margin:0; }
header .meta { color:var(--muted); font-size:13px; }
main { display:grid; grid-template-columns:minmax(0,1fr) 380px; gap:0; }
#left { padding:16px 20px; min-width:0; }
#right { border-left:1px solid var(--line); padding:16px; background:var(--panel); min-height:calc(100vh - 50px); }
h2 { font-size:14px; margin:18px 0 8px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
#chart { min-height:320px; }
.chart-bar { display:flex; gap:12px; align-items:center; font-size:12px; margin:0 0 4px; }
#unzoom[hidden] { display:none; }
.legend { display:flex; gap:12px; flex-wrap:wrap; font-size:12px; color:var(--muted); margin:6px 0; }
.legend span::before { content:""; display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:4px; background:var(--c, #999); vertical-align:-1px; }
#compactions button { display:block; width:100%; text-align:left; border:1px solid var(--line); background:#fff; border-radius:6px; padding:6px 8px; margin:0 0 6px; cursor:pointer; font:inherit; }
#compactions button:hover, #compactions button.active { border-color:var(--accent); }
.kind { display:inline-block; padding:0 6px; border-radius:4px; color:#fff; font-size:12px; margin-right:6px; }
#detail { font-size:13px; }
#detail pre, .msg pre { white-space:pre-wrap; word-break:break-word; background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:8px; margin:6px 0; max-height:420px; overflow:auto; font:12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
.msg { border-bottom:1px solid var(--line); padding:8px 0; }
.msg .role { font-weight:600; font-size:12px; color:var(--muted); text-transform:uppercase; }
.msg .role time { text-transform:none; font-weight:400; }
.msg details summary { cursor:pointer; color:var(--accent); }
.boundary { margin:10px 0; padding:8px 10px; border-left:4px solid var(--c, #999); background:var(--panel); }
.steer { margin:10px 0; padding:6px 10px; border-left:4px dashed #98a2b3; color:var(--muted, #555); }
.hit { padding:6px 0; border-bottom:1px solid var(--line); font-size:13px; }
.hit code { background:#fff3c4; }
input[type=search] { width:100%; padding:6px 8px; border:1px solid var(--line); border-radius:6px; font:inherit; }
.muted { color:var(--muted); }
.add { color:#067647; } .del { color:#b42318; }
.error { color:#b42318; padding:8px 20px; }
.kind { background:var(--c, #999); }
${Object.entries(COLORS).map(([k, c]) => `.k-${k} { --c:${c}; }`).join("\n")}
`;

/** The page's script, served as /assets/view.js (the page allows no inline script). */
export const SCRIPT = `
const COLORS = ${JSON.stringify(COLORS)};
// A kind's colour is a class (.k-<kind>): a style= attribute would need 'unsafe-inline'.
const kindClass = (k) => (Object.hasOwn(COLORS, k) ? " k-" + k : "");
const $ = (s) => document.querySelector(s);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&":"&amp;", "<":"&lt;", ">":"&gt;", '"':"&quot;", "'":"&#39;" })[c]);
const n = (x) => (typeof x === "number" && x >= 0 ? x.toLocaleString("en-US") : "?");
const get = (u) => fetch(u).then((r) => r.json());
const SHOW = 4000;
const TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
/** A timestamp in local time, the ISO string as its title (what the transcript holds). */
function when(ts) {
  if (typeof ts !== "string" || !ts) return "";
  const d = new Date(ts);
  const text = Number.isNaN(d.getTime()) ? ts : TIME.format(d);
  return "<time class='muted' datetime='" + esc(ts) + "' title='" + esc(ts) + "'>" + esc(text) + "</time>";
}
${CHART_SCRIPT}

function textBlock(text) {
  const t = String(text ?? "");
  if (t.length <= SHOW) return "<pre>" + esc(t) + "</pre>";
  const id = "x" + Math.random().toString(36).slice(2);
  return "<pre id='" + id + "'>" + esc(t.slice(0, SHOW)) + "\\n…</pre><button data-full='" + id + "'>show all (" + t.length.toLocaleString("en-US") + " chars)</button><template id='" + id + "-t'>" + esc(t) + "</template>";
}
function diff(input) {
  if (!input || typeof input.old_string !== "string" || typeof input.new_string !== "string") return "";
  const lines = input.old_string.split("\\n").map((l) => "<span class='del'>- " + esc(l) + "</span>").concat(input.new_string.split("\\n").map((l) => "<span class='add'>+ " + esc(l) + "</span>"));
  return "<pre>" + lines.join("\\n") + "</pre>";
}
function block(b) {
  if (!b || typeof b !== "object") return "";
  if (b.type === "text") return textBlock(b.text);
  if (b.type === "thinking") return "<details><summary>thinking</summary>" + textBlock(b.thinking) + "</details>";
  if (b.type === "tool_use") return "<details><summary>tool call: " + esc(b.name) + " <span class='muted'>" + esc(b.id) + "</span></summary>" + (diff(b.input) || textBlock(JSON.stringify(b.input, null, 2))) + "</details>";
  if (b.type === "tool_result") {
    const c = typeof b.content === "string" ? b.content : (b.content || []).map((x) => (x.type === "text" ? x.text : "[" + x.type + "]")).join("\\n");
    return "<details><summary>tool result " + (b.is_error ? "(error) " : "") + "<span class='muted'>" + esc(b.tool_use_id) + " · " + c.length.toLocaleString("en-US") + " chars</span></summary>" + textBlock(c) + "</details>";
  }
  return "<p class='muted'>[" + esc(b.type) + "]</p>";
}
function boundaryHtml(e) {
  const d = e.details || {};
  const what = e.kind === "uncompact" ? " the last " + esc(d.undone || "") + " compaction undone: " : " compaction" + (d.fromPreview ? " (the previewed one)" : "") + ": ";
  return "<div class='boundary" + kindClass(e.kind) + "' data-boundary='" + e.i + "'><b>" + esc(e.kind) + "</b>" + what + n(e.tokens_before) + " → " + n(e.tokens_after) + " tokens " + when(e.ts) + "</div>";
}
// What the user or the host steered, each its own line: a switch of window, a preview, a save turn.
const STEER = {
  window_set: (e) => "window switched: " + n(e.previous) + " → " + n(e.context_window) + " tokens (auto-compact at " + n(e.threshold) + ")",
  compact_preview: (e) => "compaction previewed" + (e.focus ? " (focus: " + esc(e.focus) + ")" : "") + ": " + n(e.tokens_before) + " → " + n(e.tokens_after) + " tokens · <span class='applied'>not applied</span>",
  summary_deferred: (e) => "the agent was given a turn to save its state before the summary (" + n(e.tokens) + " tokens; threshold " + n(e.threshold) + ")",
};
function steerHtml(e) {
  return "<div class='steer' data-event='" + e.i + "' data-name='" + esc(e.name) + "'><b>" + esc(e.name.replace("_", " ")) + "</b> " + STEER[e.name](e) + " " + when(e.ts) + "</div>";
}
function messageHtml(e) {
  const m = e.message || {};
  const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m.content) ? m.content : [];
  return "<div class='msg' data-uuid='" + esc(e.uuid) + "'><div class='role'>" + esc(m.role) + " " + when(e.ts) + "</div>" + blocks.map(block).join("") + "</div>";
}

// The transcript list: entries come a page at a time (/api/entries?from=), as the list reaches them.
let entries = [];
let next = 0;
let rendered = 0;
let queue = Promise.resolve();
async function renderMore(count) {
  while (entries.length < rendered + count && next !== null) {
    const p = await get("/api/entries?from=" + next);
    entries = entries.concat(p.entries);
    next = p.next;
  }
  const html = [];
  const end = Math.min(entries.length, rendered + count);
  for (; rendered < end; rendered++) {
    const e = entries[rendered];
    if (e.type === "message") html.push(messageHtml(e));
    else if (e.type === "boundary") {
      html.push(boundaryHtml(e));
      // The preview this compaction applied was not left unapplied after all.
      if (e.details && e.details.fromPreview) previewApplied(html);
    } else if (e.type === "event" && Object.hasOwn(STEER, e.name)) html.push(steerHtml(e));
  }
  $("#transcript").insertAdjacentHTML("beforeend", html.join(""));
  $("#more").style.display = rendered < entries.length || next !== null ? "block" : "none";
}
/** Marks the latest preview (in this page's html, or already on the page) as applied. */
function previewApplied(html) {
  for (let k = html.length - 1; k >= 0; k--) {
    if (html[k].includes("data-name='compact_preview'")) {
      html[k] = html[k].replace("not applied", "applied");
      return;
    }
  }
  const shown = document.querySelectorAll(".steer[data-name='compact_preview'] .applied");
  if (shown.length) shown[shown.length - 1].textContent = "applied";
}
// One at a time: a scroll while a page is on its way must not render the same entries twice.
const more = (count) => (queue = queue.catch(() => {}).then(() => renderMore(count)));

function detail(b) {
  const removed = b.removed;
  const carried = b.carried;
  const parts = ["<h2>" + esc(b.kind) + " compaction</h2><p>" + n(b.tokens_before) + " → " + n(b.tokens_after) + " tokens " + when(b.ts) + "</p>"];
  if (removed) {
    parts.push("<h2>Removed</h2><p>" + removed.messages + " messages</p>");
    if (removed.tool_results && removed.tool_results.length) parts.push("<ul class='removed'>" + removed.tool_results.map((t) => "<li><a href='#' data-item='" + esc(t.tool_use_id) + "'>" + esc(t.name || "tool") + " " + esc(t.tool_use_id) + "</a> <span class='muted'>full text: " + esc(t.full_text) + "</span></li>").join("") + "</ul>");
  }
  const d = b.details || {};
  if (d.persisted) parts.push("<h2>Moved to disk</h2><ul class='removed'>" + d.persisted.map((p) => "<li><a href='#' data-item='" + esc(p.toolUseId) + "'>" + esc(p.toolName) + " " + esc(p.toolUseId) + "</a> <span class='muted'>" + n(p.tokensBefore) + " → " + n(p.tokensAfter) + " tokens · " + esc(p.path) + "</span></li>").join("") + "</ul>");
  if (d.cleared) parts.push("<h2>Cleared</h2><ul class='removed'>" + d.cleared.map((c) => "<li><a href='#' data-item='" + esc(c.toolUseId) + "'>" + esc(c.toolName) + " " + esc(c.toolUseId) + "</a> <span class='muted'>" + n(c.tokens) + " tokens</span></li>").join("") + "</ul>");
  if (carried) parts.push("<h2>Kept</h2><p>" + carried.user_messages + " user messages" + (carried.latest_request ? " + the latest request" : "") + "; ledger: " + carried.ledger.read + " read, " + carried.ledger.modified + " modified; " + carried.restored_files.length + " files restored" + (carried.todos ? "; todos" : "") + (carried.attachments ? "; " + carried.attachments + " attachments named" : "") + "</p>");
  if (b.summary) parts.push("<h2>Summary</h2><pre class='summary'>" + esc(b.summary) + "</pre>");
  $("#detail").innerHTML = parts.join("");
}

async function showItem(id) {
  const r = await get("/api/item?id=" + encodeURIComponent(id));
  $("#detail").insertAdjacentHTML("beforeend", "<h2>" + esc(id) + "</h2>" + (r.content !== undefined ? textBlock(r.content) : "<p class='muted'>not found</p>"));
}

async function search(q) {
  const out = $("#hits");
  if (!q.trim()) { out.innerHTML = ""; return; }
  const r = await get("/api/search?q=" + encodeURIComponent(q));
  out.innerHTML = r.hits.length ? r.hits.map((h) => "<div class='hit'><a href='#' data-item='" + esc(h.id) + "'>" + esc(h.source) + " " + esc(h.id) + "</a><div>" + esc(h.snippet) + "</div></div>").join("") : "<p class='muted'>no match</p>";
}

async function main() {
  const s = await get("/api/session");
  $("#title").textContent = "lethe session " + s.id;
  $("#meta").textContent = (s.header && s.header.cwd ? s.header.cwd + " · " : "") + (s.header && s.header.model ? s.header.model : "");
  // The request lines come as columns: requests.i[k], requests.input_tokens[k], …
  const { requests, boundaries } = s;
  const cost = requests.cost_usd.reduce((a, c) => a + (c || 0), 0);
  $("#summary").textContent = requests.i.length + " requests · " + boundaries.length + " compactions · $" + cost.toFixed(2);
  if (requests.i.length && window.uPlot) drawChart($("#chart"), requests, boundaries);
  else $("#chart").innerHTML = "<p class='muted'>No request lines in this transcript (written before lethe recorded them).</p>";
  performance.mark("timeline");
  $("#legend").innerHTML = Object.keys(COLORS).map((k) => "<span class='" + kindClass(k) + "'>" + k + "</span>").join("");
  $("#compactions").innerHTML = boundaries.map((b) => "<button data-open='" + b.i + "'><span class='kind" + kindClass(b.kind) + "'>" + esc(b.kind) + "</span>" + n(b.tokens_before) + " → " + n(b.tokens_after) + "</button>").join("") || "<p class='muted'>none</p>";
  document.body.addEventListener("click", (ev) => {
    const t = ev.target.closest("[data-open],[data-item],[data-full]");
    if (!t) return;
    ev.preventDefault();
    if (t.dataset.open) {
      document.querySelectorAll("#compactions button").forEach((x) => x.classList.toggle("active", x === t));
      // The boundary's whole entry: what it removed, kept, and its summary.
      get("/api/entries?limit=1&from=" + t.dataset.open).then((p) => detail(p.entries[0]));
    } else if (t.dataset.item) showItem(t.dataset.item);
    else if (t.dataset.full) { const pre = document.getElementById(t.dataset.full); pre.textContent = document.getElementById(t.dataset.full + "-t").content.textContent; t.remove(); }
  });
  let timer;
  $("#q").addEventListener("input", (ev) => { clearTimeout(timer); timer = setTimeout(() => search(ev.target.value), 200); });
  await more(200);
  performance.mark("transcript");
  $("#more").addEventListener("click", () => more(500));
  new IntersectionObserver((xs) => { if (xs.some((x) => x.isIntersecting)) more(300); }).observe($("#more"));
  document.body.dataset.ready = "1";
}
main().catch((e) => { document.body.insertAdjacentHTML("afterbegin", "<p class='error'>" + esc(e.message) + "</p>"); });
`;

/** The page's icon, /favicon.svg: a browser asks for one (a 404 otherwise). */
export const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2f6fed"/><path d="M3 12 7 5v6l4-7v8" fill="none" stroke="#fff" stroke-width="1.6"/></svg>`;

export const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>lethe session</title>
<link rel="icon" type="image/svg+xml" href="/favicon.svg">
<link rel="stylesheet" href="/assets/uplot.css">
<link rel="stylesheet" href="/assets/view.css">
</head><body>
<header><h1 id="title">lethe session</h1><span class="meta" id="meta"></span><span class="meta" id="summary"></span></header>
<main>
<section id="left">
<h2>Context per request</h2>
<div class="chart-bar"><span class="muted">drag across the chart to zoom, double-click to see it all</span><button id="unzoom" hidden>reset zoom</button></div>
<div id="chart"></div>
<div class="legend" id="legend"></div>
<h2>Transcript</h2>
<div id="transcript"></div>
<button id="more">more</button>
</section>
<aside id="right">
<input type="search" id="q" placeholder="Search everything, archived tool results too">
<div id="hits"></div>
<h2>Compactions</h2>
<div id="compactions"></div>
<div id="detail"></div>
</aside>
</main>
<script src="/assets/uplot.js"></script>
<script type="module" src="/assets/view.js"></script>
</body></html>
`;
