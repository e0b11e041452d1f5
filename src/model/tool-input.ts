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

/** Whether a JSON value nests deeper than `max` (iterative: safe at any depth). */
export function depthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (d >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === "object" && child !== null) stack.push([child, d + 1]);
  }
  return false;
}
