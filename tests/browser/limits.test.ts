// A run's own limits end to end, with the real extension acting on real pages: the same click
// on an unchanged page is warned about and then ends the run (LOOP_DETECTED) before it runs
// again; a step that takes the run over its token budget ends it (BUDGET_EXCEEDED) unrun.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { EventEnvelope, FrontendEvent } from "../../protocol/ts/protocol.ts";
import { api, newTask, WebClient } from "../support/clients.ts";
import type { ScriptTurn } from "../llm-server/server.ts";
import { agentStep, indexOf } from "../support/shopper.ts";
import { pageAt, startHarness } from "./harness.ts";
import type { ActionRecord, Harness } from "./harness.ts";

let h: Harness;
before(async () => (h = await startHarness({ bindings: { MIMO_AGENT_MAX_REPEATS: "4", MIMO_AGENT_MAX_TOKENS: "100000" } })));
after(async () => {
  await h?.close();
});

type Output = Extract<FrontendEvent, { type: "structuredOutput" }>;

async function run(goal: string): Promise<{ taskId: string; outcome: Output }> {
  const taskId = await newTask(h.mimo);
  const web = await WebClient.connect(h.mimo, taskId);
  web.send({ type: "user_message", content: goal });
  const outcome = (await web.waitFor((e) => e.type === "structuredOutput", "the outcome", 60_000)) as Output & EventEnvelope;
  web.close();
  return { taskId, outcome };
}

async function clicks(taskId: string): Promise<ActionRecord[]> {
  const records = (await (await api(h.mimo, `/api/task/${taskId}/actions`)).json()) as ActionRecord[];
  return records.filter((r) => r.command.name === "browser_click");
}

describe("a run's limits", () => {
  it("warns a model clicking a button that does nothing, then ends the run with LOOP_DETECTED before the click runs again", { timeout: 90_000 }, async () => {
    const effects = `${h.a}/effects.html?loop`;
    const from = h.mimo.llm.requests().length;
    // The same button each time (after the warning, the last user message is the warning, not
    // the page: the index found first is kept).
    let subscribe = 0;
    const first: ScriptTurn = {
      respond: ({ userText }) => {
        subscribe = indexOf(userText, "Subscribe");
        return agentStep({ click: { index: subscribe } }, "Subscribing.");
      },
    };
    const again: ScriptTurn = { respond: () => agentStep({ click: { index: subscribe } }, "Subscribing again.") };
    h.mimo.llm.script([agentStep({ navigate: { url: effects } }, "Opening the page."), first, again, again, again]);
    const { taskId, outcome } = await run(`Subscribe to the newsletter at ${effects}`);
    assert.equal(outcome.status, "error", JSON.stringify(outcome));
    assert.equal(outcome.error?.code, "LOOP_DETECTED");
    assert.match(outcome.error!.message, /click on the same unchanged page 4 times in a row/);
    const ran = await clicks(taskId);
    assert.equal(ran.length, 3, "the fourth click never ran");
    // Each click was seen to change nothing, and the model was told so, then warned.
    for (const click of ran) assert.match(click.outcome?.warnings.join() ?? "", /no visible effect/);
    const bodies = h.mimo.llm.requests().slice(from).map((r) => JSON.stringify(r.body));
    assert.ok(bodies.some((b) => b.includes("<loop_warning>") && b.includes("3 times in a row")), "warned at the third");
    assert.ok(await pageAt(h, effects));
  });

  it("ends the run with BUDGET_EXCEEDED when a step takes it over its token budget, without running that step", { timeout: 90_000 }, async () => {
    const shop = `${h.a}/shop/index.html?budget`;
    h.mimo.llm.script([
      agentStep({ navigate: { url: shop } }, "Opening the shop."),
      { ...agentStep({ click: { index: 1 } }, "A long think."), usage: { input: 150_000, output: 20 } },
    ]);
    const { taskId, outcome } = await run(`Find a mug at ${shop}`);
    assert.equal(outcome.status, "error", JSON.stringify(outcome));
    assert.equal(outcome.error?.code, "BUDGET_EXCEEDED");
    assert.match(outcome.error!.message, /over its budget of 100000 \(MIMO_AGENT_MAX_TOKENS\)/);
    assert.equal((await clicks(taskId)).length, 0, "the step never ran");
  });
});
