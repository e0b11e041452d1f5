// Every piece of compaction state lethe carries in message text, in one place: its tag, and where
// the next compaction (or the CLI) must read it back, the render/parse pair. Other modules import
// these; none writes or matches a tag of its own (test/compaction/tags.test.ts round-trips each).

/** A user message carried verbatim through a summary. */
export const USER_MESSAGE_PREFIX = "[an earlier message from the user, verbatim]\n";
/** The user's latest request, carried when it is not in the kept tail. */
export const LATEST_REQUEST_PREFIX = "[the user's latest request, verbatim]\n";
/** The continuation note that opens a rebuilt history. */
export const REBUILD_TAG = "[lethe: this session continues";
/** The todo list, carried across compactions. */
export const TODO_TAG = "<lethe-todos>";
export const TODO_CLOSE = "</lethe-todos>";
/** The file ledger (every file read and modified). */
export const LEDGER_OPEN = "<lethe-files>";
export const LEDGER_CLOSE = "</lethe-files>";
/** The work record a snip carries (commands with outcomes, the agent's conclusions). */
export const WORK_OPEN = "<lethe-work>";
export const WORK_CLOSE = "</lethe-work>";
/** The note naming the user's attachments from the compacted part. */
export const ATTACHMENTS_TAG = "[lethe: attachments from the compacted part of this conversation";
/** Files restored fresh from disk after a summary. */
export const FILES_RESTORED_TAG = "[lethe: files recently read, as they are on disk now; re-read before editing if you need more]";
/** The closing instruction of a rebuilt history. */
export const CONTINUE_TAG = "[lethe: continue the work from where it stopped";
/** The summary inside the rebuild note (and what a model's summary reply wraps its notes in). */
export const SUMMARY_OPEN = "<summary>";
export const SUMMARY_CLOSE = "</summary>";
/** A file restored fresh from disk after a summary. */
export const RESTORED_FILE_OPEN = "<lethe-restored-file";
export const RESTORED_FILE_CLOSE = "</lethe-restored-file>";
/** A tool result budget moved to disk. */
export const PERSISTED_TAG = "<persisted-output>";
export const PERSISTED_CLOSE = "</persisted-output>";
/** A tool result micro cleared. */
export const CLEARED_PREFIX = "[lethe: old tool result cleared";
/** Any note lethe writes starts with one of these (snip's boundary note among them). */
export const SNIP_PREFIX = "[lethe: ";
/** repair's stand-in first user message. */
export const CONVERSATION_CONTINUES = "[conversation continues]";

export const userMessage = {
  render: (text: string): string => `${USER_MESSAGE_PREFIX}${text}`,
  parse: (block: string): string | undefined => (block.startsWith(USER_MESSAGE_PREFIX) ? block.slice(USER_MESSAGE_PREFIX.length) : undefined),
};

export const latestRequest = {
  render: (text: string): string => `${LATEST_REQUEST_PREFIX}${text}`,
  parse: (block: string): string | undefined => (block.startsWith(LATEST_REQUEST_PREFIX) ? block.slice(LATEST_REQUEST_PREFIX.length) : undefined),
};

export const summary = {
  render: (text: string): string => `${SUMMARY_OPEN}\n${text.trim()}\n${SUMMARY_CLOSE}`,
  /** The summary a rebuild note carries (between the first open and the last close tag). */
  parse: (block: string): string | undefined => {
    const s = block.indexOf(SUMMARY_OPEN);
    const e = block.lastIndexOf(SUMMARY_CLOSE);
    return s >= 0 && e > s ? block.slice(s + SUMMARY_OPEN.length, e).trim() : undefined;
  },
  /** The notes in a model's summary reply: inside <summary>, to its close or the end of a cut reply. */
  ofReply: (text: string): string | undefined => /<summary>([\s\S]*?)(<\/summary>|$)/.exec(text)?.[1],
};

/** Compiled once (no g flag, so exec keeps no state between calls). */
const RESTORED_FILE_PATH = new RegExp(`^${RESTORED_FILE_OPEN} path="([^"]+)"`);

export const restoredFile = {
  render: (path: string, body: string, lines?: string): string => `${RESTORED_FILE_OPEN} path="${path}"${lines !== undefined ? ` lines="${lines}"` : ""}>\n${body}\n${RESTORED_FILE_CLOSE}`,
  path: (block: string): string | undefined => (block.startsWith(RESTORED_FILE_OPEN) ? RESTORED_FILE_PATH.exec(block)?.[1] : undefined),
};

export const ledgerTag = {
  /** Whether a text carries a file ledger (a snip's note carries it inside its own text). */
  in: (text: string): boolean => text.includes(LEDGER_OPEN),
};

export const persisted = {
  is: (text: string): boolean => text.startsWith(PERSISTED_TAG),
  /** The saved path inside a persisted marker ("… saved at <path>; …"). */
  path: (marker: string): string | undefined => /saved at (\S+?);/.exec(marker)?.[1],
};

export const cleared = {
  is: (text: string): boolean => text.startsWith(CLEARED_PREFIX),
};

/** Text lethe wrote into a user message (not the user's own words). */
export function isLetheText(text: string): boolean {
  return text.startsWith("[lethe") || text.startsWith("<lethe-") || text.startsWith(CONVERSATION_CONTINUES);
}

export type TagKind = "user_message" | "latest_request" | "rebuild" | "todos" | "ledger" | "work" | "attachments" | "files_restored" | "continue" | "persisted" | "cleared" | "lethe_note";

/** Which piece of carried state a text is, if any (the CLI's /context counts them by this). */
export function tagOf(text: string): TagKind | undefined {
  if (text.startsWith(USER_MESSAGE_PREFIX)) return "user_message";
  if (text.startsWith(LATEST_REQUEST_PREFIX)) return "latest_request";
  if (text.startsWith(REBUILD_TAG)) return "rebuild";
  if (text.startsWith(TODO_TAG)) return "todos";
  if (text.startsWith(LEDGER_OPEN)) return "ledger";
  if (text.startsWith(WORK_OPEN)) return "work";
  if (text.startsWith(ATTACHMENTS_TAG)) return "attachments";
  if (text.startsWith(FILES_RESTORED_TAG)) return "files_restored";
  if (text.startsWith(CONTINUE_TAG)) return "continue";
  if (text.startsWith(PERSISTED_TAG)) return "persisted";
  if (text.startsWith(CLEARED_PREFIX)) return "cleared";
  return isLetheText(text) ? "lethe_note" : undefined;
}
