// What a request carries besides the messages, measured from what the adapter is handed: the
// system prompt and each tool's name, description and input schema, as the provider receives them
// (a function definition in JSON). An estimate like every other count before the first reply;
// the provider's usage then anchors the meter.
import { z } from "zod";
import type { TokenCounter } from "../tokens/count.ts";

/** A tool's input schema as JSON Schema: zod 4, an AI SDK jsonSchema() wrapper, a LangChain tool's schema, or a JSON Schema itself. */
function schemaJson(schema: unknown): unknown {
  if (schema === null || typeof schema !== "object") return {};
  const s = schema as { jsonSchema?: unknown; _zod?: unknown; toJSONSchema?: () => unknown; type?: unknown; properties?: unknown };
  if (s.jsonSchema !== undefined && typeof s.jsonSchema === "object") return s.jsonSchema;
  if (s._zod !== undefined) {
    try {
      return z.toJSONSchema(schema as z.ZodType);
    } catch {
      return {};
    }
  }
  if (typeof s.toJSONSchema === "function") {
    try {
      return s.toJSONSchema();
    } catch {
      return {};
    }
  }
  return s.type !== undefined || s.properties !== undefined ? schema : {};
}

/** One tool as a provider receives it. */
export interface ToolShape {
  name: string;
  description?: string;
  schema?: unknown;
}

/** Tokens of the system prompt and the tool definitions. Never throws: what cannot be read counts as nothing. */
export function fixedTokensOf(counter: TokenCounter, system: string | undefined, tools: readonly ToolShape[]): number {
  let n = system ? counter.text(system) : 0;
  for (const t of tools) {
    let json: string;
    try {
      json = JSON.stringify({ type: "function", function: { name: t.name, description: t.description ?? "", parameters: schemaJson(t.schema) } });
    } catch {
      json = t.name + (t.description ?? "");
    }
    n += counter.text(json) + 8;
  }
  return n;
}

/** A tool as a request carries it: a LangChain or AI SDK tool (name, description, schema) or a provider's definition ({ function: { name, description, parameters } }). */
export function toolShape(t: unknown): ToolShape {
  const o = (t ?? {}) as { name?: unknown; description?: unknown; schema?: unknown; function?: { name?: unknown; description?: unknown; parameters?: unknown } };
  const name = typeof o.name === "string" ? o.name : typeof o.function?.name === "string" ? o.function.name : "tool";
  const description = typeof o.description === "string" ? o.description : typeof o.function?.description === "string" ? o.function.description : undefined;
  return { name, ...(description !== undefined ? { description } : {}), schema: o.schema ?? o.function?.parameters };
}
