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
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v;
  } catch {
    // kept raw below
  }
  return { _raw: json };
}
