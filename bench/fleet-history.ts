// The conversations of bench:fleet, built the same way by the workers and the checker: a task, then
// one real round of the shared corpus per turn (tool ids of its own), chosen per conversation.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Message } from "../src/messages/types.ts";
import { type Round, corpusRounds, freshRound } from "./rounds.ts";

/** The window every engine of the run works to (--window N in bench:fleet; the workers inherit it). */
export function fleetWindow(): { contextWindow: number; maxOutputTokens: number } {
  const contextWindow = Number(process.env.LETHE_FLEET_WINDOW ?? 12_000);
  return { contextWindow, maxOutputTokens: Math.min(2_000, Math.floor(contextWindow / 4)) };
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
let corpus: { first: Message; rounds: Round[] } | undefined;

/** The host's history before turn t of conversation c: the task and rounds 0..t. */
export function fleetHistory(c: number, t: number): Message[] {
  corpus ??= corpusRounds(ROOT);
  const { rounds } = corpus;
  const out: Message[] = [{ role: "user", content: [{ type: "text", text: `Conversation ${c}: fix the failing tests in this repository.` }] }];
  for (let i = 0; i <= t; i++) out.push(...freshRound(rounds[(c * 37 + i) % rounds.length]!, c * 1000 + i));
  return out;
}
