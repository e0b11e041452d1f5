// One CLI session: the model client, the tools, the engine, the transcript and the live
// history, plus what the REPL's commands need (/compact, /context, /cost, /clear, /resume).
// Headless mode and the REPL both drive the agent through this.
import type { Engine } from "../engine/index.ts";
import { createEngine } from "../engine/index.ts";
import type { Message } from "../messages/types.ts";
import { createCommandHooks } from "../hooks/compact-hooks.ts";
import type { ModelClient, ToolDefinition } from "../model/types.ts";
import type { SessionPaths, SessionSummary } from "../session/paths.ts";
import type { TranscriptWriter } from "../session/transcript.ts";
import type { Usage } from "../tokens/meter.ts";
import { createToolset, toolDefinitions } from "../tools/index.ts";
import type { Tool, ToolContext } from "../tools/types.ts";
import { type PermissionMode, hiddenTools } from "./permissions.ts";
import { type PermissionDenial, PermissionGate } from "./permission-gate.ts";
import { type AgentEvent, type AgentOptions, type AgentResult, type CompactionRecord, fixedTokensOf, historyAtFailure, runAtFailure, runAgent } from "../agent/loop.ts";
import { subagentSystemPrompt, systemPrompt } from "../agent/prompt.ts";
import { type LoadedInstructions, loadInstructions, renderInstructions } from "../agent/instructions.ts";
import { homedir } from "node:os";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createFileStore } from "../session/tool-results.ts";
import type { StoreTranscript } from "../store/transcript.ts";
import type { SessionLock } from "../session/lock.ts";
import { type SessionChoice, type SessionHome, sessionHome } from "./session-home.ts";
import { type RunConfig, checkThresholdRoom, promptParts } from "./config.ts";
import { oneLine } from "./errors.ts";
import { costInTranscript, costOfModels, requestCostOf } from "./pricing.ts";
import { type ContextBreakdown, contextCategories } from "./context-breakdown.ts";
import { type FullUsage, addModelUsage, addUsage, zeroUsage } from "./usage.ts";

export { createClient } from "./client.ts";
import { wrapClient } from "./client.ts";

export type { ContextBreakdown, ContextCategory } from "./context-breakdown.ts";
export type { FullUsage } from "./usage.ts";

export interface SessionUI {
  onEvent?: (e: AgentEvent) => void;
  askPermission?: ToolContext["askPermission"];
  onCompactSuggested?: AgentOptions["onCompactSuggested"];
  onWarning?: (message: string) => void;
  /** Notes for the model, added after the next batch of tool results. */
  takeNotes?: () => string[];
}

export interface RunOutcome extends AgentResult {
  /** Usage of this run, subagents included. */
  runUsage: FullUsage;
  costUsd: number | undefined;
}

export class AgentSession {
  readonly client: ModelClient;
  readonly toolset: Tool[];
  readonly tools: ToolDefinition[];
  system = "";
  /** AGENTS.md / CLAUDE.md files in the system prompt (reloaded after /init). */
  instructions: LoadedInstructions = { files: [], warnings: [] };
  private instructionsText = "";
  paths!: SessionPaths;
  transcript!: TranscriptWriter;
  engine!: Engine;
  history: Message[] = [];
  ctx!: ToolContext;
  model: string;
  /** The reply limit of the session's model (/model changes it with the window). */
  maxOutputTokens: number;
  /** Writes the summaries while a switch to a smaller window compacts (the model switched from); else the session's model. */
  summaryModel: string | undefined;
  /** This session's totals (subagents included). */
  usage: FullUsage = zeroUsage();
  usageByModel = new Map<string, FullUsage>();
  compactions: CompactionRecord[] = [];
  turns = 0;
  /** A new session (not resumed) that no model has answered yet: removed at close, so a run that
   * failed before its first reply leaves no empty session folder behind. */
  private fresh = false;
  private lock: SessionLock | undefined;
  private answered = false;
  /** Milliseconds spent in model calls (this session object's lifetime). */
  apiMs = 0;
  /** The last /compact was skipped: it would not have made the context smaller. */
  lastCompactSkipped = false;
  /** Warnings from loading the transcript on resume. */
  loadWarnings: string[] = [];
  /** What the session had cost before this process resumed it. */
  private priorCostUsd = 0;
  /** The last run, when it failed: what it had done (turns, compactions, usage, cost) before. */
  failedRun: Pick<RunOutcome, "turns" | "compactions" | "runUsage" | "costUsd"> | undefined;
  /** Usage of the run in progress (summary calls land here too). */
  private runUsage: FullUsage = zeroUsage();
  /** The client for summaries: the same one, with its usage counted. */
  private readonly countingClient: ModelClient;
  /** Every tool call's permission, decided by the policy (./permission-gate.ts). */
  private readonly gate: PermissionGate;
  /** Where sessions are kept: .lethe/sessions, or the store --store / LETHE_STORE names (./session-home.ts). */
  private readonly home: SessionHome;
  private storeWriter: StoreTranscript | undefined;

  constructor(
    readonly cfg: RunConfig,
    readonly ui: SessionUI,
    client: ModelClient,
  ) {
    // Write-ahead on a store: everything a request carries is stored before it is sent. The
    // time spent waiting on the model (Claude Code's duration_api_ms) counts summaries too, and
    // so does the usage the summaries' client reports.
    this.client = wrapClient(client, { before: () => this.settle(), took: (ms) => (this.apiMs += ms) });
    this.countingClient = wrapClient(this.client, { used: (model, u) => this.countUsage(model, u, this.runUsage) });
    // A bare deny rule ("Read", "WebFetch") takes the tool out of the model's list altogether.
    this.gate = new PermissionGate(cfg.policy, cfg.workspace, cfg.home ?? homedir(), () => this.ui.askPermission);
    const hidden = hiddenTools(cfg.policy);
    this.toolset = createToolset().filter((t) => !hidden.has(t.name));
    this.tools = toolDefinitions(this.toolset) as ToolDefinition[];
    this.reloadInstructions();
    this.model = cfg.model;
    this.maxOutputTokens = cfg.maxOutputTokens;
    this.home = sessionHome(cfg);
  }

  /** The rules "always" would add for this call (none when no rule can allow it). */
  alwaysRules(tool: string, input: unknown): string[] {
    return this.gate.alwaysRules(tool, input);
  }

  /** "Always" at a permission prompt: allow calls like this one for the rest of the session. */
  allowAlways(tool: string, input: unknown): string {
    return this.gate.allowAlways(tool, input);
  }

  /** What was not run in the current run (Claude Code's permission_denials). */
  get permissionDenials(): PermissionDenial[] {
    return this.gate.denials;
  }

  /** Reads the instruction files again and rebuilds the system prompt (start, /init). */
  reloadInstructions(): LoadedInstructions {
    this.instructions = loadInstructions(this.cfg.workspace, this.cfg.home ?? homedir());
    this.instructionsText = renderInstructions(this.instructions.files, this.cfg.workspace);
    this.system = systemPrompt({ workspace: this.cfg.workspace, ...promptParts(this.cfg, this.instructionsText) });
    return this.instructions;
  }

  /** Shift+Tab in the REPL: the gate decides by the new mode now; the system prompt says plan mode from the next request on. */
  setPermissionMode(mode: PermissionMode): void {
    this.cfg.policy.mode = mode;
    this.system = systemPrompt({ workspace: this.cfg.workspace, ...promptParts(this.cfg, this.instructionsText) });
  }

  /** Tokens the project instructions add to every request. */
  get instructionTokens(): number {
    return this.instructionsText && this.engine ? this.engine.counter.text(this.instructionsText) : 0;
  }

  get id(): string {
    return this.paths.id;
  }

  /** Opens a new session, or the one named by `resume`, or the latest one (`continueLatest`). */
  async start(opts: SessionChoice = {}): Promise<void> {
    await this.switchSession(opts);
    checkThresholdRoom(this.engine.threshold, this.fixedTokens);
  }

  /** Leaves the open session for the chosen one (./session-home.ts): closed only once the next one is found. */
  private async switchSession(choice: SessionChoice): Promise<void> {
    const next = await this.home.find(choice);
    // What the session being left queued goes out before it is closed.
    await this.settle();
    this.close();
    const s = next.open();
    this.lock = s.lock;
    this.storeWriter = s.storeWriter;
    this.attach(s.paths, s.transcript, s.history, s.warnings, s.fresh);
  }

  private attach(paths: SessionPaths, transcript: TranscriptWriter, history: Message[], warnings: string[], fresh: boolean): void {
    this.paths = paths;
    this.fresh = fresh;
    this.answered = false;
    this.history = history;
    this.loadWarnings = warnings;
    this.transcript = transcript;
    this.engine = this.makeEngine(paths.dir, this.transcript, paths.id, true);
    const readDenied = this.gate.readCheck();
    this.ctx = {
      workspace: this.cfg.workspace,
      sessionDir: paths.dir,
      readState: new Map(),
      todos: [],
      passEnv: this.cfg.passEnv,
      askPermission: (req) => this.gate.check(req),
      ...(readDenied ? { readDenied } : {}),
    };
    this.usage = zeroUsage();
    this.usageByModel = new Map();
    // A resumed session's cost goes on from what its transcript's request lines add up to.
    this.priorCostUsd = fresh ? 0 : costInTranscript(transcript.path);
    this.compactions = [];
    this.turns = 0;
  }

  private makeEngine(sessionDir: string | undefined, transcript: TranscriptWriter | undefined, sessionId: string, main = false): Engine {
    const cfg = this.cfg;
    const session = this;
    // A PostgreSQL session keeps the full results in the database too (the files store's folder is the session's own).
    const results = main && sessionDir && this.storeWriter && this.home.store?.kind !== "files" ? this.storeWriter.results(createFileStore(join(sessionDir, "tool-results"))) : undefined;
    return createEngine({
      contextWindow: cfg.contextWindow,
      maxOutputTokens: cfg.maxOutputTokens,
      ...(sessionDir ? { sessionDir } : {}),
      ...(results ? { store: results } : {}),
      // runAgent writes every message to the transcript before sending it.
      ...(transcript ? { transcript, transcriptHoldsHistory: true } : {}),
      config: cfg.compaction,
      model: cfg.model,
      // Summary calls are paid for too: count their usage with the session's.
      // Read at each call: /model switches it (./steer.ts).
      summarizer: { client: this.countingClient, get model() { return session.summaryModel ?? session.model; } },
      summarizerMode: cfg.summarizer,
      // A summary call's request line in the transcript carries its price, as the loop's do.
      requestCost: requestCostOf(cfg.pricing),
      ...(cfg.hooks
        ? { hooks: createCommandHooks(cfg.hooks, { cwd: cfg.workspace, sessionId, ...(transcript ? { transcriptPath: transcript.path } : {}), onWarning: (m) => this.ui.onWarning?.(m) }) }
        : {}),
      workspace: cfg.workspace,
    });
  }

  /** Starts a new, empty session (/clear). */
  async clear(): Promise<void> {
    await this.switchSession({});
  }

  /** Switches to another session of the workspace or the store (/resume <id>). */
  async switchTo(id: string): Promise<void> {
    await this.switchSession({ resume: id });
  }

  /** The sessions /resume can switch to: the workspace's, or the store's conversations (newest first). */
  sessions(): Promise<SessionSummary[]> {
    return this.home.list();
  }

  /** On a store: waits until everything the session wrote is stored (a no-op on files). */
  async settle(): Promise<void> {
    await this.storeWriter?.flush();
  }

  /** Closes the session once everything is stored; releases the store's connections. */
  async end(): Promise<void> {
    try {
      // A background summary in flight is paid for: its request line is written before the session closes.
      await this.engine?.flush();
      await this.settle();
    } finally {
      this.close();
      await this.home.close();
    }
  }

  private countUsage(model: string, u: Usage, into: FullUsage): void {
    addUsage(this.usage, u);
    addUsage(into, u);
    addModelUsage(this.usageByModel, model, u);
  }

  /** $ for the usage so far, what a resumed session had cost before included (undefined when a model's price is unknown). */
  cost(): number | undefined {
    const now = costOfModels(this.usageByModel, this.cfg.pricing);
    return now === undefined ? undefined : this.priorCostUsd + now;
  }

  /** One user turn: the prompt, then model calls and tools until the model answers. */
  async run(prompt: string | undefined, signal?: AbortSignal): Promise<RunOutcome> {
    const runUsage = (this.runUsage = zeroUsage());
    this.failedRun = undefined;
    this.gate.denials = [];
    const costBefore = this.cost();
    const onEvent = (e: AgentEvent) => {
      let inner: AgentEvent = e;
      while (inner.type === "subagent_event") inner = inner.event;
      // Summary calls are counted by the client that made them (countingClient), stale ones too.
      if (inner.type === "response" && !inner.summary) {
        this.answered = true;
        this.countUsage(inner.model, inner.usage, runUsage);
      }
      this.ui.onEvent?.(e);
    };
    const cfg = this.cfg;
    try {
      const r = await runAgent(this.history, prompt, {
        engine: this.engine,
        client: this.client,
        model: this.model,
        system: this.system,
        tools: this.tools,
        toolset: this.toolset,
        toolContext: this.ctx,
        subagents: {
          sessionDir: this.paths.dir,
          toolset: this.toolset,
          system: subagentSystemPrompt({ workspace: cfg.workspace, ...promptParts(this.cfg, this.instructionsText), base: undefined }),
          createEngine: ({ sessionDir, transcript }) => this.makeEngine(sessionDir, transcript, this.paths.id),
        },
        transcript: this.transcript,
        requestCost: requestCostOf(cfg.pricing),
        ...(cfg.maxTurns ? { maxTurns: cfg.maxTurns } : {}),
        ...(cfg.maxBudgetUsd ? { maxBudgetUsd: cfg.maxBudgetUsd } : {}),
        maxOutputTokens: this.maxOutputTokens,
        signal,
        onEvent,
        ...(cfg.retry ? { retry: cfg.retry } : {}),
        ...(cfg.fallbackModel ? { fallbackModel: cfg.fallbackModel } : {}),
        ...(this.ui.onCompactSuggested && cfg.autoCompact === "ask" ? { onCompactSuggested: this.ui.onCompactSuggested } : {}),
        ...(this.ui.takeNotes ? { takeNotes: this.ui.takeNotes } : {}),
      });
      this.history = r.history;
      if (r.stop === "aborted") this.closeUnanswered("[lethe] The user interrupted this request before it was finished. Treat the next message as a new request; do not continue this one unless asked.");
      await this.settle();
      this.model = r.model;
      this.turns += r.turns;
      this.compactions.push(...r.compactions);
      const after = this.cost();
      return { ...r, runUsage, costUsd: after !== undefined && costBefore !== undefined ? after - costBefore : undefined };
    } catch (e) {
      const h = historyAtFailure(e);
      if (h) this.history = h;
      // What the run did before it failed is the session's too (a report says so).
      const partial = runAtFailure(e);
      if (partial) (this.turns += partial.turns), this.compactions.push(...partial.compactions);
      const after = this.cost();
      this.failedRun = { turns: partial?.turns ?? 0, compactions: partial?.compactions ?? [], runUsage, costUsd: after !== undefined && costBefore !== undefined ? after - costBefore : undefined };
      this.closeUnanswered(`[lethe] This request failed before it was finished (${oneLine(e instanceof Error ? e.message : String(e), 300)}). Treat the next message as a new request.`);
      // The note goes to the store too; a store that fails now is not the error to report.
      await this.settle().catch(() => {});
      throw e;
    }
  }

  /**
   * A cancelled or failed turn must not leave the user's words dangling: the next prompt would
   * be merged into the same user turn ("a slow question\n\nand after the interrupt?"). An
   * assistant note closes the turn (written to the transcript first, so a resume sees it too).
   */
  private closeUnanswered(note: string): void {
    const last = this.history.at(-1);
    if (!last || last.role !== "user") return;
    const message: Message = { role: "assistant", content: [{ type: "text", text: note }] };
    this.transcript.appendMessage(message);
    this.history = [...this.history, message];
  }

  get fixedTokens(): number {
    return fixedTokensOf(this.engine, this.system, this.tools);
  }

  /** What every request and summary of the session carries besides the messages (compaction: ./steer.ts). */
  requestShape(): { system: string; tools: ToolDefinition[]; fixedTokens: number } {
    return { system: this.system, tools: this.tools, fixedTokens: this.fixedTokens };
  }

  /** Where the tokens of the next request go. */
  breakdown(): ContextBreakdown {
    const categories = contextCategories(this.history, this.engine.counter, this.fixedTokens, this.instructionTokens);
    const estimate = categories.reduce((n, c) => n + c.tokens, 0);
    const measured = this.history.length ? this.engine.meter.measure(this.history, this.fixedTokens) : estimate;
    return { categories, estimate, measured, window: this.engine.contextWindow, threshold: this.engine.threshold, autoCompact: this.cfg.autoCompact, messages: this.history.length };
  }

  close(): void {
    try {
      this.transcript?.close();
    } catch {
      // already closed
    }
    this.lock?.release();
    this.lock = undefined;
    this.storeWriter = undefined;
    if (this.paths && this.fresh && !this.answered) {
      // Nothing was answered: the folder holds at most the header and the unanswered prompt.
      try {
        rmSync(this.paths.dir, { recursive: true, force: true });
      } catch {
        // best effort: an empty folder is untidy, not harmful
      }
      this.fresh = false;
    }
  }
}
