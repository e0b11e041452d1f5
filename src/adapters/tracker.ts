// What every framework adapter needs: the framework keeps its own, ever-growing message list and
// hands it over before each model call; lethe keeps the compacted history between calls and adds
// only what is new, so a summary is made once, not again at every call. Messages are written to
// the transcript as they arrive (before any layer transforms them).
import type { Engine, PrepareCall } from "../engine/index.ts";
import type { Message } from "../messages/types.ts";
import type { ModelError } from "../model/types.ts";
import type { TranscriptWriter } from "../session/transcript.ts";
import type { Usage } from "../tokens/meter.ts";

export interface TrackerOptions {
  engine: Engine;
  transcript?: TranscriptWriter;
  /** Tokens of what each request carries besides the messages (system prompt, tool schemas). */
  fixedTokens?: number;
}

export function createTracker(opts: TrackerOptions) {
  const { engine, transcript } = opts;
  /** What the adapter measured of the system prompt and tool schemas it was handed; an explicit fixedTokens wins. */
  let measured: number | undefined;
  const call = (): PrepareCall => ({ fixedTokens: opts.fixedTokens ?? measured ?? 0 });
  let history: Message[] = [];
  /** How many of the framework's messages the history already holds. */
  let covered = 0;
  let lastSent: Message[] | undefined;
  /** Replies written to the transcript when they arrived; the framework lists them again. */
  let repliesWritten = 0;

  return {
    get history(): readonly Message[] {
      return history;
    },
    /** The tokens the request carries besides the messages, as the adapter measured them. */
    measureFixed(tokens: number): void {
      measured = tokens;
    },
    get fixedTokens(): number {
      return call().fixedTokens ?? 0;
    },
    /**
     * The framework's whole list (without leading system messages, already converted), its
     * length in the framework's own messages, and a converter for the part not yet seen.
     */
    async prepare(total: number, convertFrom: (start: number) => Message[]): Promise<Message[]> {
      // Frameworks only append; a shorter list is a new conversation on this adapter.
      if (total < covered) {
        history = [];
        covered = 0;
        repliesWritten = 0;
      }
      const fresh = convertFrom(covered);
      for (const m of fresh) {
        if (m.role === "assistant" && repliesWritten > 0) repliesWritten--;
        else transcript?.appendMessage(m);
      }
      history = history.concat(fresh);
      covered = total;
      const r = await engine.beforeRequest(history, call());
      history = r.history;
      lastSent = r.history;
      return r.history;
    },
    /** The reply and the provider's usage for the request just sent. */
    observe(reply: Message, usage: Usage | undefined): void {
      transcript?.appendMessage(reply);
      repliesWritten++;
      if (lastSent && usage) engine.observe(lastSent, reply, usage, call());
    },
    /** A context-length refusal: compact harder; `total` is how many framework messages the result stands for. */
    async recover(error: ModelError, total: (history: Message[]) => number): Promise<Message[]> {
      const r = await engine.recover(history, error, call());
      history = r.history;
      lastSent = r.history;
      covered = total(history);
      return history;
    },
  };
}
