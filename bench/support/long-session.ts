// A long session written as the agent writes one, for bench:resume and bench:viewer: the shared
// corpus's real rounds cycled, driven through lethe's own engine at a 32k window with every message
// written to the transcript first (so snips, micro and budget write their boundaries as they do in
// use); optionally a request line per model call, as the agent loop writes them.
import { readFileSync, statSync, utimesSync } from "node:fs";
import { createEngine } from "../../src/engine/index.ts";
import type { Message } from "../../src/messages/types.ts";
import { createSessionDir } from "../../src/session/paths.ts";
import { openTranscript } from "../../src/session/transcript.ts";
import { corpusRounds, freshRound } from "../rounds.ts";

export interface BuiltSession {
  id: string;
  dir: string;
  transcript: string;
  bytes: number;
}

/** A session of `n` messages in workspace `ws`; the transcript's mtime is set to `mtime` (s). */
export function buildSession(root: string, ws: string, id: string, n: number, mtime: number, opts: { requests?: boolean } = {}): BuiltSession {
  const { first, rounds } = corpusRounds(root);
  const paths = createSessionDir(ws, id);
  const transcript = openTranscript(paths.transcript, { header: { id, cwd: ws, model: "claude-sonnet-4-6" } });
  const engine = createEngine({ contextWindow: 32_000, maxOutputTokens: 8_000, sessionDir: paths.dir, transcript, transcriptHoldsHistory: true });
  let live: Message[] = [];
  const add = (m: Message) => (transcript.appendMessage(m), live.push(m));
  add(first);
  for (let k = 0; k * 2 + 1 < n; k++) {
    const [a, u] = freshRound(rounds[k % rounds.length]!, k);
    add(a);
    add(u);
    const r = engine.prepare(live);
    live = r.history.slice();
    if (opts.requests) {
      const ts = new Date(Date.UTC(2026, 0, 1) + k * 5_000).toISOString();
      const input = r.measuredTokens;
      transcript.appendEvent("request", { ts, model: "claude-sonnet-4-6", input_tokens: input, input_tokens_estimated: input, cache_read_tokens: Math.round(input * 0.9), cache_write_tokens: Math.round(input * 0.1), output_tokens: 120, cost_usd: input * 3e-7, latency_ms: 900, stop_reason: "tool_use", threshold: engine.threshold, context_window: engine.contextWindow });
    }
  }
  transcript.close();
  utimesSync(paths.transcript, mtime, mtime);
  return { id, dir: paths.dir, transcript: paths.transcript, bytes: statSync(paths.transcript).size };
}

/** Where a transcript's bytes go: per line type, and the part of boundary lines that holds snip heads. */
export function transcriptShape(path: string): { bytes: number; messages: number; message_bytes: number; boundary_bytes: number; head_bytes: number; boundaries: number; per_message: number } {
  const text = readFileSync(path, "utf8");
  let messages = 0, messageBytes = 0, boundaryBytes = 0, headBytes = 0, boundaries = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith('{"type":"message"')) {
      messages++;
      messageBytes += Buffer.byteLength(line) + 1;
    } else if (line.startsWith('{"type":"boundary"')) {
      boundaries++;
      boundaryBytes += Buffer.byteLength(line) + 1;
      const b = JSON.parse(line) as Record<string, unknown>;
      // The head in full (before), or its reference and the part that differs (after).
      for (const k of ["head", "head_diff", "head_from"]) if (b[k] !== undefined) headBytes += Buffer.byteLength(JSON.stringify(b[k]));
    }
  }
  const bytes = statSync(path).size;
  return { bytes, messages, message_bytes: messageBytes, boundary_bytes: boundaryBytes, head_bytes: headBytes, boundaries, per_message: Math.round(bytes / Math.max(1, messages)) };
}
