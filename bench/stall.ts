// npm run bench:stall → bench/results/stall.json
//
// The user-visible wait at the compaction point, with and without the background pre-summary,
// when the summary model takes L seconds.
//
// A local fake Anthropic server (bench/support/fake-anthropic.ts) plays the model: ordinary turns
// call a bash tool after `--turn-latency` seconds (time passes between turns as it would during a
// model call), SUMMARY requests (tool_choice none, or the instruction's "about to be compacted")
// answer after L seconds. The session is driven through the official SDK client
// (createAnthropicClient) and the engine (createEngine with that client as its summarizer):
// engine.beforeRequest → client.stream → engine.observe, the history growing by one tool call and
// one tool result of about `--result-tokens` tokens per turn, until the threshold is crossed and a
// summary compaction swaps the history. The wait is the wall time of engine.beforeRequest on that
// request. Run twice: summary.presummaryShare 0.8 (the default: a background summary starts at 80%
// of the threshold) and 0 (none). micro and snip are off in both runs, so the context grows to the
// threshold and the summarised prefix stays unchanged (what micro or snip would do to it is the
// replay's business, not this benchmark's).
//
//   tsx bench/stall.ts [--latency S] [--turn-latency S] [--window N] [--result-tokens N] [--out FILE]
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { cpus, platform, release } from "node:os";
import { dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { CompactionEvent, SummarizeEvent } from "../src/compaction/types.ts";
import { createEngine } from "../src/engine/index.ts";
import type { ContentBlock, Message } from "../src/messages/types.ts";
import { createAnthropicClient } from "../src/model/anthropic.ts";
import type { ToolDefinition } from "../src/model/types.ts";
import { type FakeTurn, startFakeAnthropic } from "./support/fake-anthropic.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DEFAULT_OUT = resolve(ROOT, "bench/results/stall.json");
// Any model name does for the fake; a current one keeps the SDK from printing deprecation warnings.
const MODEL = "claude-sonnet-4-6";
const SYSTEM = "You are a coding agent. Use the bash tool to inspect files.";
const TASK = "Read every data file under data/ one by one and report the totals per warehouse.";
const TOOLS: ToolDefinition[] = [
  { name: "bash", description: "Run a shell command.", input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
];
const SUMMARY =
  "<analysis>Going through the conversation in order.</analysis>\n<summary>\n1. Goal — read every data file under data/ and report the totals per warehouse.\n" +
  "8. Current work — reading the data files one by one with cat.\n9. Next step — read the next data file.\n</summary>";

export interface StallOptions {
  /** Seconds the fake takes to answer a summary request (L). */
  latencyS: number;
  /** Seconds the fake takes to answer an ordinary turn. */
  turnLatencyS: number;
  window: number;
  maxOutputTokens: number;
  /** Approximate tokens of each tool result. */
  resultTokens: number;
  /** Give up after this many turns without a compaction. */
  maxTurns: number;
}

export const DEFAULTS: StallOptions = { latencyS: 2, turnLatencyS: 0.5, window: 64_000, maxOutputTokens: 4_000, resultTokens: 2_000, maxTurns: 200 };

export interface StallRun {
  presummary_share: number;
  /** Wall time of engine.beforeRequest on the request where the summary swap happened. */
  wait_s: number;
  /** Turn (request index, 0-based) of the swap. */
  swap_turn: number;
  /** Turn where the background summary started (null: none). */
  presummary_started_turn: number | null;
  /** Real time between the background summary's start and the swap request (null: none). */
  head_start_s: number | null;
  /** The swap's event: the summary came from the background pre-summary? */
  swap_presummary: boolean;
  swap_summarizer: SummarizeEvent["summarizer"];
  tokens_before: number;
  tokens_after: number;
  threshold: number;
  requests_to_fake: number;
  summary_requests_to_fake: number;
  /** beforeRequest wall time on the other requests (no summary): median and max, seconds. */
  other_waits_median_s: number;
  other_waits_max_s: number;
}

const isSummaryRequest = (body: any): boolean => {
  const tc = body?.tool_choice;
  return tc === "none" || tc?.type === "none" || JSON.stringify(body?.messages?.at?.(-1) ?? "").includes("about to be compacted");
};

/** A data file's text: about `tokens` tokens of varied rows. */
export function dataFile(n: number, tokens: number): string {
  const lines: string[] = [];
  const warehouses = ["north", "south", "east", "west", "central"];
  // ~22 tokens per row
  for (let i = 0; i * 22 < tokens; i++) {
    const qty = ((n * 7919 + i * 104729) % 9000) + 100;
    lines.push(`file${n} row ${i}: ${qty} units of item-${(n * 31 + i * 17) % 997} shipped to ${warehouses[(n + i) % 5]} on 2024-${String((i % 12) + 1).padStart(2, "0")}-${String((n % 28) + 1).padStart(2, "0")}`);
  }
  return lines.join("\n");
}

export async function runStall(share: number, o: StallOptions): Promise<StallRun> {
  let calls = 0;
  const script = (body: any): FakeTurn => {
    if (isSummaryRequest(body)) return { text: SUMMARY };
    calls++;
    return { toolUses: [{ name: "bash", input: { command: `cat data/file${calls}.txt` } }] };
  };
  const fake = await startFakeAnthropic({
    script,
    contextWindow: o.window,
    latencyMs: (body) => 1000 * (isSummaryRequest(body) ? o.latencyS : o.turnLatencyS),
  });
  try {
    const client = createAnthropicClient({ baseURL: fake.url, apiKey: "x" });
    const marks: { e: CompactionEvent; t: number; turn: number }[] = [];
    let turn = 0;
    const engine = createEngine({
      contextWindow: o.window,
      maxOutputTokens: o.maxOutputTokens,
      summarizer: { client, model: MODEL },
      config: { micro: { enabled: false }, snip: { enabled: false }, summary: { presummaryShare: share } },
      onEvent: (e) => marks.push({ e, t: performance.now(), turn }),
    });
    const call = { system: SYSTEM, tools: TOOLS };
    let history: Message[] = [{ role: "user", content: [{ type: "text", text: TASK }] }];
    const waits: number[] = [];
    for (; turn < o.maxTurns; turn++) {
      const t0 = performance.now();
      const ready = await engine.beforeRequest(history, call);
      const wait = (performance.now() - t0) / 1000;
      const swap = ready.events.find((e): e is SummarizeEvent => e.kind === "summarize");
      if (swap) {
        const started = marks.find((m) => m.e.kind === "presummary_started");
        const sorted = waits.slice().sort((a, b) => a - b);
        return {
          presummary_share: share,
          wait_s: round(wait),
          swap_turn: turn,
          presummary_started_turn: started ? started.turn : null,
          head_start_s: started ? round((t0 - started.t) / 1000) : null,
          swap_presummary: swap.presummary,
          swap_summarizer: swap.summarizer,
          tokens_before: swap.tokensBefore,
          tokens_after: swap.tokensAfter,
          threshold: engine.threshold,
          requests_to_fake: fake.requests.length,
          summary_requests_to_fake: fake.requests.filter(isSummaryRequest).length,
          other_waits_median_s: round(sorted[sorted.length >> 1] ?? 0),
          other_waits_max_s: round(sorted[sorted.length - 1] ?? 0),
        };
      }
      waits.push(wait);
      const reply = await client.stream({ model: MODEL, system: SYSTEM, tools: TOOLS, messages: ready.history, maxTokens: o.maxOutputTokens });
      engine.observe(ready.history, reply.message, reply.usage, call);
      const results: ContentBlock[] = [];
      for (const b of typeof reply.message.content === "string" ? [] : reply.message.content) {
        if (b.type === "tool_use") results.push({ type: "tool_result", tool_use_id: b.id, content: dataFile(turn + 1, o.resultTokens) });
      }
      if (results.length === 0) throw new Error(`stall: turn ${turn}: the fake did not call a tool`);
      history = [...ready.history, reply.message, { role: "user", content: results }];
    }
    throw new Error(`stall: no compaction within ${o.maxTurns} turns`);
  } finally {
    await fake.close();
  }
}

const round = (x: number) => Number(x.toFixed(4));

export async function stallBenchmark(o: StallOptions) {
  const withPre = await runStall(0.8, o);
  const without = await runStall(0, o);
  return {
    latency_s: o.latencyS,
    wait_with_presummary_s: withPre.wait_s,
    wait_without_presummary_s: without.wait_s,
    wait_with_presummary_pct_of_latency: round((100 * withPre.wait_s) / o.latencyS),
    detail: { with_presummary: withPre, without_presummary: without },
    notes: {
      how:
        "a fake Anthropic server on 127.0.0.1 (bench/support/fake-anthropic.ts) plays the model through the official SDK (createAnthropicClient); ordinary turns answer after turn_latency_s with one bash call, summary requests (tool_choice none, or the instruction's 'about to be compacted') after latency_s. " +
        "The session runs engine.beforeRequest → client.stream → engine.observe, each turn adding one tool call and one tool result of about result_tokens tokens, until a summary compaction swaps the history; the wait is the wall time of engine.beforeRequest on that request (performance.now, one run each). " +
        "with: summary.presummaryShare 0.8 (background summary from 80% of the threshold); without: 0. micro and snip are off in both runs so the context grows to the threshold with an unchanged prefix.",
      head_start:
        "detail.with_presummary.head_start_s = real time between the background summary's start and the swap request; when it is shorter than latency_s the swap waits for the rest (the pre-summary can only hide as much latency as the turns between 80% and 100% of the threshold take)",
      settings: { turn_latency_s: o.turnLatencyS, window: o.window, max_output_tokens: o.maxOutputTokens, result_tokens: o.resultTokens },
      machine: `node ${process.version}, ${platform()} ${release()}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"} (shared: other processes run concurrently; waits are single wall-clock measurements)`,
    },
  };
}

function parseArgs(argv: string[]): StallOptions & { out: string } {
  const o = { ...DEFAULTS, out: DEFAULT_OUT };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const eq = flag.indexOf("=");
    const name = eq > 0 ? flag.slice(0, eq) : flag;
    const value = () => {
      const v = eq > 0 ? flag.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new Error(`${name} needs a value`);
      return v;
    };
    const num = (v: string, what: string) => {
      const n = Number(v.replace(/_/g, "").replace(/k$/i, "000"));
      if (!Number.isFinite(n) || n < 0) throw new Error(`${name} wants ${what} (got ${v})`);
      return n;
    };
    switch (name) {
      case "--latency":
        o.latencyS = num(value(), "seconds");
        break;
      case "--turn-latency":
        o.turnLatencyS = num(value(), "seconds");
        break;
      case "--window":
        o.window = num(value(), "tokens");
        break;
      case "--result-tokens":
        o.resultTokens = num(value(), "tokens");
        break;
      case "--out":
        o.out = resolve(value());
        break;
      default:
        throw new Error(`unknown argument ${flag}\nusage: tsx bench/stall.ts [--latency S] [--turn-latency S] [--window N] [--result-tokens N] [--out FILE]`);
    }
  }
  return o;
}

async function main(): Promise<void> {
  let o: ReturnType<typeof parseArgs>;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`bench:stall: ${(e as Error).message}`);
    process.exit(2);
  }
  const r = await stallBenchmark(o);
  mkdirSync(dirname(o.out), { recursive: true });
  const tmp = `${o.out}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(r, null, 2)}\n`);
  renameSync(tmp, o.out);
  const w = r.detail.with_presummary;
  const wo = r.detail.without_presummary;
  console.log(`summary latency L = ${o.latencyS} s, ordinary turns ${o.turnLatencyS} s, window ${o.window}, results ~${o.resultTokens} tokens`);
  console.log(`run               wait at swap   % of L   swap turn   summary from        head start   summary requests`);
  console.log(`with pre-summary  ${w.wait_s.toFixed(3).padStart(10)} s  ${((100 * w.wait_s) / o.latencyS).toFixed(1).padStart(6)}   ${String(w.swap_turn).padStart(9)}   ${(w.swap_presummary ? "background" : "foreground").padEnd(18)}  ${w.head_start_s === null ? "-" : `${w.head_start_s.toFixed(2)} s`.padStart(10)}   ${w.summary_requests_to_fake}`);
  console.log(`without           ${wo.wait_s.toFixed(3).padStart(10)} s  ${((100 * wo.wait_s) / o.latencyS).toFixed(1).padStart(6)}   ${String(wo.swap_turn).padStart(9)}   ${(wo.swap_presummary ? "background" : "foreground").padEnd(18)}  ${"-".padStart(10)}   ${wo.summary_requests_to_fake}`);
  console.log(`\nwrote ${o.out}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
