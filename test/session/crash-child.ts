// Test helper (not a test): appends messages to a transcript forever, printing
// "<uuid> <sha256 of the message JSON>" on stdout after each append returns.
// The crash test SIGKILLs it at a random moment.
//
//   node --import tsx test/session/crash-child.ts <transcript.jsonl> <seed>
import { createHash } from "node:crypto";
import type { Message } from "../../src/messages/types.ts";
import { openTranscript } from "../../src/session/transcript.ts";

const [path, seedArg] = process.argv.slice(2);
if (!path) {
  process.stderr.write("usage: crash-child.ts <transcript.jsonl> [seed]\n");
  process.exit(2);
}

// A small deterministic PRNG (mulberry32), so runs differ by seed only.
let state = Number(seedArg ?? 1) >>> 0;
function rand(): number {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const PIECES = ["ok ", "line\n", "日本語のテキスト", "emoji 🎉 ", '{"json": [1,2]} ', "\t tab ", "quote \" and \\ ", "\u2028"];
function text(size: number): string {
  let s = "";
  while (s.length < size) s += PIECES[Math.floor(rand() * PIECES.length)];
  return s;
}

/** Sizes from tiny to ~400k chars, so some writes are large enough to be cut by the kill. */
function size(): number {
  const r = rand();
  return r < 0.6 ? Math.floor(rand() * 200) : r < 0.9 ? Math.floor(rand() * 20_000) : Math.floor(rand() * 400_000);
}

function message(i: number): Message {
  const id = `toolu_${i}`;
  switch (i % 3) {
    case 0:
      return { role: "user", content: [{ type: "text", text: `request ${i}: ${text(size())}` }] };
    case 1:
      return { role: "assistant", content: [{ type: "text", text: text(50) }, { type: "tool_use", id, name: "bash", input: { command: text(40) } }] };
    default:
      return { role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i - 1}`, content: text(size()) }] };
  }
}

const writer = openTranscript(path, { header: { id: "crash", cwd: process.cwd() } });
const printed = (line: string) => new Promise<void>((resolve) => process.stdout.write(line, () => resolve()));

for (let i = 0; ; i++) {
  const m = message(i);
  const entry = writer.appendMessage(m);
  // Only now is the message acknowledged.
  await printed(`${entry.uuid} ${createHash("sha256").update(JSON.stringify(m)).digest("hex")}\n`);
}
