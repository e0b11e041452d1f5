// The library's front door: one object an agent loop calls before each model request
// (prepare) and after each response (observe). Side effects (disk, clock) are wired here,
// at the edge; the layers themselves stay pure.
import { join } from "node:path";
import type { Message } from "./messages/types.ts";
import { type Fix, type Violation, repair, validate } from "./messages/invariants.ts";
import { type CompactionConfig, type DeepPartial, autoCompactThreshold, resolveConfig } from "./compaction/config.ts";
import { type PrepareResult, prepare } from "./compaction/pipeline.ts";
import type { LayerContext, LayerEvent, ModelWindow, ToolResultStore } from "./compaction/types.ts";
import { createFileStore, createMemoryStore } from "./session/tool-results.ts";
import { type TokenCounter, createTokenCounter } from "./tokens/count.ts";
import { type ContextMeter, type Usage, createContextMeter } from "./tokens/meter.ts";

export interface EngineOptions extends ModelWindow {
  /** Session folder: huge tool results go to <sessionDir>/tool-results/. Without it they stay in memory. */
  sessionDir?: string;
  /** A store of your own (overrides sessionDir). */
  store?: ToolResultStore;
  config?: DeepPartial<CompactionConfig>;
  model?: string;
  /** Clock (ms); injectable for tests. */
  now?: () => number;
  /** Called with every event as it happens (the CLI renders them; the engine never prints). */
  onEvent?: (event: LayerEvent) => void;
}

export interface PrepareCall {
  /** Tokens of the system prompt and tool definitions sent with every request. */
  fixedTokens?: number;
}

export interface EnginePrepareResult extends PrepareResult {
  /** Anchored measure of the prepared request (reported usage + estimate of what is new). */
  measuredTokens: number;
  /** What repair changed in the incoming history before the layers ran. */
  fixes: Fix[];
}

/** Thrown when a prepared history still breaks an invariant (a bug, never sent). */
export class InvariantError extends Error {
  constructor(readonly violations: Violation[]) {
    super(`lethe: prepared history breaks ${violations.length} invariant(s); first: message ${violations[0]?.index}: ${violations[0]?.message}`);
  }
}

export interface Engine {
  readonly config: CompactionConfig;
  readonly threshold: number;
  readonly counter: TokenCounter;
  readonly meter: ContextMeter;
  prepare(history: readonly Message[], call?: PrepareCall): EnginePrepareResult;
  /** Report the provider's usage for the request just sent and the reply received. */
  observe(sent: readonly Message[], reply: Message, usage: Usage, call?: PrepareCall): void;
}

export function createEngine(opts: EngineOptions): Engine {
  const config = resolveConfig(opts.config);
  const window: ModelWindow = { contextWindow: opts.contextWindow, maxOutputTokens: opts.maxOutputTokens };
  const store = opts.store ?? (opts.sessionDir ? createFileStore(join(opts.sessionDir, "tool-results")) : createMemoryStore());
  const counter = createTokenCounter();
  const meter = createContextMeter({ counter, model: opts.model });
  const now = opts.now ?? Date.now;
  let lastResponseAt: number | undefined;

  return {
    config,
    threshold: autoCompactThreshold(window, config),
    counter,
    meter,
    prepare(history, call = {}) {
      const ctx: LayerContext = {
        window,
        config,
        tokens: counter,
        store,
        now: now(),
        lastResponseAt,
        archivePath: opts.sessionDir ? join(opts.sessionDir, "transcript.jsonl") : undefined,
        fixedTokens: call.fixedTokens ?? 0,
      };
      // Every request passes through repair first and validate last.
      const repaired = repair(history);
      const result = prepare(repaired.history, ctx);
      const violations = validate(result.history);
      if (violations.length > 0) throw new InvariantError(violations);
      if (opts.onEvent) for (const e of result.events) opts.onEvent(e);
      const measuredTokens = meter.measure(result.history, call.fixedTokens ?? 0);
      return { ...result, measuredTokens, fixes: repaired.fixes, overThreshold: measuredTokens > result.threshold };
    },
    observe(sent, reply, usage, call = {}) {
      lastResponseAt = now();
      meter.observe(sent, reply, usage, call.fixedTokens ?? 0);
    },
  };
}
