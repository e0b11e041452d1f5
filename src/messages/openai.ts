// Converters between lethe's Anthropic-shape messages and OpenAI Chat Completions messages.
//
// Anthropic → OpenAI → Anthropic is lossless. Whatever the OpenAI shape cannot say rides in
// the optional `lethe` property (see LetheExtension), written only when the plain decoding
// of the OpenAI message would not give the original back. `strict: true` drops `lethe` and
// `reasoning_content` for servers that reject unknown fields; that trip is lossy (is_error
// becomes an "Error: " prefix, signatures, redacted thinking and block order are lost).
//
// Mapping: tool_use → tool_calls (arguments = JSON.stringify(input)); a user message's
// tool_result blocks → one `tool` message each, then its other blocks → one `user` message;
// thinking → `reasoning_content`; images → image_url (base64 as a data: URL). Back from
// OpenAI, a run of tool messages and the user message right after it form one user message.
//
// Tool call arguments that are not a JSON object (invalid JSON, "", arrays, …) decode to
// input {"_raw": arguments}, and such an input encodes back to the raw string, so nothing
// is lost and the agent still sees what the model wrote.
//
// Layout: ./openai-to.ts (toOpenAI), ./openai-from.ts (fromOpenAI), ./openai-shared.ts (what
// both use: tool call arguments, images, content parts), ./openai-types.ts (the OpenAI shapes).

export type * from "./openai-types.ts";
export { toOpenAI, type ToOpenAIOptions } from "./openai-to.ts";
export { fromOpenAI } from "./openai-from.ts";
