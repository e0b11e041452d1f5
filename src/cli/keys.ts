// One keypress, no Enter: the trust question before the REPL starts. On a terminal the input
// goes to raw mode for that key only; anything else (a pipe) reads a line instead.

/** Reads one key from a TTY ("\x03" for Ctrl-C, "\r" for Enter), or one line from a pipe. */
export function readKey(stdin: NodeJS.ReadStream): Promise<string> {
  return new Promise((resolve) => {
    const tty = !!stdin.isTTY && typeof stdin.setRawMode === "function";
    let buf = "";
    const done = (k: string) => {
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      if (tty) stdin.setRawMode(false);
      stdin.pause();
      resolve(k);
    };
    const onData = (d: Buffer | string) => {
      const s = d.toString();
      if (tty) return done(s);
      buf += s;
      const nl = buf.indexOf("\n");
      if (nl >= 0) done(buf.slice(0, nl).trim());
    };
    const onEnd = () => done(buf.trim());
    if (tty) stdin.setRawMode(true);
    stdin.on("data", onData);
    stdin.on("end", onEnd);
    stdin.resume();
  });
}

/** "y" / "n" / "a" …: the first character, lower-cased; Enter, Esc and Ctrl-C are "" (no). */
export function keyAnswer(key: string): string {
  const c = key.charAt(0);
  if (c === "\r" || c === "\n" || c === "\x1b" || c === "\x03" || c === "\x04") return "";
  return c.toLowerCase();
}
