// Builds bench/corpus/unseen.jsonl.gz: public agent trajectories (MIT-licensed SWE-agent and
// mini-swe-agent repositories) converted to the line format of ../shared/corpus/real_sessions.jsonl
// (Anthropic-style blocks, roles alternating from `user`, every tool_use answered in the next
// user message, tool_result blocks first), with meta.final_diff_files from each session's
// submitted patch. Sources, commits and licences: SOURCES below and bench/corpus/PROVENANCE.md.
//
//   tsx bench/corpus/convert-trajectories.ts [--set unseen|heldout|aside|fresh] [--mirrors DIR] [--out FILE]
//
// --set heldout builds bench/corpus/heldout.jsonl.gz instead: the sessions set aside while the
// policy was tuned on the other two corpora (HELDOUT_SOURCES). --set aside builds
// bench/corpus/aside.jsonl.gz: a blind set kept aside while the policy was changed after the
// held-aside set had been replayed once (ASIDE_SOURCES). --set fresh builds
// bench/corpus/fresh.jsonl.gz: a second blind set, fixed after the aside set had been replayed
// (FRESH_SOURCES).
//
// Each source is read with `git show COMMIT:PATH` from a bare clone at DIR/<owner>+<name>/repo
// (default DIR: /work/.mirror; any clone of the repository works: `--mirrors` must hold
// <owner>+<name>/repo). Same inputs, same bytes out.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from "../../src/messages/types.ts";
import { validate } from "../../src/messages/invariants.ts";
import { diffFiles, finalDiffFilesOf } from "./final-diff.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

type Kind = "mini-swe-agent" | "swe-agent-0";

export interface Source {
  id: string;
  repo: string;
  commit: string;
  path: string;
  licence: string;
  kind: Kind;
  agent: string;
  model: string;
  note?: string;
}

const SWEA = { repo: "SWE-agent/SWE-agent", commit: "3ea751c087f32b16e039a2233dd6eefecef325d5", licence: "MIT" } as const;
const MSA = { repo: "SWE-agent/mini-swe-agent", licence: "MIT" } as const;
/** mini-swe-agent GitHub PR #816's evaluation artifacts (head of fork XieZhiliang-code/mini-swe-agent). */
const MSA_PR = "ec0e8e849fea5b1619deb1753007201000904672";

/** A mini-swe-agent run's trajectory of one task at `commit`, as a source whose id starts with `prefix`. */
const msaTask = (prefix: string, commit: string, agent: string, run: string, task: string, model: string): Source => ({
  id: `${prefix}-${run}-${task}`,
  ...MSA,
  commit,
  path: `output/${run}/${task}/${task}.traj.json`,
  kind: "mini-swe-agent",
  agent,
  model,
});

const msaRun = (run: string, task: string, model: string): Source => msaTask("msa", MSA_PR, "mini-swe-agent 2.2.7 (tool calls)", run, task, model);

export const SOURCES: Source[] = [
  { id: "swea-gpt4-pydicom-1458", ...SWEA, path: "tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj", kind: "swe-agent-0", agent: "SWE-agent 0.x (ACI commands)", model: "gpt4" },
  { id: "swea-gpt4-test-repo-i1", ...SWEA, path: "tests/test_data/trajectories/gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/swe-agent__test-repo-i1.traj", kind: "swe-agent-0", agent: "SWE-agent 0.x (ACI commands)", model: "gpt4" },
  { id: "swea-gpt4-test-repo-1c2844", ...SWEA, path: "tests/test_data/trajectories/gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/6e44b9__sweagenttestrepo-1c2844.traj", kind: "swe-agent-0", agent: "SWE-agent 0.x (ACI commands)", model: "gpt4" },
  { id: "swea-demo-humanevalfix-python-0", ...SWEA, path: "trajectories/demonstrations/human_thought__swe-bench-HumanEvalFix-python__lcb__t-0.00__p-0.95__c-4.00__install-0/humanevalfix-python-0.traj", kind: "swe-agent-0", agent: "SWE-agent 0.x (demonstration)", model: "human-written demonstration" },
  { id: "swea-demo-ctf-web-i_got_id", ...SWEA, path: "trajectories/demonstrations/ctf/web/i_got_id_demo.traj", kind: "swe-agent-0", agent: "SWE-agent EnIGMA (CTF demonstration)", model: "demonstration", note: "a CTF task: the submission is a flag, not a diff" },
  { id: "swea-demo-ctf-crypto-katy", ...SWEA, path: "trajectories/demonstrations/ctf/crypto/katy.traj", kind: "swe-agent-0", agent: "SWE-agent EnIGMA (CTF demonstration)", model: "demonstration", note: "a CTF task: the submission is a flag, not a diff" },
  { id: "swea-demo-ctf-rev-rock", ...SWEA, path: "trajectories/demonstrations/ctf/rev/rock.traj", kind: "swe-agent-0", agent: "SWE-agent EnIGMA (CTF demonstration)", model: "demonstration", note: "a CTF task: the submission is a flag, not a diff" },
  {
    id: "msa-patch-repair-astropy__astropy-12907",
    ...MSA,
    commit: "9c0e0e7784f6a45a9ab1c952639055e592577f58",
    path: "eval/example_trajectories/astropy__astropy-12907.traj.json",
    kind: "mini-swe-agent",
    agent: "mini-swe-agent 2.3.0 with a patch-repair loop (tool calls; GitHub PR #854 head)",
    model: "deepseek/deepseek-chat (its README: DeepSeek V4 Pro)",
  },
  msaRun("deepseek_chat_test_1-100", "django__django-15213", "deepseek/deepseek-chat"),
  msaRun("deepseek_chat_test_1-100", "django__django-15738", "deepseek/deepseek-chat"),
  msaRun("deepseek_chat_test_1-100", "django__django-14997", "deepseek/deepseek-chat"),
  msaRun("deepseek_chat_test_1-100", "django__django-12284", "deepseek/deepseek-chat"),
  msaRun("deepseek_chat_test_1-100", "django__django-11564", "deepseek/deepseek-chat"),
  msaRun("deepseek_chat_dev_rerun", "sqlfluff__sqlfluff-1517", "deepseek/deepseek-chat"),
  msaRun("deepseek_chat_dev_rerun", "pylint-dev__astroid-1268", "deepseek/deepseek-chat"),
  msaRun("deepseek_reasoner_dev", "sqlfluff__sqlfluff-2419", "deepseek/deepseek-reasoner"),
  msaRun("deepseek_reasoner_dev", "marshmallow-code__marshmallow-1359", "deepseek/deepseek-reasoner"),
  msaRun("deepseek_reasoner_dev", "pvlib__pvlib-python-1707", "deepseek/deepseek-reasoner"),
];

/**
 * mini-swe-agent GitHub PR #814's evaluation artifacts (head of the same contributor's fork). PR
 * #816's head descends from it: its deepseek_bench1 is PR #816's deepseek_chat_test_1-100 (the same
 * tree) and its deepseek_bench_dev holds PR #816's deepseek_chat_dev trajectories (PROVENANCE.md).
 */
const MSA_PR814 = "41a1e33ba94bbf7a0d2410dec46f99a8690113c0";

const msaRun814 = (run: string, task: string): Source => msaTask("msa814", MSA_PR814, "mini-swe-agent 2.2.x (tool calls)", run, task, "deepseek/deepseek-chat");

const ctfDemo = (category: string, name: string): Source => ({
  id: `swea-demo-ctf-${category}-${name}`,
  ...SWEA,
  path: `trajectories/demonstrations/ctf/${category}/${name}.traj`,
  kind: "swe-agent-0",
  agent: "SWE-agent EnIGMA (CTF demonstration)",
  model: "demonstration",
  note: "a CTF task: the submission is a flag, not a diff",
});

/**
 * The held-aside set (bench/corpus/heldout.jsonl.gz): sessions neither the shared corpus nor
 * unseen.jsonl.gz holds, chosen by a rule fixed before any of them was replayed, and replayed once,
 * after the policy work on the other two corpora was done (PROVENANCE.md):
 *   - every SWE-agent EnIGMA CTF demonstration unseen.jsonl.gz does not have (6);
 *   - PR #814's deepseek_bench_dev run: every instance in neither corpus (11);
 *   - PR #814's deepseek_bench1 run: of its 89 instances in neither corpus, sorted, every fifth (18).
 */
export const HELDOUT_SOURCES: Source[] = [
  ctfDemo("crypto", "BabyEncryption"),
  ctfDemo("crypto", "BabyTimeCapsule"),
  ctfDemo("crypto", "eps"),
  ctfDemo("forensics", "flash"),
  ctfDemo("misc", "networking_1"),
  ctfDemo("pwn", "warmup"),
  ...[
    "pvlib__pvlib-python-1072", "pvlib__pvlib-python-1154", "pvlib__pvlib-python-1854", "pydicom__pydicom-1139", "pydicom__pydicom-1256", "pydicom__pydicom-1694",
    "pydicom__pydicom-901", "pylint-dev__astroid-1196", "pylint-dev__astroid-1866", "pylint-dev__astroid-1978", "sqlfluff__sqlfluff-1625",
  ].map((t) => msaRun814("deepseek_bench_dev", t)),
  ...[
    "astropy__astropy-14365", "django__django-10924", "django__django-11099", "django__django-11583", "django__django-11848", "django__django-12125",
    "django__django-12470", "django__django-12747", "django__django-13028", "django__django-13315", "django__django-13551", "django__django-13757",
    "django__django-14017", "django__django-14534", "django__django-14730", "django__django-14999", "django__django-15347", "django__django-15781",
  ].map((t) => msaRun814("deepseek_bench1", t)),
];

/**
 * The blind set (bench/corpus/aside.jsonl.gz): sessions in none of the other corpora, chosen by a
 * rule fixed before any of them was replayed, and kept aside while the policy was changed after
 * heldout.jsonl.gz had been replayed once (PROVENANCE.md). A task is "in a corpus" when a session
 * of the shared corpus, SOURCES or HELDOUT_SOURCES is on it. A run's instances are its task
 * directories with a readable `<task>/<task>.traj.json` (other entries, and django__django-13220,
 * whose trajectory is not in the mirror snapshot, are skipped). The groups, in this order, each
 * skipping a task an earlier group took:
 *   - PR #814's deepseek_bench1 run: of its 70 instances in no corpus, sorted, every fourth from
 *     the first (18);
 *   - PR #814's deepseek_lite_dev run: every instance in no corpus (none: all 20 are in one);
 *   - PR #816's deepseek_chat_test_1-100 run: of its 70 instances in no corpus, sorted, every fifth
 *     from the first (14; 4 already taken above, 10 left);
 *   - PR #816's deepseek_chat_dev run: every instance in no corpus (none: all 23 are in one).
 * No selected trajectory failed the converter's checks.
 */
export const ASIDE_SOURCES: Source[] = [
  ...[
    "astropy__astropy-14995", "django__django-11001", "django__django-11133", "django__django-11620", "django__django-11905", "django__django-12184",
    "django__django-12497", "django__django-12856", "django__django-13033", "django__django-13401", "django__django-13658", "django__django-13925",
    "django__django-14238", "django__django-14608", "django__django-14787", "django__django-15202", "django__django-15400", "django__django-15790",
  ].map((t) => msaRun814("deepseek_bench1", t)),
  ...[
    "django__django-11019", "django__django-11283", "django__django-11815", "django__django-12589", "django__django-12915", "django__django-13321",
    "django__django-13933", "django__django-14411", "django__django-14752", "django__django-15498",
  ].map((t) => msaRun("deepseek_chat_test_1-100", t, "deepseek/deepseek-chat")),
];

/**
 * The second blind set (bench/corpus/fresh.jsonl.gz), fixed before the policy work that followed
 * aside.jsonl.gz's replay (which made that set one more tuning set): every instance of PR #816's
 * deepseek_chat_test_1-100 run in no other corpus, aside.jsonl.gz included (42; the rule leaves no
 * choice). Instances as ASIDE_SOURCES reads them (django__django-13220 has no trajectory there).
 */
export const FRESH_SOURCES: Source[] = [
  ...[
    "astropy__astropy-6938", "astropy__astropy-7746", "django__django-10914", "django__django-11039", "django__django-11049", "django__django-11179",
    "django__django-11422", "django__django-11630", "django__django-11742", "django__django-11964", "django__django-11999", "django__django-12113",
    "django__django-12286", "django__django-12308", "django__django-12453", "django__django-12700", "django__django-12708", "django__django-12908",
    "django__django-12983", "django__django-13158", "django__django-13230", "django__django-13447", "django__django-13448", "django__django-13590",
    "django__django-13660", "django__django-13710", "django__django-13768", "django__django-14016", "django__django-14155", "django__django-14382",
    "django__django-14580", "django__django-14667", "django__django-14672", "django__django-14855", "django__django-14915", "django__django-15061",
    "django__django-15252", "django__django-15320", "django__django-15388", "django__django-15695", "django__django-15789", "django__django-15814",
  ].map((t) => msaRun("deepseek_chat_test_1-100", t, "deepseek/deepseek-chat")),
];

export interface Line {
  id: string;
  source: string;
  licence: string;
  format_origin: string;
  system: string;
  messages: Message[];
  meta: Record<string, unknown>;
  stats: Record<string, unknown>;
}

const textOf = (c: unknown): string =>
  typeof c === "string" ? c : Array.isArray(c) ? c.map((b) => (typeof b === "string" ? b : typeof b?.text === "string" ? b.text : "")).join("\n") : c == null ? "" : String(c);

/**
 * Assembles a conversation in the corpus's shape: same-role messages merged (tool_result blocks
 * first in a user message), every tool_use answered before the next assistant turn.
 */
export class Conversation {
  readonly messages: Message[] = [];
  readonly notes: Record<string, number> = {};
  private pending: string[] = [];
  private ids = new Map<string, string>();
  private used = new Set<string>();
  private counter = 0;

  private note(k: string): void {
    this.notes[k] = (this.notes[k] ?? 0) + 1;
  }

  private last(role: "user" | "assistant"): ContentBlock[] {
    const m = this.messages[this.messages.length - 1];
    if (m && m.role === role && typeof m.content !== "string") return m.content;
    const content: ContentBlock[] = [];
    this.messages.push({ role, content });
    return content;
  }

  user(text: string): void {
    if (text === "") return this.note("empty_user_message_dropped");
    if (this.messages.length > 0 && this.pending.length > 0) this.closePending("(no output recorded)", "unanswered_tool_use_given_placeholder_result");
    this.last("user").push({ type: "text", text });
  }

  assistant(text: string, calls: { id?: string; name: string; input: unknown }[] = []): void {
    if (this.messages.length === 0) this.user("(start)");
    if (this.pending.length > 0) this.closePending("(no output recorded)", "unanswered_tool_use_given_placeholder_result");
    const blocks = this.last("assistant");
    if (text.trim() !== "") blocks.push({ type: "text", text });
    for (const c of calls) {
      let id = c.id ?? `call_${String(++this.counter).padStart(4, "0")}`;
      if (this.used.has(id)) {
        const original = id;
        let k = 2;
        while (this.used.has(`${original}~${k}`)) k++;
        id = `${original}~${k}`;
        this.ids.set(original, id);
        this.note("renamed_duplicate_tool_use_id");
      } else if (c.id) this.ids.set(c.id, id);
      this.used.add(id);
      blocks.push({ type: "tool_use", id, name: c.name, input: c.input } as ToolUseBlock);
      this.pending.push(id);
    }
    if (blocks.length === 0) blocks.push({ type: "text", text: "(empty reply)" }), this.note("empty_assistant_reply");
  }

  /** A tool's output: for the call with that id, or the oldest unanswered call. */
  result(content: string, callId?: string): boolean {
    const id = callId !== undefined ? (this.ids.get(callId) ?? callId) : this.pending[0];
    const at = id === undefined ? -1 : this.pending.indexOf(id);
    if (at < 0) return false;
    this.pending.splice(at, 1);
    const blocks = this.last("user");
    const r: ToolResultBlock = { type: "tool_result", tool_use_id: id!, content };
    const firstText = blocks.findIndex((b) => b.type !== "tool_result");
    blocks.splice(firstText < 0 ? blocks.length : firstText, 0, r);
    return true;
  }

  get unanswered(): number {
    return this.pending.length;
  }

  closePending(content: string, note: string): void {
    while (this.pending.length > 0) {
      this.result(content);
      this.note(note);
    }
  }
}

/** mini-swe-agent 2.x: OpenAI chat messages with tool_calls, `tool` answers, a final `exit`. */
export function convertMiniSweAgent(raw: { messages: any[]; info?: any }): { system: string; c: Conversation } {
  const c = new Conversation();
  let system = "";
  for (const m of raw.messages) {
    const role = m.role as string;
    if (role === "system") system += (system ? "\n\n" : "") + textOf(m.content);
    else if (role === "user") c.user(textOf(m.content));
    else if (role === "assistant") {
      // reasoning_content is not sent back to the model on later requests (DeepSeek's API): dropped.
      const calls = (m.tool_calls ?? []).map((t: any) => {
        let input: unknown;
        try {
          input = JSON.parse(t.function?.arguments ?? "{}");
        } catch {
          input = { raw_arguments: String(t.function?.arguments ?? "") };
        }
        return { id: t.id, name: t.function?.name ?? "tool", input };
      });
      c.assistant(textOf(m.content), calls);
    } else if (role === "tool") {
      if (!c.result(textOf(m.content), m.tool_call_id)) c.user(textOf(m.content));
    } else if (role === "exit") {
      // The run's final output (the submitted patch) is what the last call printed.
      if (c.unanswered > 0) {
        c.result(textOf(m.content));
        c.notes.exit_message_mapped_to_tool_result = (c.notes.exit_message_mapped_to_tool_result ?? 0) + 1;
      } else c.notes.exit_message_dropped = (c.notes.exit_message_dropped ?? 0) + 1;
    }
  }
  return { system, c };
}

/**
 * SWE-agent 0.x / EnIGMA: `history` of text messages; an assistant message's parsed `action` is
 * its command (a tool_use named bash, the agent's ACI commands included), the next user message
 * is that command's output. The last action (`submit`) has no recorded output: info.submission
 * is its result.
 */
export function convertSweAgent(raw: { history: any[]; trajectory?: any[]; info?: any }): { system: string; c: Conversation } {
  const c = new Conversation();
  let system = "";
  for (const m of raw.history) {
    const role = m.role as string;
    if (role === "system") system += (system ? "\n\n" : "") + textOf(m.content);
    else if (role === "assistant") {
      const action = typeof m.action === "string" ? m.action.replace(/\n+$/, "") : "";
      const thought = typeof m.thought === "string" ? m.thought : textOf(m.content);
      c.assistant(action ? thought : textOf(m.content), action ? [{ name: "bash", input: { command: action } }] : []);
    } else if (role === "user" || role === "tool") {
      if (c.unanswered > 0) c.result(textOf(m.content));
      else c.user(textOf(m.content));
    }
  }
  // Some runs' history stops before the final `submit`, which only the trajectory records.
  const steps = Array.isArray(raw.trajectory) ? raw.trajectory : [];
  const lastStep = steps[steps.length - 1];
  const lastAction = [...raw.history].reverse().find((m: any) => m.role === "assistant")?.action;
  if (c.unanswered === 0 && lastStep && typeof lastStep.action === "string" && lastStep.action.trim() === "submit" && String(lastAction ?? "").trim() !== "submit") {
    c.assistant(typeof lastStep.thought === "string" ? lastStep.thought : "", [{ name: "bash", input: { command: "submit" } }]);
    c.result(textOf(lastStep.observation ?? raw.info?.submission ?? ""));
    c.notes.submit_step_taken_from_trajectory = (c.notes.submit_step_taken_from_trajectory ?? 0) + 1;
  }
  const submission = raw.info?.submission;
  if (c.unanswered > 0 && typeof submission === "string") {
    c.result(submission);
    c.notes.submission_mapped_to_tool_result = (c.notes.submission_mapped_to_tool_result ?? 0) + 1;
  }
  return { system, c };
}

export function statsOf(messages: readonly Message[], json: string): Record<string, unknown> {
  let uses = 0;
  let results = 0;
  const names: Record<string, number> = {};
  const ids = new Set<string>();
  let unique = true;
  let pairing = true;
  let alternate = messages[0]?.role === "user";
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (i > 0 && messages[i - 1]!.role === m.role) alternate = false;
    if (typeof m.content === "string") continue;
    const want = m.role === "assistant" ? m.content.filter((b): b is ToolUseBlock => b.type === "tool_use").map((b) => b.id) : [];
    for (const b of m.content) {
      if (b.type === "tool_use") {
        uses++;
        names[b.name] = (names[b.name] ?? 0) + 1;
        if (ids.has(b.id)) unique = false;
        ids.add(b.id);
      } else if (b.type === "tool_result") results++;
    }
    if (want.length > 0) {
      const next = messages[i + 1];
      const got = next && typeof next.content !== "string" ? next.content.filter((b) => b.type === "tool_result").map((b) => (b as ToolResultBlock).tool_use_id) : [];
      if (want.some((id) => !got.includes(id))) pairing = false;
      const firstOther = next && typeof next.content !== "string" ? next.content.findIndex((b) => b.type !== "tool_result") : -1;
      if (firstOther >= 0 && next && typeof next.content !== "string" && next.content.slice(firstOther).some((b) => b.type === "tool_result")) pairing = false;
    }
  }
  return {
    messages: messages.length,
    tool_uses: uses,
    tool_results: results,
    unique_tool_use_ids: unique,
    pairing_ok: pairing && uses === results,
    trailing_unanswered_tool_use: false,
    roles_alternate: alternate,
    first_role: messages[0]?.role ?? null,
    json_chars: json.length,
    tool_names: Object.fromEntries(Object.entries(names).sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

export function convertSource(src: Source, text: string): Line {
  const raw = JSON.parse(text);
  const { system, c } = src.kind === "mini-swe-agent" ? convertMiniSweAgent(raw) : convertSweAgent(raw);
  const messages = c.messages;
  const submission: unknown = raw.info?.submission;
  const fromMessages = finalDiffFilesOf(messages);
  const fromInfo = typeof submission === "string" ? diffFiles(submission) : [];
  const meta: Record<string, unknown> = {
    repo: src.repo,
    commit: src.commit,
    path: src.path,
    licence: src.licence,
    conversion_notes: c.notes,
    agent: src.agent,
    model: src.model,
    exit_status: raw.info?.exit_status ?? null,
  };
  if (src.note) meta.note = src.note;
  // Ground truth: the files of the patch the run submitted (the submission call's recorded
  // output, which is info.submission); none for a run that submitted no diff.
  const files = fromMessages ?? (fromInfo.length > 0 ? fromInfo : undefined);
  if (files) meta.final_diff_files = files;
  const body = { id: src.id, source: `${src.repo}/${src.path}`, licence: src.licence, format_origin: src.kind === "mini-swe-agent" ? "mini-swe-agent traj.json (openai tool_calls)" : "swe-agent 0.x .traj history (text actions)", system, messages };
  const json = JSON.stringify(body);
  return { ...body, meta, stats: statsOf(messages, json) };
}

export function readFromMirror(mirrors: string, src: Source): string {
  const gitDir = join(mirrors, src.repo.replace("/", "+"), "repo");
  if (!existsSync(gitDir)) throw new Error(`no clone of ${src.repo} at ${gitDir} (fetch it, or pass --mirrors)`);
  return execFileSync("git", ["--git-dir", gitDir, "show", `${src.commit}:${src.path}`], { maxBuffer: 64 << 20, encoding: "utf8" });
}

function main(argv: string[]): void {
  let mirrors = "/work/.mirror";
  let set: "unseen" | "heldout" | "aside" | "fresh" = "unseen";
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--mirrors") mirrors = resolve(argv[++i]!);
    else if (argv[i] === "--out") out = resolve(argv[++i]!);
    else if (argv[i] === "--set" && ["unseen", "heldout", "aside", "fresh"].includes(argv[i + 1]!)) set = argv[++i] as typeof set;
    else {
      console.error("usage: tsx bench/corpus/convert-trajectories.ts [--set unseen|heldout|aside|fresh] [--mirrors DIR] [--out FILE]");
      process.exit(2);
    }
  }
  out ??= resolve(ROOT, `bench/corpus/${set}.jsonl.gz`);
  const sources = { unseen: SOURCES, heldout: HELDOUT_SOURCES, aside: ASIDE_SOURCES, fresh: FRESH_SOURCES }[set];
  const lines = sources.map((s) => convertSource(s, readFromMirror(mirrors, s)));
  for (const l of lines) {
    const s = l.stats;
    if (!s.pairing_ok || !s.roles_alternate || !s.unique_tool_use_ids || s.first_role !== "user") throw new Error(`${l.id}: not a well-formed conversation: ${JSON.stringify(s)}`);
    const violations = validate(l.messages);
    if (violations.length > 0) throw new Error(`${l.id}: ${violations.length} invariant violations, first: ${JSON.stringify(violations[0])}`);
  }
  mkdirSync(dirname(out), { recursive: true });
  const text = `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
  writeFileSync(out, gzipSync(text, { level: 9 }));
  for (const l of lines) console.error(`${l.id}: ${l.stats.messages} messages, ${l.stats.tool_uses} calls, ${l.stats.json_chars} chars, diff ${JSON.stringify(l.meta.final_diff_files ?? null)}`);
  console.error(`${lines.length} sessions → ${out}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
