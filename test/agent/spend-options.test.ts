// runAgent's spending limit is checked at the door: a limit that could never stop the run (NaN,
// negative, Infinity, or no requestCost to count with) is a one-line error before any call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runAgent } from "../../src/agent/loop.ts";
import { createEngine } from "../../src/engine/index.ts";
import { scriptedClient } from "../support/scripted-client.ts";

const base = () => ({ engine: createEngine({ contextWindow: 100_000, maxOutputTokens: 8_000 }), model: "m", maxOutputTokens: 1_000, requestCost: () => 0.01 });

test("maxBudgetUsd: NaN, negative, Infinity, a string, or no requestCost are refused in one line, and no call is made", async () => {
  for (const [bad, why] of [[Number.NaN, /maxBudgetUsd must be a number of dollars ≥ 0, got NaN/], [-1, /got -1/], [Infinity, /got Infinity/], ["5", /got "5"/]] as const) {
    const client = scriptedClient(["hi"]);
    await assert.rejects(runAgent([], "go", { ...base(), client, maxBudgetUsd: bad as number }), (e: Error) => why.test(e.message) && !e.message.includes("\n"));
    assert.equal(client.requests.length, 0);
  }
  const client = scriptedClient(["hi"]);
  const { requestCost: _, ...noPrice } = base();
  await assert.rejects(runAgent([], "go", { ...noPrice, client, maxBudgetUsd: 1 }), /maxBudgetUsd needs requestCost/);
  assert.equal(client.requests.length, 0);
  // A valid one runs.
  const ok = await runAgent([], "go", { ...base(), client: scriptedClient(["hi"]), maxBudgetUsd: 1 });
  assert.equal(ok.text, "hi");
});
