// Errors the CLI reports as one line (never a stack trace), with the exit code they mean.

import { LetheError } from "../errors.ts";
import { clippedLine } from "../messages/one-line.ts";

/** A bad command line: one-line message, exit 2. */
export class UsageError extends LetheError {
  constructor(message: string) {
    super("usage", message);
  }
}

/** A problem with the configuration (settings file, environment): one-line message, exit 1. */
export class ConfigError extends LetheError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("config", message, options);
  }
}

const secrets = new Set<string>();

/** A credential lethe holds (API key, token): never printed or written by the CLI. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 8 && value !== "no-key") secrets.add(value);
}

/** Credentials out of a text: `user:key@` in URLs, and every registered secret. */
export function redact(text: string): string {
  let t = text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, "$1[redacted]@");
  for (const s of secrets) if (t.includes(s)) t = t.split(s).join("[redacted]");
  return t;
}

/** Collapses any message to one line. */
export function oneLine(text: string, max = 500): string {
  return clippedLine(text, max, "…");
}

/** The one line the CLI prints for an error: "lethe: …" (the prefix is not doubled). */
export function errorLine(e: unknown): string {
  let msg = e instanceof Error ? e.message : String(e);
  if (!msg && e instanceof Error) msg = e.name;
  // The SDK's network errors say little; keep their cause when there is one and it is news
  // ("Connection error." is already in "connection failed: Connection error: fetch failed").
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : "";
  const bare = (t: string) => t.toLowerCase().replace(/[.\s]+$/, "");
  if (cause && !bare(msg).includes(bare(cause)) && /connection|fetch failed|network/i.test(msg)) msg = `${msg.replace(/\.$/, "")} (${cause})`;
  // No doubled punctuation where messages were joined ("error.: cause", "failed.." ), and the
  // SDK's bare "Connection error" not after lethe's own "connection failed".
  msg = redact(oneLine(msg)).replace(/\.+:/g, ":").replace(/\.{2,}$/, ".").replace(/:\s*:/g, ":");
  msg = msg.replace(/(connection failed): connection error\.?(?=:|$)/i, "$1");
  return msg.startsWith("lethe:") ? msg : `lethe: ${msg}`;
}

export function exitCodeOf(e: unknown): number {
  const code = (e as { exitCode?: unknown })?.exitCode;
  return typeof code === "number" ? code : 1;
}
