// Issue 12 (2): `lethe view` serves one session, read-only, on the loopback address only; no
// request path reaches a file; a missing session is a one-line error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { request } from "node:http";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startViewer } from "../../src/cli/view/server.ts";
import { sessionPaths } from "../../src/session/paths.ts";
import { builtBin, cliEnv, makeWorkspace, runCli } from "./support.ts";

const ID = "20260101-000000-view01";
const SECRET_IN_ARCHIVE = "needle-only-in-the-archived-result-7f3a";

function writeSession(dir: string) {
  const s = join(dir, ".lethe", "sessions", ID);
  mkdirSync(join(s, "tool-results"), { recursive: true });
  writeFileSync(join(s, "tool-results", "toolu_big.txt"), `line\n`.repeat(5_000) + SECRET_IN_ARCHIVE + "\n");
  const lines: unknown[] = [
    { type: "session", id: ID, cwd: dir, created: "2026-01-01T00:00:00.000Z", version: 1 },
    { type: "message", uuid: "u1", ts: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "Look at the logs." } },
    { type: "message", uuid: "u2", ts: "2026-01-01T00:00:02.000Z", message: { role: "assistant", content: [{ type: "tool_use", id: "toolu_big", name: "bash", input: { command: "cat log" } }] } },
    { type: "event", ts: "2026-01-01T00:00:02.500Z", name: "request", model: "m", input_tokens: 900, input_tokens_estimated: 880, cache_read_tokens: 0, cache_write_tokens: 900, output_tokens: 20, cost_usd: 0.01, latency_ms: 300, stop_reason: "tool_use", threshold: 5_000, context_window: 8_000 },
    { type: "message", uuid: "u3", ts: "2026-01-01T00:00:03.000Z", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_big", content: "<persisted-output>\nsaved at x; …\n</persisted-output>" }] } },
    { type: "boundary", ts: "2026-01-01T00:00:03.100Z", kind: "budget", tokens_before: 7_000, tokens_after: 1_200, details: { kind: "budget", persisted: [{ toolUseId: "toolu_big", toolName: "bash", path: join(s, "tool-results", "toolu_big.txt"), chars: 30_000, tokensBefore: 7_000, tokensAfter: 200 }] } },
    { type: "event", ts: "2026-01-01T00:00:04.000Z", name: "request", model: "m", input_tokens: 1_300, input_tokens_estimated: 1_250, cache_read_tokens: 900, cache_write_tokens: 400, output_tokens: 30, cost_usd: 0.01, latency_ms: 250, stop_reason: "end_turn", threshold: 5_000, context_window: 8_000 },
    { type: "message", uuid: "u4", ts: "2026-01-01T00:00:05.000Z", message: { role: "assistant", content: [{ type: "text", text: "The log is long; it is saved." }] } },
  ];
  writeFileSync(join(s, "transcript.jsonl"), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
}

/** A GET with the path exactly as given (fetch would normalise it); `headers.host` null sends none. */
function rawGet(url: string, path: string, method = "GET", headers: Record<string, string | null> = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const u = new URL(url);
  const { host, ...rest } = headers;
  const h = host === undefined ? rest : host === null ? rest : { ...rest, host };
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method, headers: h as Record<string, string>, setHost: host === undefined }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on("error", reject);
    req.end();
  });
}

test("the viewer: the page, its assets and the API; search reaches archived tool results; every other path is 404; loopback only", async () => {
  const ws = makeWorkspace();
  try {
    writeSession(ws.dir);
    const v = await startViewer(sessionPaths(ws.dir, ID));
    try {
      assert.equal((v.server.address() as { address: string }).address, "127.0.0.1");
      const page = await rawGet(v.url, "/");
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.body, /https?:\/\/(?!127\.0\.0\.1)/, "no external fonts, scripts or styles");
      for (const a of ["/assets/uplot.js", "/assets/uplot.css", "/assets/view.js", "/assets/view.css"]) assert.equal((await rawGet(v.url, a)).status, 200, a);
      // The icon a browser asks for (a 404 in its console otherwise), at the name the page gives and the usual one.
      assert.match(page.body, /<link rel="icon"[^>]* href="\/favicon\.svg"/);
      for (const a of ["/favicon.svg", "/favicon.ico"]) {
        const icon = await rawGet(v.url, a);
        assert.deepEqual([icon.status, icon.headers["content-type"]], [200, "image/svg+xml"], a);
        assert.match(icon.body, /^<svg /);
      }
      const session = JSON.parse((await rawGet(v.url, "/api/session")).body);
      assert.deepEqual(session.requests, { i: [2, 5], input_tokens: [900, 1_300], threshold: [5_000, 5_000], context_window: [8_000, 8_000], cost_usd: [0.01, 0.01] });
      assert.deepEqual(session.boundaries, [{ i: 4, kind: "budget", ts: "2026-01-01T00:00:03.100Z", tokens_before: 7_000, tokens_after: 1_200 }]);
      assert.equal(session.total, 7);
      const entries = JSON.parse((await rawGet(v.url, "/api/entries")).body);
      assert.deepEqual([entries.from, entries.total, entries.next, entries.entries.length], [0, 7, null, 7]);
      assert.deepEqual(entries.entries[4].details.persisted[0].toolUseId, "toolu_big");
      const hits = JSON.parse((await rawGet(v.url, `/api/search?q=${SECRET_IN_ARCHIVE}`)).body).hits;
      assert.ok(hits.some((h: any) => h.source === "tool-result-file" && h.id === "toolu_big"), JSON.stringify(hits));
      const item = JSON.parse((await rawGet(v.url, "/api/item?id=toolu_big")).body);
      assert.ok(item.content.includes(SECRET_IN_ARCHIVE));

      const attacks = [
        "/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/assets/..%2f..%2f..%2fpackage.json",
        "/assets%2fuplot.js",
        "/assets/%2e%2e/%2e%2e/transcript.jsonl",
        "//etc/passwd",
        "/etc/passwd",
        `/${ID}/transcript.jsonl`,
        "/.lethe/sessions/",
        "/api/item/../../../etc/passwd",
        "/__proto__",
        "/constructor",
        "/assets/__proto__",
        "/C:%5cWindows%5cwin.ini",
        "/api/session/..",
      ];
      for (const p of attacks) {
        const r = await rawGet(v.url, p);
        assert.equal(r.status, 404, `${p}: ${r.status}`);
        assert.doesNotMatch(r.body, /root:|"version"|transcript/);
      }
      // An id that names a file outside the session is simply not an item.
      assert.equal((await rawGet(v.url, "/api/item?id=../../../../etc/passwd")).status, 404);
      assert.equal((await rawGet(v.url, "/api/session", "POST")).status, 405, "read-only");
    } finally {
      await v.close();
    }
  } finally {
    ws.cleanup();
  }
});

// DNS rebinding: a page on evil.com whose name now resolves to 127.0.0.1 reaches the viewer with
// its own name in Host; a foreign page's requests carry its Origin.
test("the viewer answers only its own Host (421 otherwise, every path) and its own Origin (403 otherwise); headers keep other origins out", async () => {
  const ws = makeWorkspace();
  try {
    writeSession(ws.dir);
    const v = await startViewer(sessionPaths(ws.dir, ID));
    try {
      const port = Number(new URL(v.url).port);
      const paths = ["/", "/index.html", "/assets/uplot.js", "/assets/uplot.css", "/assets/view.js", "/assets/view.css", "/api/session", "/api/entries", "/api/search?q=logs", "/api/item?id=toolu_big", "/nowhere"];
      const badHosts: (string | null)[] = [
        null,
        "",
        "evil.com",
        `evil.com:${port}`,
        `127.0.0.1.evil.com:${port}`,
        `localhost.:${port}`,
        `localhost.evil.com:${port}`,
        `127.0.0.1:${port}.evil.com`,
        `127.0.0.1:${port + 1}`,
        `127.0.0.1`,
        `localhost`,
        `[::1]:${port}`,
        `0.0.0.0:${port}`,
        `127.0.0.2:${port}`,
        `127.1:${port}`,
        `2130706433:${port}`,
        `127.0.0.1:0${port}`,
        `127.0.0.1:${port}@evil.com`,
      ];
      for (const path of paths) {
        for (const host of badHosts) {
          const r = await rawGet(v.url, path, "GET", { host });
          assert.equal(r.status, 421, `${path} with Host ${JSON.stringify(host)}: ${r.status}`);
          assert.equal(r.body.trim().split("\n").length, 1, r.body);
          assert.doesNotMatch(r.body, /Look at the logs|toolu_big|lethe session/);
        }
      }
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
        for (const path of paths.slice(0, -1)) assert.equal((await rawGet(v.url, path, "GET", { host })).status, 200, `${path} with Host ${host}`);
      }

      // Another origin's request is refused; the viewer's own is served.
      for (const origin of ["http://evil.com", `http://evil.com:${port}`, "null", `http://localhost:${port}`, `https://127.0.0.1:${port}`, `http://127.0.0.1:${port + 1}`]) {
        for (const path of ["/", "/api/entries", "/assets/view.js"]) {
          const r = await rawGet(v.url, path, "GET", { origin });
          assert.equal(r.status, 403, `${path} from ${origin}: ${r.status}`);
          assert.doesNotMatch(r.body, /Look at the logs|toolu_big/);
        }
      }
      assert.equal((await rawGet(v.url, "/assets/view.js", "GET", { origin: `http://127.0.0.1:${port}` })).status, 200, "the page's module script sends its origin");
      assert.equal((await rawGet(v.url, "/api/entries", "GET", { host: `localhost:${port}`, origin: `http://localhost:${port}` })).status, 200);
      for (const m of ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"]) assert.equal((await rawGet(v.url, "/api/entries", m)).status, 405, m);

      // The headers, on the page, the API and the refusals alike.
      const page = await rawGet(v.url, "/");
      const responses = [page, await rawGet(v.url, "/api/entries"), await rawGet(v.url, "/nowhere"), await rawGet(v.url, "/", "GET", { host: "evil.com" }), await rawGet(v.url, "/", "GET", { origin: "http://evil.com" }), await rawGet(v.url, "/", "OPTIONS")];
      for (const r of responses) {
        assert.equal(r.headers["access-control-allow-origin"], undefined);
        assert.equal(r.headers["x-content-type-options"], "nosniff");
        assert.equal(r.headers["x-frame-options"], "DENY");
        assert.equal(r.headers["referrer-policy"], "no-referrer");
        assert.equal(r.headers["cross-origin-resource-policy"], "same-origin");
        assert.equal(r.headers["cross-origin-opener-policy"], "same-origin");
      }
      const csp = String(page.headers["content-security-policy"] ?? "");
      for (const d of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"]) assert.ok(csp.includes(d), `${d} in ${csp}`);
      assert.doesNotMatch(csp, /unsafe-|\*|https?:/, csp);
      // The CSP allows no inline script or style, so the page has none.
      assert.doesNotMatch(page.body, /<script(?![^>]*\ssrc=)|<style|\sstyle=|\son[a-z]+=/i);
    } finally {
      await v.close();
    }
  } finally {
    ws.cleanup();
  }
});

test("lethe view: prints its address, serves until Ctrl-C and exits 0; an unknown session is a one-line error", async () => {
  const ws = makeWorkspace();
  try {
    writeSession(ws.dir);
    const missing = await runCli(["view", "no-such-session", "--cwd", ws.dir], { env: cliEnv(ws) });
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr.trim().split("\n").length, 1, missing.stderr);
    assert.match(missing.stderr, /no-such-session/);

    const child = spawn(process.execPath, [builtBin(), "view", "--cwd", ws.dir], { env: cliEnv(ws) });
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        const m = /http:\/\/127\.0\.0\.1:\d+\//.exec(out);
        if (m) resolve(m[0]);
      });
      child.on("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    assert.equal((await rawGet(url, "/")).status, 200);
    const code = await new Promise<number | null>((resolve) => {
      child.removeAllListeners("exit");
      child.on("exit", (c) => resolve(c));
      child.kill("SIGINT");
    });
    assert.equal(code, 0);
  } finally {
    ws.cleanup();
  }
});
