// What the loop does with a model reply, by its stop reason:
// - refusal: the run's messages leave the live context (the transcript marks them retracted);
// - pause_turn: a long server-side turn paused; it is sent back as it is to resume;
// - max_tokens: a tool call cut off mid-input is dropped (never run); a reply without a complete
//   call is kept and the model asked to continue without repeating, a few times in a row;
// - otherwise the reply is appended: its tool calls run (./tool-turn.ts), or, without any, the
//   run ends with its text (and the text of the replies it continued).
import { toolUsesOf } from "../messages/blocks.ts";
import type { ContentBlock, Message, ToolUseBlock } from "../messages/types.ts";
import type { ModelResponse } from "../model/types.ts";
import type { Conversation } from "./conversation.ts";
import type { AgentEvent, AgentStop } from "./types.ts";

export const CONTINUE_TEXT =
  "[lethe] Your previous reply was cut off by the output token limit. Continue exactly where you stopped, without repeating anything you already wrote.";
export const TRUNCATED_CALL_TEXT = "[lethe] This tool call was cut off by the output token limit before its input was complete, so it was not run. Issue it again (smaller, if it was large).";

/** What comes after a reply. */
export type ReplyStep =
  /** The run ends, with this final text. */
  | { next: "stop"; stop: AgentStop; text: string }
  /** Another request (a continuation); `compact`: the context window filled up, compact first. */
  | { next: "request"; compact?: boolean }
  /** Run these calls (from the appended reply); `truncatedCalls` were cut off and dropped from it. */
  | { next: "tools"; uses: ToolUseBlock[]; truncatedCalls: ToolUseBlock[] };

export interface ReplyHandlerOptions {
  conversation: Conversation;
  emit: (e: AgentEvent) => void;
  /** Continuations after a max_tokens stop, in a row. */
  maxContinuations: number;
}

/** The text blocks of a message, joined. */
export function textOf(m: Message | undefined): string {
  if (!m || typeof m.content === "string") return typeof m?.content === "string" ? m.content : "";
  return m.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("");
}

function nonEmpty(m: Message): boolean {
  if (typeof m.content === "string") return m.content.trim() !== "";
  return m.content.some((b) => b.type !== "text" || (b as { text: string }).text.trim() !== "");
}

/** A tool_use whose input did not parse (a call cut off by max_tokens) carries {_raw}. */
function truncatedInput(use: ToolUseBlock): boolean {
  const i = use.input as Record<string, unknown> | null;
  return i !== null && typeof i === "object" && "_raw" in i && Object.keys(i).length === 1;
}

/** Handles the replies of one run; the continuation count and the text continued so far live here. */
export function createReplyHandler(o: ReplyHandlerOptions): (reply: ModelResponse) => ReplyStep {
  const { conversation, emit, maxContinuations } = o;
  let continuations = 0;
  let continued = "";

  const refused = (reply: ModelResponse): ReplyStep => {
    // The provider declined the request. Keeping the refused turn would make every later
    // request carry it (and likely be refused again): take this run's messages out of the
    // live context; the transcript keeps them, marked retracted, so a resume agrees.
    const text = textOf(reply.message);
    conversation.retractRun("the model declined this request (stop_reason refusal)");
    return { next: "stop", stop: "refusal", text };
  };

  const paused = (reply: ModelResponse): ReplyStep => {
    // A long server-side turn paused (Anthropic server tools): send it back as it is to resume.
    if (nonEmpty(reply.message)) conversation.append(reply.message);
    emit({ type: "continuation", count: ++continuations });
    if (continuations > maxContinuations * 3) return { next: "stop", stop: "max_tokens", text: "" };
    return { next: "request" };
  };

  /**
   * A max_tokens reply without a complete tool call: kept, and the model asked to go on. A reply
   * cut because the context window filled up (`window`) goes on the same way, after the next
   * request's compaction; the model may not resume mid-word there, so its parts are kept apart.
   */
  const cutOff = (message: Message, truncatedCalls: ToolUseBlock[], window = false): ReplyStep => {
    if (nonEmpty(message)) {
      conversation.append(message);
      continued += textOf(message) + (window ? "\n\n" : "");
    }
    if (continuations >= maxContinuations || !nonEmpty(message)) return { next: "stop", stop: "max_tokens", text: continued.trimEnd() };
    continuations++;
    emit({ type: "continuation", count: continuations, reason: window ? "context_window" : "max_tokens" });
    const notice: ContentBlock[] = [{ type: "text", text: truncatedCalls.length > 0 ? `${CONTINUE_TEXT} ${TRUNCATED_CALL_TEXT}` : CONTINUE_TEXT }];
    conversation.append({ role: "user", content: notice });
    return window ? { next: "request", compact: true } : { next: "request" };
  };

  return (reply) => {
    if (reply.stopReason === "refusal") return refused(reply);
    if (reply.stopReason === "pause_turn") return paused(reply);
    let message = reply.message;
    let truncatedCalls: ToolUseBlock[] = [];
    if (reply.stopReason === "max_tokens" || reply.stopReason === "context_window") {
      // A call whose input was cut off cannot run; drop it from the reply (it was never complete).
      truncatedCalls = toolUsesOf(message).filter(truncatedInput);
      if (truncatedCalls.length > 0 && typeof message.content !== "string") {
        message = { ...message, content: message.content.filter((b) => !(b.type === "tool_use" && truncatedCalls.includes(b as ToolUseBlock))) };
      }
      if (toolUsesOf(message).length === 0) return cutOff(message, truncatedCalls, reply.stopReason === "context_window");
    }
    if (!nonEmpty(message)) message = { role: "assistant", content: [{ type: "text", text: "(no reply)" }] };
    conversation.append(message);
    const uses = toolUsesOf(message);
    if (uses.length === 0) return { next: "stop", stop: "end_turn", text: continued + textOf(message) };
    // Tools run: a new chain of continuations starts after them.
    continuations = 0;
    continued = "";
    return { next: "tools", uses, truncatedCalls };
  };
}
