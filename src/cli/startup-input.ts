// Keys typed while the REPL starts. Until readline takes the terminal over, it is in cooked mode
// and echoes them: an arrow key shows as `^[[A` above the banner. Raw mode from the first moment
// keeps them off the screen; what was typed is handed to readline when it starts (an Up arrow
// then recalls the history, typed text lands in the prompt), or dropped before the trust
// question, which type-ahead must not answer.

interface Held {
  stdin: NodeJS.ReadStream;
  chunks: Buffer[];
  onData: (d: Buffer) => void;
}

let held: Held | undefined;

/**
 * Raw mode (no echo) until releaseStartupInput(), on a terminal (stdin and stdout) only. Raw
 * mode turns the terminal's own Ctrl-C off: pressed now, it still ends lethe (exit 130).
 */
export function holdStartupInput(stdin: NodeJS.ReadStream, stdout: NodeJS.WriteStream): void {
  if (held || !stdin.isTTY || !stdout.isTTY || typeof stdin.setRawMode !== "function") return;
  const chunks: Buffer[] = [];
  const onData = (d: Buffer) => {
    if (d.includes(3)) {
      stdin.setRawMode(false);
      stdout.write("\n");
      process.exit(130);
    }
    chunks.push(d);
  };
  stdin.setRawMode(true);
  stdin.on("data", onData);
  held = { stdin, chunks, onData };
}

/** Ends the hold: what was typed goes back to stdin for the next reader, or is dropped (`discard`). */
export function releaseStartupInput(opts: { discard?: boolean } = {}): void {
  if (!held) return;
  const { stdin, chunks, onData } = held;
  held = undefined;
  stdin.off("data", onData);
  stdin.pause();
  if (!opts.discard && chunks.length > 0) stdin.unshift(Buffer.concat(chunks));
}
