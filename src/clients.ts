// lethe/clients: the model clients, backed by the official SDKs (@anthropic-ai/sdk, openai).
// Kept out of the root so that importing the engine does not load either SDK.
export * from "./model/index.ts";
export { discoverOllamaContext, mayBeOllama, type OllamaContext } from "./model/ollama.ts";
