// `lethe view`: a read-only local web server over one session of the workspace. It binds to the
// loopback address only and answers a fixed set of routes; no part of a request path ever names a
// file, so `..`, encoded slashes and absolute paths have nothing to reach (they are 404s).
//   GET /                     the page
//   GET /assets/uplot.js|css  the chart library
//   GET /assets/view.js|css   the page's script and styles
//   GET /favicon.svg, /favicon.ico  the page's icon (an SVG; a browser asks for one)
//   GET /api/session          header, warnings and errors, the chart's data: each request line's
//                             tokens and cost (as columns), each boundary's kind and tokens
//   GET /api/entries?from=&limit=
//                             a page of transcript entries in order, each with its index `i`
//                             (default and at most 500; under 1.5 MB of JSON unless one entry
//                             alone is larger), with `total` and `next` (null on the last page)
//   GET /api/search?q=        search over messages and archived tool results (recall)
//   GET /api/item?id=&offset= a whole item (a tool result, a message) in slices (recall)
// Only for itself: a Host other than 127.0.0.1:<port> or localhost:<port> is a 421 (DNS rebinding:
// evil.com re-pointed at 127.0.0.1 arrives with its own name), another page's Origin a 403.
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { recall } from "../../session/recall.ts";
import type { SessionPaths } from "../../session/paths.ts";
import { ICON, PAGE, SCRIPT, STYLE } from "./page.ts";
import { SessionCache } from "./session-cache.ts";

export interface Viewer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const SEARCH_HITS = 200;
const ITEM_CHARS = 200_000;
/** A page of /api/entries: entries, and bytes of JSON (a response stays well under 2 MB). */
const PAGE_ENTRIES = 500;
const PAGE_BYTES = 1_500_000;
/** Warnings and errors sent with /api/session (a badly damaged file has one per line). */
const NOTES = 200;

// Everything the page needs comes from this server, and nothing of it is inline (see page.ts).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const TEXT = "text/plain; charset=utf-8";

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, {
    "content-type": type,
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-resource-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
  });
  res.end(body);
}

const json = (res: ServerResponse, v: unknown) => send(res, 200, "application/json; charset=utf-8", JSON.stringify(v));
const notFound = (res: ServerResponse) => send(res, 404, TEXT, "not found\n");

/** Whether Host names this server exactly: its loopback address or localhost, with its port. */
function ownHost(host: string | undefined, port: number): host is string {
  // Browsers leave out the default port.
  return ["127.0.0.1", "localhost"].some((name) => host === `${name}:${port}` || (port === 80 && host === name));
}

function asset(name: string): string {
  const require = createRequire(import.meta.url);
  return readFileSync(require.resolve(`uplot/dist/${name}`), "utf8");
}

/** Serves one session; `port` 0 takes a free one. */
export function startViewer(session: SessionPaths, opts: { port?: number } = {}): Promise<Viewer> {
  const assets = {
    "/assets/uplot.js": ["text/javascript; charset=utf-8", asset("uPlot.iife.min.js")],
    "/assets/uplot.css": ["text/css; charset=utf-8", asset("uPlot.min.css")],
    "/assets/view.js": ["text/javascript; charset=utf-8", SCRIPT],
    "/assets/view.css": ["text/css; charset=utf-8", STYLE],
    "/favicon.svg": ["image/svg+xml", ICON],
    "/favicon.ico": ["image/svg+xml", ICON],
  } as const;
  // Parsed once, then only what is appended (./session-cache.ts).
  const cache = new SessionCache(session.transcript);

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const port = req.socket.localPort ?? 0;
    const host = req.headers.host;
    if (!ownHost(host, port)) return send(res, 421, TEXT, `misdirected request: this server answers only to 127.0.0.1:${port} and localhost:${port}\n`);
    // A request another page makes (fetch, form, module script) carries its Origin; the page's own may too.
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${host}`) return send(res, 403, TEXT, "forbidden: a request from another origin\n");
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, TEXT, "read-only\n");
    const raw = req.url ?? "/";
    // The route is the raw path: no decoding, no normalising, so nothing can smuggle a path in.
    const q = raw.indexOf("?");
    const path = q < 0 ? raw : raw.slice(0, q);
    const params = new URLSearchParams(q < 0 ? "" : raw.slice(q + 1));
    if (path === "/" || path === "/index.html") return send(res, 200, "text/html; charset=utf-8", PAGE);
    if (Object.hasOwn(assets, path)) {
      const [type, body] = assets[path as keyof typeof assets];
      return send(res, 200, type, body);
    }
    if (path === "/api/session") {
      cache.refresh();
      const { header, warnings, errors, chart } = cache;
      // A boundary's details (what it removed, the summary) are its entry: /api/entries?from=<i>&limit=1.
      return json(res, { id: session.id, header, total: cache.total, ...chart, warnings: warnings.slice(0, NOTES), errors: errors.slice(0, NOTES), more_notes: Math.max(0, warnings.length - NOTES) + Math.max(0, errors.length - NOTES) });
    }
    if (path === "/api/entries") {
      cache.refresh();
      const int = (name: string, fallback: number) => {
        const v = Number(params.get(name) ?? fallback);
        return Number.isInteger(v) && v >= 0 ? v : fallback;
      };
      const page = cache.page(int("from", 0), Math.max(1, Math.min(PAGE_ENTRIES, int("limit", PAGE_ENTRIES))), PAGE_BYTES);
      return send(res, 200, "application/json; charset=utf-8", `{"from":${page.from},"total":${page.total},"next":${page.next},"entries":${page.json}}`);
    }
    if (path === "/api/search") {
      const query = params.get("q") ?? "";
      if (query.trim() === "") return json(res, { hits: [] });
      const r = recall(session.dir, { query, maxHits: SEARCH_HITS, maxChars: 100_000 });
      return json(res, r.kind === "search" ? { hits: r.hits } : { hits: [], error: r.kind === "error" ? r.text : undefined });
    }
    if (path === "/api/item") {
      const id = params.get("id") ?? "";
      const offset = Number(params.get("offset") ?? "0");
      const r = recall(session.dir, { id, offset: Number.isInteger(offset) && offset >= 0 ? offset : 0, maxChars: ITEM_CHARS });
      return r.kind === "slice" ? json(res, { id: r.id, source: r.source, content: r.content, total: r.total, next: r.next }) : notFound(res);
    }
    return notFound(res);
  };

  // A request without Host is ours to refuse with 421 (node would answer 400 itself).
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    try {
      handle(req, res);
    } catch (e) {
      send(res, 500, TEXT, `${(e as Error).message.split("\n")[0]}\n`);
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    // Loopback only: the transcript is the user's whole session.
    server.listen(opts.port ?? 0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/`,
        server,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
