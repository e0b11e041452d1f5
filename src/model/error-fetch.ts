// A fetch for the `openai` package (or anything built on it: ChatOpenAI, the Agents SDK) that
// keeps a server's error body where the SDK reads it. vLLM, SGLang, TensorRT-LLM, FastChat and
// Mistral put their error at the top level ({"object":"error","message":…}); the SDK reads only
// `error`, so their context errors arrive as "400 status code (no body)" and nothing can tell a
// prompt that is too long from any other refusal. Such a body is rewrapped as {error: {…}}.
//   new OpenAI({ fetch: withErrorBodies() })
//   new ChatOpenAI({ configuration: { fetch: withErrorBodies() } })

/** `base` (the global fetch by default) with non-2xx top-level error bodies rewrapped as `{ error }`. */
export function withErrorBodies(base: typeof fetch = (input, init) => fetch(input, init)): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    if (res.ok) return res;
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const headers = new Headers(res.headers);
    headers.delete("content-length");
    headers.delete("content-encoding");
    const b = body as Record<string, unknown> | undefined;
    // Mistral: {"object":"error","message":…,"type":…}; some put the text under `detail`.
    const message = b !== null && typeof b === "object" && !Array.isArray(b) && !("error" in b) ? (typeof b.message === "string" ? b.message : typeof b.detail === "string" ? b.detail : undefined) : undefined;
    const out = message !== undefined ? JSON.stringify({ error: { message, type: b!.type ?? null, code: b!.code ?? null, param: b!.param ?? null } }) : text;
    return new Response(out, { status: res.status, statusText: res.statusText, headers });
  };
}
