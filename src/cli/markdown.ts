// The model's replies as Markdown in the terminal: headings, emphasis, lists, tables, code fences
// with syntax highlighting (marked + marked-terminal, which highlights through cli-highlight).
// Streaming-safe: text arrives in deltas; each block is rendered once it is complete (a blank
// line outside a code fence ends it), the rest when the reply ends. The cut points depend only on
// the text, so the output is the same however the deltas were split.
import { stripVTControlCharacters } from "node:util";
import { Marked } from "marked";
import { markedTerminal } from "marked-terminal";

export type Render = (markdown: string) => string;

export function createRenderer(opts: { color: boolean; width: number }): Render {
  const marked = new Marked(markedTerminal({ width: Math.max(20, opts.width), reflowText: false, tab: 2, emoji: false }) as never);
  return (md) => {
    let out: string;
    try {
      out = marked.parse(md, { async: false }) as string;
    } catch {
      out = md; // never lose the model's words over a rendering problem
    }
    if (!opts.color) out = stripVTControlCharacters(out);
    // One blank line between blocks, whatever the renderer added.
    return `${out.replace(/^\n+/, "").replace(/\n+$/, "")}\n\n`;
  };
}

/** End of the first complete block: just after a blank line that is outside a code fence; 0 if none yet. */
export function firstCut(text: string): number {
  let inFence = false;
  let fence = "";
  let pos = 0;
  let seenContent = false;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    if (nl < 0) return 0; // the last line is not finished yet
    const line = text.slice(pos, nl);
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (!inFence) {
        inFence = true;
        fence = m[1]!;
      } else if (m[1]!.startsWith(fence[0]!) && m[1]!.length >= fence.length && line.trim() === m[1]) inFence = false;
    }
    if (!inFence && line.trim() === "" && seenContent) return nl + 1;
    if (line.trim() !== "") seenContent = true;
    pos = nl + 1;
  }
  return 0;
}

export class MarkdownStream {
  private buf = "";
  constructor(
    private readonly render: Render,
    private readonly write: (s: string) => void,
  ) {}

  /** True while part of a block is held back (not printed yet). */
  get pending(): boolean {
    return this.buf.trim() !== "";
  }

  push(delta: string): void {
    this.buf += delta;
    for (let cut = firstCut(this.buf); cut > 0; cut = firstCut(this.buf)) {
      const block = this.buf.slice(0, cut);
      this.buf = this.buf.slice(cut);
      if (block.trim()) this.write(this.render(block));
    }
  }

  /** The end of the reply (or a cancel): render what is left. */
  flush(): void {
    const rest = this.buf;
    this.buf = "";
    if (rest.trim()) this.write(this.render(rest));
  }

  /** Drops what is held back (a turn cancelled mid-block: nothing late may reach the prompt line). */
  discard(): string {
    const rest = this.buf;
    this.buf = "";
    return rest;
  }
}
