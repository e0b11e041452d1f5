import type { Policy } from "../types.ts";
import { claudeCodePolicy } from "./claude-code.ts";
import { lethePolicy } from "./lethe.ts";
import { seedPolicy } from "./seed.ts";

/** Every policy, in report order. */
export const ALL_POLICIES: readonly Policy[] = [lethePolicy, seedPolicy, claudeCodePolicy];

export function policyByName(name: string): Policy {
  const p = ALL_POLICIES.find((x) => x.name === name);
  if (!p) throw new Error(`unknown policy "${name}" (known: ${ALL_POLICIES.map((x) => x.name).join(", ")})`);
  return p;
}
