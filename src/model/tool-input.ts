// Streamed tool-call arguments → a tool_use input.

/**
 * "" is {} (a call without arguments); a JSON object is itself; anything else (invalid or
 * truncated JSON, an array, a string) is kept raw as {"_raw": text}, the convention of the
 * OpenAI converters (src/messages/openai.ts), so nothing the model wrote is lost.
 */
export function parseToolInput(json: string): unknown {
  if (json.trim() === "") return {};
  try {
    const v: unknown = JSON.parse(json);
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      // Nested past any real tool's input: every recursive walk (token counts, the transcript's
      // JSON) would overflow the stack. Kept as text, and the model is told why.
      if (depthExceeds(v, MAX_INPUT_DEPTH)) return { _raw: json, _error: `the arguments are nested more than ${MAX_INPUT_DEPTH} levels deep` };
      return v;
    }
  } catch {
    // kept raw below
  }
  return { _raw: json };
}

export const MAX_INPUT_DEPTH = 100;

/** Whether a JSON value nests deeper than `max` (safe at any depth: it never recurses past `max`). */
export function depthExceeds(value: unknown, max: number): boolean {
  return exceeds(value, 0, max);
}

// Recursive, but never deeper than `max` frames (it answers true there), and with no allocation:
// this runs on every tool input of every history a public entry point is given.
function exceeds(v: unknown, d: number, max: number): boolean {
  if (typeof v !== "object" || v === null) return false;
  if (d >= max) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (exceeds(v[i], d + 1, max)) return true;
    return false;
  }
  for (const k in v) if (Object.prototype.hasOwnProperty.call(v, k) && exceeds((v as Record<string, unknown>)[k], d + 1, max)) return true;
  return false;
}
