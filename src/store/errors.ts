// A store that cannot do what was asked, said in one line with a code a program can switch on:
// a mistyped URL, a server that does not answer, a wrong password, a newer schema.
import { LetheError, type LetheErrorCode } from "../errors.ts";

export type StoreErrorCode = Extract<LetheErrorCode, `store_${string}`>;

/** A store that cannot do what was asked: one line, with a store_* code (see StoreErrorCode). */
export class StoreError extends LetheError {
  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** A URL with its password masked, for messages and `location`. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "****";
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:****@");
  }
}
