// The replay's stand-in for the disk, for policies that restore recently read files after a
// summary (lethe, claude-code). There is no workspace in a replay, so a path reads as the latest
// content of that path seen in the recorded history's read results so far (Read / read_file /
// open / view calls, and shell `cat FILE` / `sed -n '…p' FILE`), with the tools' decorations
// stripped (line-number prefixes such as "     1→" or "12:", <returncode>/<output> wrappers,
// system reminders); undefined if the path was never read, or the read failed. Every policy gets
// the same view at the same request.
import { resultPlainText } from "../../src/messages/blocks.ts";
import type { Message, ToolUseBlock } from "../../src/messages/types.ts";
import { callFiles } from "../../src/compaction/state/ledger.ts";

const READ_TOOLS = new Set(["read", "read_file", "open", "view", "notebookread"]);

/** `cd DIR && ` prefixes the agents put before a command. */
const CD_PREFIX = /^\s*cd\s+(?:'[^']*'|"[^"]*"|\S+)\s*&&\s*/;
const CAT = /^cat\s+(?:-n\s+)?(['"]?)([^\s'"|;&<>]+)\1\s*$/;
const SED_N = /^sed\s+-n\s+(['"])[^'"]*\1\s+(['"]?)([^\s'"|;&<>]+)\2\s*$/;

/** The file a call reads whole or in part, when its result is that file's text; else undefined. */
export function readPathOf(use: ToolUseBlock): string | undefined {
  const name = use.name.toLowerCase();
  const input = (use.input ?? {}) as Record<string, unknown>;
  if (READ_TOOLS.has(name) || ((name === "str_replace_editor" || name === "str_replace_based_edit_tool") && input.command === "view")) {
    return callFiles(use).read[0];
  }
  const raw = input.command ?? input.cmd;
  if (typeof raw !== "string") return undefined;
  let command = raw;
  while (CD_PREFIX.test(command)) command = command.replace(CD_PREFIX, "");
  command = command.trim();
  const cat = CAT.exec(command);
  if (cat) return cat[2];
  const sed = SED_N.exec(command);
  if (sed) return sed[3];
  return undefined;
}

/** The file text inside a read result, or undefined when the read failed. */
export function fileTextOf(result: string, isError: boolean | undefined): string | undefined {
  if (isError) return undefined;
  let text = result;
  const wrapped = /^\s*<returncode>(-?\d+)<\/returncode>\s*<output>\n?([\s\S]*?)\n?<\/output>\s*$/.exec(text);
  if (wrapped) {
    if (wrapped[1] !== "0") return undefined;
    text = wrapped[2]!;
  }
  text = text.replace(/\n?<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, "");
  const lines = text.split("\n");
  const arrow = /^\s*\d+→/;
  const colon = /^\d+:/;
  if (lines.length > 0 && lines.filter((l) => arrow.test(l)).length >= lines.length * 0.8) {
    text = lines.map((l) => l.replace(arrow, "")).join("\n");
  } else if (/^\[File: [^\]]*\]\r?$/.test(lines[0] ?? "")) {
    // SWE-agent's open: a header, "(N more lines above/below)" notes, "12:" prefixes.
    text = lines
      .filter((l, i) => !(i === 0 || /^\(\d+ more lines (?:above|below)\)\r?$/.test(l)))
      .map((l) => l.replace(colon, ""))
      .join("\n");
  }
  if (text.trim() === "" || /^(?:cat|sed): .*(?:No such file|Is a directory)/.test(text)) return undefined;
  return text;
}

export interface FileView {
  /** Feed the recorded messages in order. */
  add(message: Message): void;
  read(path: string): string | undefined;
}

export function createFileView(): FileView {
  const pending = new Map<string, string>();
  const files = new Map<string, string>();
  return {
    add(m) {
      if (typeof m.content === "string") return;
      for (const b of m.content) {
        if (b.type === "tool_use") {
          const p = readPathOf(b);
          if (p) pending.set(b.id, p);
        } else if (b.type === "tool_result") {
          const p = pending.get(b.tool_use_id);
          if (p === undefined) continue;
          pending.delete(b.tool_use_id);
          const text = fileTextOf(resultPlainText(b.content), b.is_error);
          if (text !== undefined) files.set(p, text);
        }
      }
    },
    read: (path) => files.get(path),
  };
}
