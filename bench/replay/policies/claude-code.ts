// `claude-code`: Claude Code's context rules, modelled for the replay.
//
// - Counting is anchored on usage: the last reported usage (input + output of the previous
//   request) plus a rough estimate of the messages added since, as characters / 4 padded by 4/3.
//   Without an anchor in the live context (first request, or right after a compaction) the whole
//   request (system prompt + messages) is estimated the same rough way.
// - Auto-compact at window − min(maxOutput, 20k) − 13k (83.5% of the window where that is ≤ 0).
// - Large tool results are persisted past its limits: 50,000 chars per result, 200,000 chars per
//   message (largest first), a marker with a 2,000-char preview in context. Claude Code does this
//   when a tool returns, i.e. once per new result; here it runs on the messages the model has not
//   seen yet (those after the anchored reply), and a replaced result stays replaced.
// - No micro, no snip.
// - Summary over the threshold: one summary request that reuses the conversation as sent (same
//   system prompt, the history as the prefix, the instruction appended to the last user message:
//   the same construction as lethe's, src/compaction/summarize.ts summaryRequest, with a prompt of
//   the same size), summary ≤ 20,000 tokens. The rebuilt history is ONE user message: the summary +
//   up to 5 restored files (the most recently read paths of the session, as Claude Code's
//   readFileState remembers them across compactions; ≤ 5,000 tokens each, ≤ 50,000 in all, read
//   through the replay's shared file stand-in). No verbatim user messages, no file ledger: that is
//   Claude Code's behaviour. After it the count has no anchor until the next reply.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ContentBlock, Message, ToolResultBlock } from "../../../src/messages/types.ts";
import { resultText, toolUsesOf } from "../../../src/messages/blocks.ts";
import { resultChars } from "../../../src/tokens/media.ts";
import { callFiles } from "../../../src/compaction/state/ledger.ts";
import { summaryInstruction, summaryRequest } from "../../../src/compaction/summary/summarize.ts";
import { resultFileName } from "../../../src/session/tool-results.ts";
import { createTokenCounter } from "../../../src/tokens/count.ts";
import { type Policy, type PolicySession, claudeCodeThreshold } from "../types.ts";

export const CLAUDE_CODE = {
  perResultChars: 50_000,
  perMessageChars: 200_000,
  previewChars: 2_000,
  /** Rough estimate: characters / 4, padded by 4/3 to stay conservative. */
  charsPerToken: 4,
  pad: 4 / 3,
  imageTokens: 2_000,
  summaryMaxTokens: 20_000,
  restoreFiles: 5,
  restoreFileTokens: 5_000,
  restoreTotalTokens: 50_000,
} as const;

/** The instruction appended to the summary request (lethe's text, standing in for Claude Code's prompt of about the same size). */
export const CLAUDE_CODE_SUMMARY_INSTRUCTION = summaryInstruction({ hasPrevious: false, maxTokens: CLAUDE_CODE.summaryMaxTokens });

const estimator = createTokenCounter();

/** The continuation message Claude Code puts in place of the history (our wording). */
export function claudeCodeContinuation(summary: string): string {
  return (
    "This session continues an earlier conversation that ran out of context. Summary of the earlier part:\n\n" +
    `${summary}\n\nContinue the work from where it stopped, without asking the user to repeat anything.`
  );
}

/** Up to 5 files, most recent first, each cut (by lines) to 5,000 tokens, 50,000 in all. */
export function restoredFileBlocks(paths: readonly string[], readFile: (p: string) => string | undefined): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  let total = 0;
  for (const path of paths) {
    if (blocks.length >= CLAUDE_CODE.restoreFiles) break;
    const text = readFile(path);
    if (text === undefined) continue;
    const cap = Math.min(CLAUDE_CODE.restoreFileTokens, CLAUDE_CODE.restoreTotalTokens - total);
    if (cap <= 0) break;
    const lines = text.split("\n");
    let shown = lines.length;
    let body = text;
    while (estimator.text(body) > cap && shown > 1) {
      shown = Math.floor(shown * 0.7);
      body = lines.slice(0, shown).join("\n");
    }
    const block = `[File restored after compaction: ${path}${shown < lines.length ? ` (lines 1-${shown} of ${lines.length})` : ""}]\n${body}`;
    total += estimator.text(block);
    blocks.push({ type: "text", text: block });
  }
  return blocks;
}

const MARKER = "<persisted-output>";

function persistedMarker(path: string, text: string): string {
  return (
    `${MARKER}\nOutput too large (${text.length} chars). Full output saved to: ${path}\n\n` +
    `Preview (first ${CLAUDE_CODE.previewChars} chars):\n${text.slice(0, CLAUDE_CODE.previewChars)}\n...\n</persisted-output>`
  );
}

/** Characters (and fixed image tokens) of one message, for the rough estimate. */
function roughSize(m: Message): { chars: number; images: number } {
  if (typeof m.content === "string") return { chars: m.content.length, images: 0 };
  let chars = 0;
  let images = 0;
  for (const b of m.content) {
    switch (b.type) {
      case "text":
        chars += b.text.length;
        break;
      case "thinking":
        chars += b.thinking.length;
        break;
      case "redacted_thinking":
        chars += b.data.length;
        break;
      case "image":
        images++;
        break;
      case "tool_use":
        chars += b.name.length + JSON.stringify(b.input ?? {}).length;
        break;
      case "tool_result": {
        const c = b.content;
        if (typeof c === "string") chars += c.length;
        else if (c) for (const x of c) x.type === "text" ? (chars += x.text.length) : images++;
        break;
      }
      default:
        chars += JSON.stringify(b).length;
    }
  }
  return { chars, images };
}

export const claudeCodePolicy: Policy = {
  name: "claude-code",
  describe:
    "Claude Code's rules: usage-anchored count (last reported input+output + new messages as chars/4 × 4/3), " +
    "auto-compact at window − min(maxOutput, 20k) − 13k (83.5% of the window if ≤ 0), results persisted past 50,000 chars each / 200,000 chars per message (2,000-char preview), no micro, no snip; " +
    "summary request reusing the cached prefix (≤ 20,000 tokens of summary), rebuilt history = one user message: summary + up to 5 most recently read files (5,000 tokens each, 50,000 in all); no verbatim user messages, no file ledger",
  start({ session, window, dir, model, readFile }): PolicySession {
    const threshold = claudeCodeThreshold(window);
    const resultsDir = join(dir, "tool-results");
    let made = false;
    let anchor: { reply: Message; total: number } | null = null;
    /** readFileState: paths read in the session, least recent first. */
    const reads = new Map<string, true>();

    const persist = (b: ToolResultBlock): ToolResultBlock => {
      if (!made) {
        mkdirSync(resultsDir, { recursive: true });
        made = true;
      }
      const text = resultText(b.content);
      const path = join(resultsDir, resultFileName(b.tool_use_id));
      writeFileSync(path, text);
      return { ...b, content: persistedMarker(path, text) };
    };

    const isMarker = (b: ToolResultBlock) => typeof b.content === "string" && b.content.startsWith(MARKER);

    /** Per-result and per-message limits on one user message; the same object when nothing changes. */
    const budgetMessage = (m: Message): Message => {
      if (m.role !== "user" || typeof m.content === "string") return m;
      let blocks: ContentBlock[] | null = null;
      const src = m.content;
      for (let j = 0; j < src.length; j++) {
        const b = src[j]!;
        if (b.type !== "tool_result" || isMarker(b)) continue;
        if (resultChars(b.content) > CLAUDE_CODE.perResultChars) {
          blocks ??= src.slice();
          blocks[j] = persist(b);
        }
      }
      const cur = blocks ?? src;
      let total = 0;
      const candidates: { j: number; chars: number }[] = [];
      cur.forEach((b, j) => {
        if (b.type !== "tool_result") return;
        const chars = resultChars(b.content);
        total += chars;
        if (!isMarker(b)) candidates.push({ j, chars });
      });
      if (total > CLAUDE_CODE.perMessageChars) {
        candidates.sort((a, b) => b.chars - a.chars);
        for (const { j, chars } of candidates) {
          if (total <= CLAUDE_CODE.perMessageChars) break;
          blocks ??= src.slice();
          const next = persist(blocks[j] as ToolResultBlock);
          blocks[j] = next;
          total -= chars - resultChars(next.content);
        }
      }
      return blocks ? { ...m, content: blocks } : m;
    };

    return {
      threshold,
      prepare(live) {
        // Claude Code reads the usage of the newest assistant message that carries one.
        let from = 0;
        let base = -1;
        if (anchor) {
          for (let i = live.length - 1; i >= 0; i--) {
            if (live[i] === anchor.reply) {
              from = i + 1;
              base = anchor.total;
              break;
            }
          }
        }
        let out = live as Message[];
        const acted: string[] = [];
        let chars = base < 0 ? session.system.length : 0;
        let images = 0;
        for (let i = from; i < live.length; i++) {
          const m = budgetMessage(live[i]!);
          if (m !== live[i]) {
            if (out === live) out = live.slice();
            out[i] = m;
            if (acted.length === 0) acted.push("persist");
          }
          const s = roughSize(m);
          chars += s.chars;
          images += s.images;
        }
        const estimate = Math.ceil((chars / CLAUDE_CODE.charsPerToken) * CLAUDE_CODE.pad) + images * CLAUDE_CODE.imageTokens;
        const tokens = (base < 0 ? 0 : base) + estimate;
        if (tokens <= threshold) return { history: out, summaries: 0, compaction: null, acted };

        // Auto-compact: the summary call (the model; excluded from prepare_ms), then the rebuild.
        const request = summaryRequest({ model: "claude", system: session.system, history: out, instruction: CLAUDE_CODE_SUMMARY_INSTRUCTION, maxTokens: CLAUDE_CODE.summaryMaxTokens });
        const summary = model.summarize({ history: out, maxTokens: CLAUDE_CODE.summaryMaxTokens, request: { kind: "prefix", messages: request.messages } });
        const recent = [...reads.keys()].reverse();
        const rebuilt: Message = { role: "user", content: [{ type: "text", text: claudeCodeContinuation(summary) }, ...restoredFileBlocks(recent, readFile)] };
        anchor = null;
        return { history: [rebuilt], summaries: 1, compaction: "summary", acted: [...acted, "summarize"] };
      },
      observe(_sent, reply, usage) {
        anchor = { reply, total: usage.input_tokens + usage.output_tokens };
        for (const use of toolUsesOf(reply)) {
          for (const p of callFiles(use).read) {
            reads.delete(p);
            reads.set(p, true);
          }
        }
      },
    };
  },
};
