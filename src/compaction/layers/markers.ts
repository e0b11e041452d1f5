// The plain-text markers layers leave behind. Each one says what was there and how
// to get it back, so the model can act on it (re-run, re-read, or recall).
import type { ToolUseBlock } from "../../messages/types.ts";
import { clippedLine } from "../../messages/one-line.ts";

import { CLEARED_PREFIX, PERSISTED_CLOSE, PERSISTED_TAG, SNIP_PREFIX, cleared, persisted } from "../state/tags.ts";

export { CLEARED_PREFIX, PERSISTED_TAG, SNIP_PREFIX };

// One formatter for every marker: n.toLocaleString("en-US") builds a new one on each call (~10 µs
// each, and micro and snip write several markers a request); format() gives the same text.
const EN_US = new Intl.NumberFormat("en-US");
// Below 1,000 a whole number is written as String() writes it (a snip's count of messages).
const fmt = (n: number) => (Number.isInteger(n) && n >= 0 && n < 1000 && !Object.is(n, -0) ? String(n) : EN_US.format(n));

export function persistedMarker(args: {
  toolUseId: string;
  /** Where the full output was saved; absent when saving failed (`unsaved` says why). */
  path?: string;
  unsaved?: string;
  /** The session transcript holds the full result (recall can find it there). */
  archived?: boolean;
  chars: number;
  tokens: number;
  preview: string;
}): string {
  const where =
    args.path !== undefined && /^mem:\/\//.test(args.path)
      ? `The full output is saved at ${args.path}; that is in the memory of the program running this session, not a file: ask for tool result "${args.toolUseId}" with its recall tool if it has one.`
      : args.path !== undefined
      ? `The full output is saved at ${args.path}; read it in slices with read_file (offset/limit) or recall "${args.toolUseId}".`
      : `It could not be saved to disk (${args.unsaved ?? "unknown error"}); ${args.archived ? `the full output stays in the session transcript: recall "${args.toolUseId}"` : "only the preview below is left"}.`;
  const head = `${PERSISTED_TAG}\nThis tool result was too large to keep in context (${fmt(args.chars)} chars, ~${fmt(args.tokens)} tokens). ${where}`;
  const preview = args.preview.length > 0 ? `\nPreview (first ${fmt(args.preview.length)} chars):\n${args.preview}\n…` : "";
  return `${head}${preview}\n${PERSISTED_CLOSE}`;
}

export const isPersistedMarker = persisted.is;
export const isClearedPlaceholder = cleared.is;
/** The saved path inside a persisted marker, so clearing the marker later keeps it. */
export const persistedPath = persisted.path;

/** A short description of what a tool call asked for (command, path, pattern). */
export function describeCall(use: ToolUseBlock | undefined): string {
  if (!use) return "an earlier tool call";
  const input = (use.input ?? {}) as Record<string, unknown>;
  const key = ["command", "cmd", "file_path", "path", "pattern", "query", "url", "filename"].find(
    (k) => typeof input[k] === "string",
  );
  if (!key) return use.name;
  // Its first 117 characters and "..." when longer than 120 (a heredoc can be kilobytes).
  return `${use.name} ${JSON.stringify(clippedLine(String(input[key]), 120))}`;
}

export function clearedPlaceholder(args: {
  toolUseId: string;
  call: string;
  tokens: number;
  /** Where the original was saved; without it, the original is in the session transcript. */
  savedPath?: string;
  /** Images or documents the result held (described): the saved copy is text, the transcript has them. */
  media?: string[];
}): string {
  const where = args.savedPath
    ? `read the saved copy at ${args.savedPath} (recall "${args.toolUseId}")`
    : `recall "${args.toolUseId}" to read the original from the session transcript`;
  const media = args.media?.length ? ` It held ${args.media.join(", ")} (the session transcript keeps ${args.media.length === 1 ? "it" : "them"}).` : "";
  return `${CLEARED_PREFIX} to free context: ${args.call}, ~${fmt(args.tokens)} tokens. Re-run it for fresh output, or ${where}.${media}]`;
}

export function snipBoundary(args: { removed: number; from: number; to: number; archivePath?: string }): string {
  const where = args.archivePath ? ` (${args.archivePath})` : "";
  return (
    `${SNIP_PREFIX}${fmt(args.removed)} earlier messages (#${args.from}-#${args.to - 1}) were removed from the ` +
    `middle of this conversation to free context. They are kept in full in the session transcript${where}; ` +
    `use the recall tool to search or read them.]`
  );
}

/**
 * The size a persisted marker or cleared placeholder says its result had (its "~N tokens"), or
 * undefined for any other content. What a result cost before the layers shrank it.
 */
export function recordedTokens(content: unknown): number | undefined {
  if (typeof content !== "string" || !(isPersistedMarker(content) || isClearedPlaceholder(content))) return undefined;
  const m = /~([\d,]+) tokens/.exec(content.slice(0, 600));
  return m ? Number(m[1]!.replace(/,/g, "")) : undefined;
}
