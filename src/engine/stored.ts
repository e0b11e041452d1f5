// An engine on a conversation store (createEngine({ store, conversationId })): a fresh engine for
// a known conversation picks up where the last one stopped, in this process or another.
//
// Before a call (syncIn): open the conversation once, adopt the state the store holds when it is
// newer than ours (another worker summarised), and record the host's new messages, each once.
// After it (syncOut): write the tool results and boundaries the layers queued (layers are
// synchronous; the store is not), and when a layer rewrote the history (a summary, a snip,
// cleared results), save that as the new state with a compare-and-set: when another process
// saved first, adopt its state instead.
import type { LedgerList } from "../compaction/types.ts";
import { contentKey } from "../messages/key.ts";
import type { Message } from "../messages/types.ts";
import type { EngineSnapshot, MeterState } from "../store/types.ts";
import type { StoreLink } from "./store-link.ts";
import type { HostView } from "./follower.ts";
import type { RequestReady } from "./contract.ts";
import { learnWindow } from "./recover.ts";
import type { EngineState } from "./state.ts";

/** Messages compared at each end of what a state covers, to recognise the same history. */
const KEYS = 8;

const keysOf = (ms: readonly Message[]): string[] => ms.map((m) => contentKey(m) ?? "");
const sameKeys = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((k, i) => k === b[i]);

/**
 * The host's whole history as a call sees it. `keys` is set when the older part is not in memory
 * (a host that passes back what lethe made of it): the content keys of its first few messages
 * and of the last few, which is all a saved state needs of them.
 */
type View = HostView & { keys?: { head: string[]; tail: string[] } };

const headKeysOf = (v: View): string[] => v.keys?.head ?? keysOf(v.slice(0, KEYS));
const tailKeysOf = (v: View): string[] => v.keys?.tail ?? keysOf(v.slice(Math.max(0, v.length - KEYS)));

/** Whether `input` begins with the history `snap` covers (its first and last few messages). */
function covers(snap: EngineSnapshot, input: View): boolean {
  if (input.length < snap.covers || input.keys) return false;
  return sameKeys(keysOf(input.slice(0, Math.min(KEYS, snap.covers))), snap.headKeys) && sameKeys(keysOf(input.slice(Math.max(0, snap.covers - KEYS), snap.covers)), snap.coverKeys);
}

/**
 * A host that keeps what lethe returned and passes it back with new messages (a checkpointed
 * agent state, a CLI's live history), in a process that never saw the host's older messages:
 * `input` begins with the stored state's rebuilt history, and stands for the messages that state
 * covers plus what follows it. Undefined when `input` does not begin so.
 */
function ownView(link: StoreLink, snap: EngineSnapshot, input: readonly Message[]): View | undefined {
  const r = snap.rebuilt.length;
  if (r === 0 || input.length < r) return undefined;
  if (link.rebuiltKeys?.version !== snap.version) link.rebuiltKeys = { version: snap.version, keys: keysOf(snap.rebuilt) };
  const want = link.rebuiltKeys.keys;
  // The first message tells most hosts apart at once (a summary is never a host's own first message).
  if ((contentKey(input[0]!) ?? "") !== want[0] || !sameKeys(keysOf(input.slice(0, r)), want)) return undefined;
  const length = snap.covers + input.length - r;
  return {
    length,
    // Only what follows the state is in memory; a caller never asks for the part before it.
    slice: (a = 0, b = length) => input.slice(r + Math.max(0, a - snap.covers), r + Math.max(0, b - snap.covers)),
    keys: { head: snap.headKeys, tail: [...snap.coverKeys, ...keysOf(input.slice(Math.max(r, input.length - KEYS)))].slice(-KEYS) },
  };
}

function adopt(s: EngineState, link: StoreLink, snap: EngineSnapshot, input: HostView): void {
  link.version = snap.version;
  link.ledger = snap.ledger;
  if (snap.window && snap.window.contextWindow < s.window.contextWindow) {
    learnWindow(s, snap.window.contextWindow, "limit_error", `an engine on this conversation learned the server's context is ${snap.window.contextWindow.toLocaleString("en-US")} tokens`);
  }
  // A host whose history is not the one the state covers (another conversation under this id,
  // a rewind before the summary): its history is prepared as given.
  if (covers(snap, input)) s.follower.adopt(input.slice(0, snap.covers), snap.rebuilt);
}

/**
 * Opens the conversation (once), adopts a newer state, records the host's new messages; returns
 * the host's whole history this input stands for (see Follower.hostView).
 */
export async function syncIn(s: EngineState, link: StoreLink, input: readonly Message[]): Promise<View> {
  if (!link.conversation) {
    link.conversation = await link.store.conversation(link.id, { ...(s.opts.workspace ? { cwd: s.opts.workspace } : {}), ...(s.opts.model ? { model: s.opts.model } : {}) });
    link.recorded = await link.conversation.messageCount();
  }
  const c = link.conversation;
  const [snap, meter] = await Promise.all([c.state(), c.meter()]);
  if (meter) adoptMeter(s, meter);
  if (snap && snap.version !== link.version) adopt(s, link, snap, s.follower.hostView(input));
  let view: View = s.follower.hostView(input);
  // Not the host's whole history but what lethe made of it, passed back: it stands for more.
  const own = snap ? ownView(link, snap, input) : undefined;
  if (own) view = own;
  if (view.length > link.recorded) {
    await c.appendMessages(link.recorded, view.slice(link.recorded));
    link.recorded = view.length;
  }
  return view;
}

const modelKey = (s: EngineState): string => s.opts.model ?? "default";

/**
 * What another engine learned from a later reply than ours: its correction (a fresh engine
 * measures with it, not with the bare estimate) and when that reply came (micro's idle path must
 * not take a warm cache for a cold one).
 */
function adoptMeter(s: EngineState, m: MeterState): void {
  if (s.lastResponseAt !== undefined && m.lastResponseAt <= s.lastResponseAt) return;
  s.lastResponseAt = m.lastResponseAt;
  if (m.model === modelKey(s)) s.factors.set(m.model, m.factor);
}

/** After a reply (engine.observe): what the meter learned goes to the store, in order, in the background. */
export function saveMeter(s: EngineState, link: StoreLink): void {
  const c = link.conversation;
  if (!c || s.lastResponseAt === undefined) return;
  const m: MeterState = { model: modelKey(s), factor: s.meter.correction(), lastResponseAt: s.lastResponseAt };
  link.writing = (link.writing ?? Promise.resolve()).then(() => c.saveMeter(m)).catch((e) => void (link.failed = e));
}

/** engine.flush(): everything queued is stored; a write that failed since the last flush is thrown. */
export async function settle(link: StoreLink): Promise<void> {
  await link.writing;
  await flush(link);
  const e = link.failed;
  link.failed = undefined;
  if (e !== undefined) throw e;
}

/** Writes what the call queued; saves a rewritten history as the new state. */
export async function syncOut(s: EngineState, link: StoreLink, input: View, r: RequestReady, rebuilt: boolean): Promise<RequestReady> {
  const c = link.conversation!;
  await flush(link);
  if (!rebuilt) return r;
  // The ledger as data: the newest compaction's that reports one (a summary, a snip), else the one before.
  const ledger = r.events.reduce<LedgerList | undefined>((l, e) => ("ledger" in e && e.ledger ? e.ledger : l), link.ledger);
  link.ledger = ledger;
  const next = { covers: input.length, headKeys: headKeysOf(input), coverKeys: tailKeysOf(input), rebuilt: r.history, window: { ...s.window }, ...(ledger ? { ledger } : {}) };
  const saved = await c.saveState(link.version, next);
  link.version = saved.state.version;
  if (saved.saved) return r;
  // Another process compacted this conversation first: its state stands from the next call on
  // (one state per conversation, not one per worker); this request goes out as prepared here.
  adopt(s, link, saved.state, input);
  return r;
}

export async function flush(link: StoreLink): Promise<void> {
  const c = link.conversation;
  if (!c) return;
  const results = [...link.results];
  link.results.clear();
  for (const [id, text] of results) await c.saveResult(id, text);
  const entries = link.entries.splice(0);
  for (const e of entries) await c.appendEntry(e);
}
