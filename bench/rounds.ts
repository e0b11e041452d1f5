// Long synthetic sessions from real material, for bench:scale and bench:resume: the shared
// corpus's rounds (each assistant turn with the user message that answers it), cycled, each
// copy with tool ids of its own (a real session never repeats one).
import { resolve } from "node:path";
import type { ContentBlock, Message } from "../src/messages/types.ts";
import { loadCorpus } from "./replay.ts";

export type Round = [assistant: Message, user: Message];

/** The corpus's first message (a task) and its rounds, in corpus order. */
export function corpusRounds(root: string): { first: Message; rounds: Round[] } {
  const sessions = loadCorpus(resolve(root, "../shared/corpus/real_sessions.jsonl"));
  const rounds: Round[] = [];
  for (const s of sessions) {
    for (let i = 1; i + 1 < s.messages.length; i += 2) {
      const a = s.messages[i]!, u = s.messages[i + 1]!;
      if (a.role === "assistant" && u.role === "user") rounds.push([a, u]);
    }
  }
  return { first: sessions[0]!.messages[0]!, rounds };
}

const blocks = (m: Message): ContentBlock[] => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content);

/** Round k as new objects, its tool ids suffixed with k. */
export function freshRound([a, u]: Round, k: number): Round {
  const id = (x: string) => `${x}~${k}`;
  return [
    { role: "assistant", content: blocks(a).map((b) => (b.type === "tool_use" ? { ...b, id: id(b.id) } : { ...b })) },
    { role: "user", content: blocks(u).map((b) => (b.type === "tool_result" ? { ...b, tool_use_id: id(b.tool_use_id) } : { ...b })) },
  ];
}
