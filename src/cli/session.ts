// One CLI session: the model client, the tools, the engine, the transcript and the live
// history, plus what the REPL's commands need (/compact, /context, /cost, /clear, /resume).
// Headless mode and the REPL both drive the agent through this.
import type { Engine } from "../engine/index.ts";
import { createEngine } from "../engine/index.ts";
import type { Message } from "../messages/types.ts";
import { createCommandHooks } from "../hooks/compact-hooks.ts";
import type { ModelClient, ToolDefinition } from "../model/types.ts";
import { type SessionPaths, type SessionSummary, createSessionDir, latestSession, listSessions, resolveSession } from "../session/paths.ts";
import { type TranscriptWriter, loadTranscript, openTranscript, resumeContext } from "../session/transcript.ts";
import { loadTranscriptTail } from "../session/transcript-tail.ts";
import type { Usage } from "../tokens/meter.ts";
import { createToolset, toolDefinitions } from "../tools/index.ts";
import type { Tool, ToolContext } from "../tools/types.ts";
import { hiddenTools } from "./permissions.ts";
import { type PermissionDenial, PermissionGate } from "./permission-gate.ts";
import { type AgentEvent, type AgentOptions, type AgentResult, type CompactionRecord, fixedTokensOf, reportCompactions, historyAtFailure, runAgent } from "../agent/loop.ts";
import { subagentSystemPrompt, systemPrompt } from "../agent/prompt.ts";
import { type LoadedInstructions, loadInstructions, renderInstructions } from "../agent/instructions.ts";
import { homedir } from "node:os";
import { existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { createFileStore } from "../session/tool-results.ts";
import { connectStore } from "../store/connect.ts";
import type { StoreTranscript } from "../store/transcript.ts";
import type { ConversationStore } from "../store/types.ts";
import { openStoredSession } from "./stored-session.ts";
import { type SessionLock, lockSession } from "../session/lock.ts";
import type { RunConfig } from "./config.ts";
import { ConfigError, oneLine } from "./errors.ts";
import { costOf, priceOf } from "./pricing.ts";
import { type ContextBreakdown, contextCategories } from "./context-breakdown.ts";
import { type FullUsage, addUsage, zeroUsage } from "./usage.ts";

export { createClient } from "./client.ts";

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
  system: string;
  /** AGENTS.md / CLAUDE.md files in the system prompt (reloaded after /init). */
  instructions: LoadedInstructions;
  private instructionsText = "";
  paths!: SessionPaths;
  transcript!: TranscriptWriter;
  engine!: Engine;
  history: Message[] = [];
  ctx!: ToolContext;
  model: string;
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
  /** Calls not run by the permission policy or the user, this run (Claude Code's permission_denials). */
  /** The last /compact was skipped: it would not have made the context smaller. */
  lastCompactSkipped = false;
  /** Warnings from loading the transcript on resume. */
  loadWarnings: string[] = [];
  /** Usage of the run in progress (summary calls land here too). */
  private runUsage: FullUsage = zeroUsage();
  /** The client for summaries: the same one, with its usage counted. */
  private readonly countingClient: ModelClient;
  /** Every tool call's permission, decided by the policy (./permission-gate.ts). */
  private readonly gate: PermissionGate;
  /** --store / LETHE_STORE: where the session is kept instead of .lethe/sessions (./stored-session.ts). */
  private store: ConversationStore | undefined;
  private storeWriter: StoreTranscript | undefined;

  constructor(
    readonly cfg: RunConfig,
    readonly ui: SessionUI,
    client: ModelClient,
  ) {
    // Time spent waiting on the model (Claude Code's duration_api_ms), summaries included.
    const timed: ModelClient = {
      provider: client.provider,
      stream: async (req, onEvent) => {
        // Write-ahead on a store: everything this request carries is stored before it is sent.
        await this.storeWriter?.flush();
        const t0 = Date.now();
        try {
          return await client.stream(req, onEvent);
        } finally {
          this.apiMs += Date.now() - t0;
        }
      },
    };
    this.client = timed;
    this.countingClient = {
      provider: client.provider,
      stream: async (req, onEvent) => {
        const r = await timed.stream(req, onEvent);
        this.countUsage(r.model || req.model, r.usage, this.runUsage);
        return r;
      },
    };
    // A bare deny rule ("Read", "WebFetch") takes the tool out of the model's list altogether.
    this.gate = new PermissionGate(cfg.policy, cfg.workspace, cfg.home ?? homedir(), () => this.ui.askPermission);
    const hidden = hiddenTools(cfg.policy);
    this.toolset = createToolset().filter((t) => !hidden.has(t.name));
    this.tools = toolDefinitions(this.toolset) as ToolDefinition[];
    this.instructions = { files: [], warnings: [] };
    this.system = "";
    this.reloadInstructions();
    this.model = cfg.model;
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
    this.system = systemPrompt({ workspace: this.cfg.workspace, ...this.promptExtras() });
    return this.instructions;
  }

  private promptExtras(): { instructions?: string; base?: string; append?: string } {
    const cfg = this.cfg;
    const append = [
      ...(cfg.policy.mode === "plan"
        ? ["<permission-mode>plan: you may read and search, but not run commands or change files (those calls are refused). Investigate, then present a concrete plan; the user switches modes to carry it out.</permission-mode>"]
        : []),
      ...(cfg.appendSystemPrompt ? [cfg.appendSystemPrompt] : []),
    ].join("\n\n");
    return {
      ...(this.instructionsText ? { instructions: this.instructionsText } : {}),
      ...(cfg.systemPrompt !== undefined ? { base: cfg.systemPrompt } : {}),
      ...(append ? { append } : {}),
    };
  }

  /** Tokens the project instructions add to every request. */
  get instructionTokens(): number {
    return this.instructionsText && this.engine ? this.engine.counter.text(this.instructionsText) : 0;
  }

  get id(): string {
    return this.paths.id;
  }

  /** Opens a new session, or the one named by `resume`, or the latest one (`continueLatest`). */
  async start(opts: { resume?: string; continueLatest?: boolean } = {}): Promise<void> {
    if (this.cfg.store !== undefined) return this.openStored(opts);
    if (opts.resume !== undefined) return this.open(resolveSession(this.cfg.workspace, opts.resume), true);
    if (opts.continueLatest) {
      const latest = latestSession(this.cfg.workspace);
      if (!latest) {
        // Sessions whose transcripts hold no readable message are not "no session": say what is wrong.
        const unreadable = listSessions(this.cfg.workspace).find((x) => x.messageCount === 0 && existsSync(x.transcript) && statSync(x.transcript).size > 0);
        if (unreadable) {
          const loaded = loadTranscript(unreadable.transcript);
          const why = loaded.errors[0] ?? loaded.warnings[0] ?? "no message could be read from it";
          throw new ConfigError(`lethe: the latest session ${unreadable.id} has no readable message (${oneLine(why, 160)}); start a new session, or look at ${unreadable.transcript}`);
        }
        throw new ConfigError(`lethe: no session to continue in ${this.cfg.workspace} (start one without --continue)`);
      }
      return this.open(latest, true);
    }
    this.open(createSessionDir(this.cfg.workspace), false);
  }

  private open(paths: SessionPaths, resume: boolean): void {
    this.close();
    // Before anything is read or written: a second process on this session stops here.
    this.lock = lockSession(paths.dir, paths.id);
    let history: Message[] = [];
    let warnings: string[] = [];
    if (resume) {
      // From the last resume point on: a long session's file is not read from the start.
      const loaded = loadTranscriptTail(paths.transcript);
      warnings = [...loaded.errors, ...loaded.warnings];
      history = resumeContext(loaded.entries);
    }
    const transcript = openTranscript(paths.transcript, {
      header: { id: paths.id, cwd: this.cfg.workspace, model: this.cfg.model, provider: this.cfg.provider },
    });
    this.attach(paths, transcript, history, warnings, !resume);
  }

  /** Opens (or starts) the session in the conversation store. */
  private async openStored(opts: { resume?: string; continueLatest?: boolean }): Promise<void> {
    this.store ??= await connectStore(this.cfg.store!);
    const s = await openStoredSession(this.store, { workspace: this.cfg.workspace, model: this.cfg.model, provider: this.cfg.provider, ...opts });
    // What the session being left queued goes out before it is closed.
    await this.settle();
    this.close();
    try {
      this.lock = lockSession(s.paths.dir, s.paths.id);
    } catch (e) {
      s.writer.close();
      throw e;
    }
    this.storeWriter = s.writer;
    this.attach(s.paths, s.writer, s.history, s.warnings, false);
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
    this.compactions = [];
    this.turns = 0;
  }

  private makeEngine(sessionDir: string | undefined, transcript: TranscriptWriter | undefined, sessionId: string, main = false): Engine {
    const cfg = this.cfg;
    // A PostgreSQL session keeps the full results in the database too (the files store's folder is the session's own).
    const results = main && sessionDir && this.storeWriter && this.store?.kind !== "files" ? this.storeWriter.results(createFileStore(join(sessionDir, "tool-results"))) : undefined;
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
      summarizer: { client: this.countingClient, model: cfg.model },
      summarizerMode: cfg.summarizer,
      ...(cfg.hooks
        ? { hooks: createCommandHooks(cfg.hooks, { cwd: cfg.workspace, sessionId, ...(transcript ? { transcriptPath: transcript.path } : {}), onWarning: (m) => this.ui.onWarning?.(m) }) }
        : {}),
      workspace: cfg.workspace,
    });
  }

  /** Starts a new, empty session (/clear). */
  async clear(): Promise<void> {
    if (this.cfg.store !== undefined) return this.openStored({});
    this.open(createSessionDir(this.cfg.workspace), false);
  }

  /** Switches to another session of the workspace (/resume <id>). */
  async switchTo(id: string): Promise<void> {
    if (this.cfg.store !== undefined) return this.openStored({ resume: id });
    const paths = resolveSession(this.cfg.workspace, id);
    this.open(paths, true);
  }

  /** The sessions /resume can switch to: the workspace's, or the store's conversations (newest first). */
  async sessions(): Promise<SessionSummary[]> {
    if (this.cfg.store === undefined) return listSessions(this.cfg.workspace);
    this.store ??= await connectStore(this.cfg.store);
    return (await this.store.list()).map((c) => ({
      id: c.id,
      dir: "",
      transcript: "",
      toolResults: "",
      preview: c.cwd !== undefined && c.cwd !== this.cfg.workspace ? `(started in ${c.cwd})` : "",
      messageCount: c.messages,
      lastModified: new Date(c.updated),
    }));
  }

  /** On a store: waits until everything the session wrote is stored (a no-op on files). */
  async settle(): Promise<void> {
    await this.storeWriter?.flush();
  }

  /** Closes the session once everything is stored; releases the store's connections. */
  async end(): Promise<void> {
    try {
      await this.settle();
    } finally {
      this.close();
      const store = this.store;
      this.store = undefined;
      await store?.close();
    }
  }

  private countUsage(model: string, u: Usage, into: FullUsage): void {
    addUsage(this.usage, u);
    addUsage(into, u);
    let m = this.usageByModel.get(model);
    if (!m) this.usageByModel.set(model, (m = zeroUsage()));
    addUsage(m, u);
  }

  /** $ for the usage so far (undefined when a model's price is unknown). */
  cost(): number | undefined {
    let total = 0;
    for (const [model, u] of this.usageByModel) {
      const p = priceOf(model, this.cfg.pricing);
      if (!p) return undefined;
      total += costOf(u, p.pricing);
    }
    return total;
  }

  /** One user turn: the prompt, then model calls and tools until the model answers. */
  async run(prompt: string | undefined, signal?: AbortSignal): Promise<RunOutcome> {
    const runUsage = (this.runUsage = zeroUsage());
    this.gate.denials = [];
    const costBefore = this.cost();
    const onEvent = (e: AgentEvent) => {
      let inner: AgentEvent = e;
      while (inner.type === "subagent_event") inner = inner.event;
      if (inner.type === "response") {
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
          system: subagentSystemPrompt({ workspace: cfg.workspace, ...this.promptExtras(), base: undefined }),
          createEngine: ({ sessionDir, transcript }) => this.makeEngine(sessionDir, transcript, this.paths.id),
        },
        transcript: this.transcript,
        requestCost: (model, u) => {
          const p = priceOf(model, cfg.pricing);
          return p ? costOf(u, p.pricing) : undefined;
        },
        ...(cfg.maxTurns ? { maxTurns: cfg.maxTurns } : {}),
        maxOutputTokens: cfg.maxOutputTokens,
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

  /** Manual compaction (/compact [instructions]). */
  async compact(focus: string | undefined, signal?: AbortSignal): Promise<CompactionRecord[]> {
    const r = await this.engine.compact(this.history, {
      system: this.system,
      tools: this.tools,
      fixedTokens: this.fixedTokens,
      kind: "manual",
      ...(focus?.trim() ? { focus: focus.trim() } : {}),
      ...(signal ? { signal } : {}),
    });
    this.history = r.history;
    this.lastCompactSkipped = r.events.some((e) => e.kind === "compact_skipped");
    const out = reportCompactions(r.events, r.tokens, (e) => this.ui.onEvent?.(e));
    this.compactions.push(...out);
    await this.settle();
    return out;
  }

  /** Where the tokens of the next request go. */
  breakdown(): ContextBreakdown {
    const categories = contextCategories(this.history, this.engine.counter, this.fixedTokens, this.instructionTokens);
    const estimate = categories.reduce((n, c) => n + c.tokens, 0);
    const measured = this.history.length ? this.engine.meter.measure(this.history, this.fixedTokens) : estimate;
    return { categories, estimate, measured, window: this.cfg.contextWindow, threshold: this.engine.threshold, autoCompact: this.cfg.autoCompact, messages: this.history.length };
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
