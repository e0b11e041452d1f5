// createEngine's options (and observe's usage) at the door: every key known, every value of its
// type, in one short LetheInputError. Never Node's ERR_INVALID_ARG_TYPE from a store deep inside,
// a typo silently ignored (`sesionDir`), a NaN threshold, or a layer that loops. Read through
// readSafely: a caller's getter or Proxy that throws is refused the same way.
import { closest } from "../errors.ts";
import { type CompactionConfig, resolveConfig } from "../compaction/config/config.ts";
import type { EngineOptions } from "./contract.ts";
import { MAX_CONVERSATION_ID } from "../store/types.ts";
import { LetheInputError, readSafely, show } from "../messages/input.ts";
import { thrownText } from "../messages/input-values.ts";
import type { Usage } from "../tokens/meter.ts";

/** What an option must be, when `v` (never undefined) is not that; null when it is. */
type Check = (v: unknown) => string | null;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const fn: Check = (v) => (typeof v === "function" ? null : "must be a function");
const path: Check = (v) => (typeof v !== "string" ? "must be a string (a folder path)" : v.includes("\0") ? "must not contain a NUL character" : null);
const oneOf =
  (...values: string[]): Check =>
  (v) =>
    values.includes(v as string) ? null : `must be ${values.map((x) => JSON.stringify(x)).join(" or ")}`;
/** An object with these methods (required) and these optional ones (functions when present). */
const withMethods =
  (required: string[], optional: string[] = []): Check =>
  (v) =>
    isObj(v) && required.every((m) => typeof v[m] === "function") && optional.every((m) => v[m] === undefined || typeof v[m] === "function")
      ? null
      : `must be an object with ${[...required, ...optional.map((m) => `${m}?`)].join(", ")} method(s)`;

/** Every option, with its check: a Record over the interface's keys, so a new option cannot miss one. */
const OPTIONS: Record<keyof EngineOptions, Check> = {
  // The window: checked together below (their messages predate this table).
  contextWindow: () => null,
  maxOutputTokens: () => null,
  sessionDir: path,
  store: (v) => (isObj(v) && typeof v.conversation === "function" ? null : withMethods(["save"], ["load"])(v) && "must be a conversation store (connectStore) or an object with save and load? methods"),
  conversationId: (v) => (typeof v === "string" && v.length > 0 && v.length <= MAX_CONVERSATION_ID && !v.includes("\0") ? null : `must be a string of 1–${MAX_CONVERSATION_ID} characters without NUL`),
  config: (v) => (isObj(v) ? null : "must be an object of compaction settings"),
  model: (v) => (typeof v === "string" ? null : "must be a string (the model's name)"),
  media: oneOf("anthropic", "openai"),
  summarizer: (v) => (isObj(v) && isObj(v.client) && typeof v.client.stream === "function" && typeof v.model === "string" ? null : "must be { client, model }: a ModelClient and a model name"),
  summarizerMode: oneOf("model", "digest", "server"),
  requestCost: (v) => (typeof v === "function" ? null : "must be a function (model, usage) => dollars"),
  hooks: withMethods([], ["preCompact", "postCompact"]),
  transcript: withMethods(["appendBoundary"], ["uuidOf"]),
  transcriptHoldsHistory: (v) => (typeof v === "boolean" ? null : "must be true or false"),
  workspace: path,
  readFile: fn,
  now: fn,
  onEvent: fn,
};
const KNOWN = Object.keys(OPTIONS);

const refuse = (message: string): never => {
  throw new LetheInputError("createEngine", "", `lethe: ${message}`);
};

/** Bad options are a one-line error at the door. */
export function checkOptions(opts: EngineOptions): void {
  readSafely("createEngine: options", () => check(opts));
}

function check(opts: EngineOptions): void {
  if (opts === null || typeof opts !== "object") refuse(`createEngine needs an options object ({ contextWindow, maxOutputTokens, … }), got ${show(opts)}`);
  for (const key of Object.keys(opts)) {
    if (Object.prototype.hasOwnProperty.call(OPTIONS, key)) continue;
    // Edit distance over a 1 MB key would take seconds: no suggestion for what is no typo.
    const hint = key.length <= 40 ? closest(key, KNOWN) : undefined;
    refuse(`createEngine has no option ${show(key)}${hint ? ` (did you mean ${hint}?)` : ""}`);
  }
  const { contextWindow: w, maxOutputTokens: out } = opts;
  const got = (v: unknown) => (v === undefined ? "nothing" : show(v));
  if (typeof w !== "number" || !Number.isSafeInteger(w) || w <= 0) refuse(`contextWindow must be a positive whole number of tokens, got ${got(w)}`);
  if (typeof out !== "number" || !Number.isSafeInteger(out) || out < 0) refuse(`maxOutputTokens must be a whole number of tokens ≥ 0, got ${got(out)}`);
  if (out >= w) refuse(`maxOutputTokens (${out}) must be below contextWindow (${w})`);
  for (const key of KNOWN) {
    const v = opts[key as keyof EngineOptions];
    if (v === undefined) continue;
    const problem = OPTIONS[key as keyof EngineOptions](v);
    if (problem) refuse(`${key} ${problem}, got ${show(v)}`);
  }
  const conversational = isObj(opts.store) && typeof opts.store.conversation === "function";
  if (conversational && opts.conversationId === undefined) refuse("a conversation store needs a conversationId (the chat's or thread's id)");
  if (!conversational && opts.conversationId !== undefined) refuse("conversationId needs a conversation store (store: await connectStore(…))");
  if (opts.summarizerMode === "server" && !(opts.summarizer as { client?: { serverCompaction?: unknown } } | undefined)?.client?.serverCompaction) {
    refuse(`summarizerMode "server" needs a summarizer whose client compacts on the server (lethe's Anthropic client: createAnthropicClient)`);
  }
  const th = opts.config?.threshold?.tokens;
  if (typeof th === "number" && th >= w) throw new LetheInputError("createEngine", "", `lethe config: threshold.tokens (${th}) must be below contextWindow (${w})`);
}

/** The configuration the options ask for (defaults filled in), or a one-line LetheInputError. */
export function configOf(opts: EngineOptions): CompactionConfig {
  try {
    return resolveConfig(opts.config);
  } catch (e) {
    // resolveConfig's own one-liners as they are; what a caller's getter or Proxy threw, in short.
    if (e instanceof LetheInputError) throw e;
    throw new LetheInputError("config", "", `lethe config: cannot be read: ${thrownText(e)}`);
  }
}

/** observe's usage as a plain object of numbers (read once: a getter or Proxy cannot throw later). */
export function checkUsage(usage: Usage): Usage {
  return readSafely("observe: usage", () => {
    if (!isObj(usage)) throw new LetheInputError("observe: usage", `must be the provider's usage object, got ${show(usage)}`);
    const out: Usage = { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens };
    if (usage.cache_creation_input_tokens != null) out.cache_creation_input_tokens = usage.cache_creation_input_tokens;
    if (usage.cache_read_input_tokens != null) out.cache_read_input_tokens = usage.cache_read_input_tokens;
    if (usage.cleared_input_tokens != null) out.cleared_input_tokens = usage.cleared_input_tokens;
    for (const [k, v] of Object.entries(out)) {
      // output_tokens may be missing (counted as 0 where it is read); a BigInt or a string never.
      if (typeof v !== "number" && !(k === "output_tokens" && v == null)) throw new LetheInputError(`observe: usage.${k}`, `must be a number of tokens, got ${show(v)}`);
    }
    return out;
  });
}
